"""Why a run's turn requests pay the full input price at OpenAI: their uncached tokens by cause.

:mod:`bench.quality.billed` gives a run's dollars; this splits what OpenAI's
automatic cache (:class:`bench.billing.OpenAICache`) bills uncached in the turn
requests by why the request found no longer cached prefix, so two systems'
bills can be compared cause by cause (``python -m bench.quality.cost_shape
--causes``). Each turn request falls under the first cause that applies:

``under 1,024``
    The request is shorter than the least prompt OpenAI caches.
``first past 1,024``
    The turn request before it was shorter: nothing of it was cached.
``cache expired``
    The last request is older than the cache's entries (the bench's breaks).
``after a summary``
    A summary changed the context since the turn request before.
``recalled message``
    The turn request before sent a message opened by automatic recall, which
    this one sends without its part: the two differ from that message on.
``front changed``
    With no summary since the turn request before, the two differ within
    their first 1,024 tokens (a summary rewritten in place: agentcore's parts
    pruned of a value the verbatim tail replaced).
``extension``
    The rest: the tokens past the cached prefix, rounded to OpenAI's steps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bench.billing import (
    CALL_SECONDS,
    OPENAI_MIN_TOKENS,
    RECALLED_OPENING,
    TTL_SECONDS,
    Block,
    OpenAICache,
    turn_start,
)
from bench.measure import Pair, TokenMeter

CAUSES = (
    "under 1,024",
    "first past 1,024",
    "cache expired",
    "after a summary",
    "recalled message",
    "front changed",
    "extension",
)
"""Every cause, in the order they are tried."""


def uncached_by_cause(
    turns: Sequence[tuple[int, list[Pair]]],
    turn_times: Sequence[float],
    summary_times: Sequence[float],
    meter: TokenMeter,
) -> dict[str, int]:
    """The uncached input tokens of the turn requests ``turns`` (sent at ``turn_times``), by cause.

    ``summary_times`` are when the run's summary calls started, on the clock of
    ``turn_times``; the cache runs on the simulated clock of :class:`bench.billing.Bill`.
    It sees the turn requests alone (a summary request of a transcript shares no
    prefix with them), so its total can differ a little from the bill's.
    """
    cache = OpenAICache()
    totals: Counter[str] = Counter()
    previous: _Sent | None = None
    for (turn, pairs), at in zip(turns, turn_times, strict=True):
        counts = [meter.message(pair) for pair in pairs]
        same_turn = previous is not None and previous.turn == turn
        # The simulated clock of bench.billing.Bill: the calls of a turn CALL_SECONDS apart.
        now = previous.now + CALL_SECONDS if same_turn and previous else turn_start(turn)
        billed = cache.bill(_blocks(pairs, counts), now)
        sent = _Sent(turn, pairs, sum(counts), now, at)
        totals[_cause(sent, counts, previous, summary_times)] += billed.uncached
        previous = sent
    return {cause: totals[cause] for cause in CAUSES}


@dataclass(frozen=True)
class _Sent:
    turn: int
    pairs: list[Pair]
    tokens: int
    now: float
    """On the simulated clock."""
    at: float
    """On the run's clock, the one of ``summary_times``."""


def _blocks(pairs: Sequence[Pair], counts: Sequence[int]) -> list[Block]:
    return [Block(hash(pair), count) for pair, count in zip(pairs, counts, strict=True)]


def _cause(
    sent: _Sent, counts: Sequence[int], previous: _Sent | None, summary_times: Sequence[float]
) -> str:
    if sent.tokens < OPENAI_MIN_TOKENS:
        return "under 1,024"
    if previous is None or previous.tokens < OPENAI_MIN_TOKENS:
        return "first past 1,024"
    if sent.now - previous.now > TTL_SECONDS:
        return "cache expired"
    if any(previous.at < time <= sent.at for time in summary_times):
        return "after a summary"
    before, pairs = previous.pairs, sent.pairs
    differs = next(
        (index for index, (old, new) in enumerate(zip(before, pairs, strict=False)) if old != new),
        min(len(before), len(pairs)),
    )
    if differs < len(before) and before[differs][1].startswith(RECALLED_OPENING):
        return "recalled message"
    if sum(counts[:differs]) < OPENAI_MIN_TOKENS:
        return "front changed"
    return "extension"
