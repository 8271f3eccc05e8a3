"""``python -m bench.summary_counts``: how much tokenizing a summary turn does.

Counts every call of :meth:`agentcore.tokens.TokenCounter.count_text` (and
the characters it is given) and of ``cut_middle``, by the function of
agentcore or its plugin that asked, during:

- the summary turns of one session answered by an instant model, summarizing
  every few turns (``bench.turn_floor``'s "summarizing" config, in memory):
  the session holds about 60 messages when it summarizes;
- the first turn after enabling autosummary on 10,000 stored messages with
  ``max_summary_calls_per_turn=4`` (``bench.resume``'s backlog), the
  messages stored with their counts and without.

Counts, not time: the figures are the same from run to run. Run from the
repository root with the development environment; nothing here is part of
the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from agentcore.tokens import TokenCounter


class Tally:
    """Tokenizer calls and characters, in all and by the caller that asked."""

    def __init__(self) -> None:
        self.calls = 0
        self.chars = 0
        self.cuts = 0
        self.sent = 0
        """Characters of the summary requests sent meanwhile."""
        self.by_caller: Counter[str] = Counter()

    def reset(self) -> None:
        """Start counting afresh."""
        self.__init__()  # type: ignore[misc]


MOCK = "the mock provider's usage"
"""The caller named for MockProvider counting a request's usage, as a server would: left out."""


def _caller() -> str:
    """The first function outside agentcore/tokens.py and this module that is on the stack."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.endswith("agentcore/testing.py"):
            return MOCK
        if name.endswith("threading.py") or name.endswith("concurrent/futures/thread.py"):
            return "a worker thread (a long text)"
        if not name.endswith(("tokens.py", "summary_counts.py", "_token_text.py")):
            module = name.rsplit("/", 1)[-1].removesuffix(".py")
            return f"{module}.{frame.f_code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


@contextmanager
def counting() -> Iterator[Tally]:
    """Count every ``count_text`` and ``cut_middle`` call of every TokenCounter meanwhile."""
    tally = Tally()
    count_text = TokenCounter.count_text
    cut_middle = TokenCounter.cut_middle

    def counted(self: TokenCounter, text: str) -> int:
        if text:
            caller = _caller()
            if caller != MOCK:
                tally.calls += 1
                tally.chars += len(text)
                tally.by_caller[caller] += len(text)
        return count_text(self, text)

    def cut(self: TokenCounter, text: str, max_tokens: int) -> str:
        tally.cuts += 1
        return cut_middle(self, text, max_tokens)

    TokenCounter.count_text = counted  # type: ignore[method-assign]
    TokenCounter.cut_middle = cut  # type: ignore[method-assign]
    try:
        yield tally
    finally:
        TokenCounter.count_text = count_text  # type: ignore[method-assign]
        TokenCounter.cut_middle = cut_middle  # type: ignore[method-assign]


def callers(tally: Tally, top: int = 6) -> str:
    """The callers that tokenized most, with their share of the characters."""
    total = max(tally.chars, 1)
    return ", ".join(
        f"{name} {chars * 100 // total}%" for name, chars in tally.by_caller.most_common(top)
    )


async def summary_turns(turns: int) -> list[tuple[int, int, int, int, Tally]]:
    """Per summary turn: the messages held, tokenizer calls, characters, cuts, and the tally."""
    from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, InMemoryStore
    from agentcore_autosummary import SummaryConfig
    from bench.turn_floor import SYSTEM_PROMPT, InstantModel, user_text

    model = InstantModel()
    complete = model.complete
    sent = [0]

    async def recorded(request: Any) -> Any:
        if request.purpose != "turn":
            sent[0] += sum(len(message.text) for message in request.messages)
        return await complete(request)

    model.complete = recorded  # type: ignore[method-assign]
    config = SummaryConfig(max_context_tokens=2_000, max_summary_tokens=200)
    bundle = (
        AgentBuilder()
        .provider(model)
        .store(InMemoryStore())
        .load_plugins(True)
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(
        Agent("bench", system_prompt=SYSTEM_PROMPT), "s", bundle, FocusedConfig()
    )
    rows = []
    for index in range(turns):
        before = model.summaries
        sent[0] = 0
        with counting() as tally:
            await session.submit_turn(user_text(index))
        tally.sent = sent[0]
        if model.summaries != before:
            slot = await session.get_slot()
            rows.append((len(slot.messages), tally.calls, tally.chars, tally.cuts, tally))
    await session.aclose()
    return rows


async def backlog_turn(count: int, calls: int, counted: bool) -> tuple[int, Tally]:
    """The first turn after enabling autosummary on ``count`` stored messages."""
    from agentcore import AgentBuilder, AgentSession, FocusedConfig, InMemoryStore
    from agentcore.testing import MockProvider
    from agentcore_autosummary import SummaryConfig
    from bench.resume import AGENT, _instant_summarizer, populate

    store = InMemoryStore()
    await populate(store, "backlog", count, FocusedConfig(), counted=counted)
    provider = MockProvider(responder=_instant_summarizer)
    config = SummaryConfig(max_summary_calls_per_turn=calls, max_context_tokens=32_000)
    built = AgentBuilder().provider(provider).store(store).setting("summary_config", config).build()
    session = AgentSession(AGENT, "backlog", built)
    await session.load()
    with counting() as tally:
        await session.submit_turn("hello again")
    requests = provider.calls_for("summary")
    summaries = len(requests)
    tally.sent = sum(len(message.text) for request in requests for message in request.messages)
    await session.aclose()
    return summaries, tally


def report(label: str, tally: Tally, extra: str = "") -> None:
    """One row of the table."""
    print(
        f"| {label} | {extra} | {tally.sent:,} | {tally.calls:,} | {tally.chars:,} "
        f"({tally.chars / max(tally.sent, 1):.1f}×) | {tally.cuts} "
        f"| {callers(tally)} |",
        flush=True,
    )


async def main(count: int, turns: int) -> None:
    """Print the table."""
    print(
        "| turn | | characters sent in summary requests | tokenizer calls "
        "| characters tokenized (× sent) | cut_middle "
        "| characters by caller |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    rows = await summary_turns(turns)
    if rows:
        middle = sorted(rows, key=lambda row: row[2])[len(rows) // 2]
        messages = statistics.median(row[0] for row in rows)
        label = f"summary turn, instant model (median of {len(rows)})"
        report(label, middle[4], f"{messages:.0f} messages in the slot")
    for counted in (True, False):
        summaries, tally = await backlog_turn(count, 4, counted)
        stored = "counts stored" if counted else "no stored counts"
        report(
            f"first turn, {count:,}-message backlog, {stored}", tally, f"{summaries} summary calls"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backlog", type=int, default=10_000, help="messages in the backlog")
    parser.add_argument("--turns", type=int, default=200, help="turns of the summarizing session")
    args = parser.parse_args()
    work: Callable[[], Any] = lambda: main(args.backlog, args.turns)  # noqa: E731
    asyncio.run(work())
