"""What a user waits for a turn: to its first streamed token, and until the next turn can go.

The quality bench replays agentcore's turns through ``submit_turn_stream`` and
times each one from the submit: to the first text delta (what a user sees
first) and to the end of the stream (when the turn is stored and the next
message can be sent). A person's pause between turns (``--think`` seconds) is
slept after each turn, so a background summary has that long to run before
the next turn. A turn is a *summary turn* when a summary call to the model
was running at some point between its submit and its end: inline, the turn
that summarized; in the background, a turn that waited for a pending summary
to make room, or ran beside one.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agentcore import AgentSession, LlmRequest, LlmResponse, StreamEvent, TextDelta

Interval = tuple[float, float]


class TimedProvider:
    """A provider that records when each of its calls ran (``intervals``, perf_counter)."""

    def __init__(self, provider: Any) -> None:
        self._provider = provider
        self.intervals: list[Interval] = []
        self.running: list[float] = []

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """The wrapped provider's reply, timed."""
        start = time.perf_counter()
        self.running.append(start)
        try:
            response: LlmResponse = await self._provider.complete(request)
            return response
        finally:
            self.running.remove(start)
            self.intervals.append((start, time.perf_counter()))

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """The wrapped provider's stream, timed from the request to its last event."""
        start = time.perf_counter()
        self.running.append(start)
        try:
            async for event in self._provider.stream(request):
                yield event
        finally:
            self.running.remove(start)
            self.intervals.append((start, time.perf_counter()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._provider, name)

    def overlaps(self, start: float, end: float) -> bool:
        """Whether a summary call ran at some point between ``start`` and ``end``."""
        done = any(begin < end and finish > start for begin, finish in self.intervals)
        return done or any(begin < end for begin in self.running)


async def timed_turn(session: AgentSession, text: str, summaries: TimedProvider) -> dict[str, Any]:
    """Run one streamed turn; its waits in seconds and whether it was a summary turn."""
    start = time.perf_counter()
    first: float | None = None
    stream = session.submit_turn_stream(text)
    try:
        async for event in stream:
            if first is None and isinstance(event, TextDelta) and event.text:
                first = time.perf_counter()
    finally:
        await stream.aclose()
    end = time.perf_counter()
    return {
        "first_token": round((first if first is not None else end) - start, 4),
        "done": round(end - start, 4),
        "summary": summaries.overlaps(start, end),
    }


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile of ``values`` (0 for none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(math.ceil(share * len(ordered)), 1)
    return ordered[rank - 1]


WAIT_HEADER = [
    "System",
    "Turns",
    "Summary turns",
    "First token, plain turns: p50 / p95 / max",
    "First token, summary turns: p50 / p95 / max",
    "Turn done, plain turns: p50 / p95 / max",
    "Turn done, summary turns: p50 / p95 / max",
    "Facts retained (strict)",
]


def _spread(values: Sequence[float]) -> str:
    if not values:
        return "–"
    figures = (percentile(values, 0.5), percentile(values, 0.95), max(values))
    return " / ".join(f"{value:.2f} s" for value in figures)


def wait_row(title: str, waits: Sequence[dict[str, Any]], retained: str) -> list[str]:
    """One system's wait figures over every turn it ran."""
    plain = [wait for wait in waits if not wait["summary"]]
    summary = [wait for wait in waits if wait["summary"]]
    return [
        title,
        f"{len(waits)}",
        f"{len(summary)}",
        _spread([wait["first_token"] for wait in plain]),
        _spread([wait["first_token"] for wait in summary]),
        _spread([wait["done"] for wait in plain]),
        _spread([wait["done"] for wait in summary]),
        retained,
    ]


def wait_table(results: dict[str, dict[str, Any]], titles: dict[str, str]) -> list[str]:
    """The waits of every system that recorded them, over every conversation, as Markdown."""
    by_system: dict[str, list[dict[str, Any]]] = {}
    kept: dict[str, list[int]] = {}
    for systems in results.values():
        for key, result in systems.items():
            if result.get("status") == "ok" and result.get("waits"):
                by_system.setdefault(key, []).extend(result["waits"])
                counts = kept.setdefault(key, [0, 0])
                counts[0] += len(result.get("retained", ()))
                counts[1] += result.get("facts", 0)
    if not by_system:
        return []
    lines = ["| " + " | ".join(WAIT_HEADER) + " |", "|" + "---|" * len(WAIT_HEADER)]
    for key, waits in by_system.items():
        retained = f"{kept[key][0]} / {kept[key][1]}"
        lines.append("| " + " | ".join(wait_row(titles.get(key, key), waits, retained)) + " |")
    return [*lines, ""]
