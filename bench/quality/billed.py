"""What a system's requests in one quality run would be billed, prompt caching included.

The turn requests (recorded by :class:`~bench.quality.systems.Requests`) and the
summary calls (recorded by the proxy) are fed to :class:`bench.billing.Bill` in the
order they were made, each summary call as part of the turn during which it ran, so
the prefix-cache models see what a provider would: a summary that starts with the
conversation's cached prefix is billed mostly as cache reads, a compaction that
rewrites the prefix makes the next turn write it again. Messages are counted by the
bench's :class:`~bench.measure.TokenMeter`. The turns' replies come from the script
and are the same for every system, so only the summaries' output is billed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.billing import Bill
from bench.measure import Pair, TokenMeter
from bench.quality.server import Call

PROVIDERS = ("openai", "anthropic")
"""Whose list prices (``bench.billing.PRICED_MODELS``) and prompt caches price a run."""


def billed(
    system: str,
    turns: Sequence[tuple[int, list[Pair]]],
    turn_times: Sequence[float],
    calls: Sequence[tuple[float, list[Pair], int]],
    meter: TokenMeter,
) -> dict[str, float]:
    """Dollars per provider's prices (``openai``, ``anthropic``) for one run.

    ``turns`` are ``(turn, messages)`` of each turn request with their times in
    ``turn_times``; ``calls`` are ``(time, messages, output tokens)`` of each summary call.
    """
    events: list[tuple[float, int, str, list[Pair], int]] = []
    for (turn, pairs), at in zip(turns, turn_times, strict=True):
        events.append((at, turn, "turn", pairs, 0))
    turn_of_time = sorted(zip(turn_times, (turn for turn, _ in turns), strict=True))
    for at, pairs, output in calls:
        before = [turn for time, turn in turn_of_time if time <= at]
        events.append((at, before[-1] if before else 0, "summary", pairs, output))
    bill = Bill(system)
    for _, turn, purpose, pairs, output in sorted(events, key=lambda event: event[0]):
        counts = [meter.message(pair) for pair in pairs]
        bill.add(turn, pairs, counts, purpose=purpose, output_tokens=output)
    figures: dict[str, Any] = bill.figures()
    return {provider: round(figures[provider]["dollars"], 4) for provider in PROVIDERS}


def summary_calls(calls: Sequence[Call], pairs_of: Any) -> list[tuple[float, list[Pair], int]]:
    """``(time, messages, output tokens)`` of each recorded summary call."""
    return [(call.started, pairs_of(call), call.completion_tokens or 0) for call in calls]
