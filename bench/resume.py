"""``python -m bench.resume``: what resuming a long session costs, and catching up a backlog.

Prints one table per measure:

- resume: time (median of several) and tracemalloc peak of resuming a
  session (a new :class:`~agentcore.AgentSession` on the stored id, up to the
  first request's messages) at 10, 1k, 10k and 50k stored messages, on
  InMemoryStore, SqliteStore and, when ``AGENTCORE_TEST_POSTGRES_DSN`` is
  set, PostgresStore. The slot is Focused with a summary covering all but
  the last 20 messages, the case a long-lived summarized conversation is in;
  a Full slot sends (so loads) every message and is measured once, at 50k;
- the full garbage-collection pause with the resumed session alive;
- per-turn overhead on the resumed session (an instant fake model);
- the first turn after enabling autosummary on 10k unsummarized messages:
  summary calls and time with an instant fake model.

Run from the repository root with the development environment:
``.venv/bin/python -m bench.resume`` (``--quick`` for smaller sizes). The
figures go to docs/benchmarks.md by hand; nothing here is part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    Message,
    SlotConfig,
    SqliteStore,
)
from agentcore._slot_config_json import config_to_json
from agentcore.slots import SlotMode
from agentcore.stores import MemoryStore, MessageAppend, StoreWrite
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter

SIZES = (10, 1_000, 10_000, 50_000)
QUICK_SIZES = (10, 1_000, 5_000)
RUNS = 21
AGENT = Agent("assistant", system_prompt="You are a helpful assistant.")
COUNTER = get_token_counter(AGENT.model)
WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "river", "flows")


def history(count: int) -> list[Message]:
    """``count`` alternating user and assistant messages of about 40 tokens each."""
    messages: list[Message] = []
    for i in range(count):
        text = f"message {i}: " + " ".join(WORDS[(i + j) % len(WORDS)] for j in range(36))
        messages.append(Message.user(text) if i % 2 == 0 else Message.assistant(text))
    return messages


async def populate(
    store: MemoryStore, session_id: str, count: int, mode: SlotMode, *, counted: bool = True
) -> None:
    """Store a session of ``count`` messages in one slot with ``mode``.

    ``counted``: each message carries its token count for the agent's counter,
    as a session stores them; without, as a store written before counts were
    stored (or read by a counter with another key) holds them.
    """
    messages = history(count)
    if counted:
        for message in messages:
            COUNTER.count_message(message)
    await store.write(
        StoreWrite(
            session_id,
            slot_configs={"default": config_to_json(SlotConfig(mode))},
            appends={"default": MessageAppend(0, messages)},
            expected_versions={"default": 0},
        )
    )


def summarized(count: int) -> FocusedConfig:
    """A Focused mode whose summary covers all but the last 20 of ``count`` messages."""
    return FocusedConfig(
        summary_override="The user and the assistant discussed foxes and rivers. " * 20,
        summary_covers=max(0, count - 20),
    )


def bundle(store: MemoryStore, provider: MockProvider | None = None) -> object:
    builder = AgentBuilder().store(store).load_plugins(False)
    builder.provider(provider or MockProvider(responder=lambda request: "ok"))
    return builder.build()


async def resume(store: MemoryStore, session_id: str) -> AgentSession:
    session = AgentSession(AGENT, session_id, bundle(store))  # type: ignore[arg-type]
    await session.load_messages()
    return session


async def timed(work: Callable[[], Awaitable[object]], runs: int = RUNS) -> float:
    """Median seconds of ``runs`` runs of ``work``, after one untimed warm-up run."""
    await work()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def peak_bytes(work: Callable[[], Awaitable[object]]) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        await work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def gc_pause() -> float:
    """Median seconds of a full collection."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        gc.collect()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def measure_store(name: str, store: MemoryStore, sizes: tuple[int, ...]) -> list[str]:
    rows = []
    for count in sizes:
        session_id = f"resume-{count}"
        await populate(store, session_id, count, summarized(count))

        async def once(session_id: str = session_id) -> None:
            await resume(store, session_id)

        seconds = await timed(once)
        peak = await peak_bytes(once)
        alive = await resume(store, session_id)
        pause = gc_pause()
        turn = await turn_overhead(store, session_id)
        del alive
        rows.append(
            f"| {name} | {count:,} | {seconds * 1000:.2f} ms | {peak / 1024:.0f} KiB "
            f"| {pause * 1000:.1f} ms | {turn * 1000:.2f} ms |"
        )
        print(rows[-1], flush=True)
    return rows


async def turn_overhead(store: MemoryStore, session_id: str, turns: int = 10) -> float:
    """Median seconds of a turn on the resumed session, with an instant model."""
    session = AgentSession(AGENT, session_id, bundle(store))  # type: ignore[arg-type]
    await session.load()
    times = []
    for i in range(turns):
        start = time.perf_counter()
        await session.submit_turn(f"turn {i}")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def full_slot(name: str, store: MemoryStore, count: int) -> str:
    """Resume a Full slot of ``count`` messages and count its context, counts stored or not."""
    row = []
    for counted in (True, False):
        session_id = f"full-{count}-{counted}"
        await populate(store, session_id, count, "full", counted=counted)

        async def once(session_id: str = session_id) -> None:
            await resume(store, session_id)

        if counted:
            seconds = await timed(once, runs=3)
            peak = await peak_bytes(once)
            row += [f"{seconds * 1000:.1f} ms", f"{peak / 1024 / 1024:.1f} MiB"]
        session = await resume(store, session_id)
        slot = await session.get_slot()
        start = time.perf_counter()
        await slot.count_context(COUNTER)
        row.append(f"{(time.perf_counter() - start) * 1000:.1f} ms")
        if counted:
            row.append(f"{gc_pause() * 1000:.1f} ms")
        del session, slot
    return f"| {name} | {count:,} | " + " | ".join(row) + " |"


def _instant_summarizer(request: LlmRequest) -> str:
    """An instant fake model: each summary names the newest words it read, so it is new.

    A constant reply would be a copy of the previous summary, which the gate refuses
    and asks for again before applying it: the bench would then measure the gate's
    retries, not the backlog.
    """
    if request.purpose != "summary":
        return "ok"
    newest = " ".join(request.messages[-1].text.split()[-6:]).strip("`")
    return f"The user and the assistant talked about foxes and rivers; last: {newest}."


async def backlog(count: int, calls: int) -> list[str]:
    """The first turns after enabling autosummary on ``count`` unsummarized messages."""
    from agentcore_autosummary import SummaryConfig

    rows = []
    for mode in ("inline", "background"):
        store = InMemoryStore()
        await populate(store, "backlog", count, FocusedConfig())
        provider = MockProvider(responder=_instant_summarizer)
        config = SummaryConfig(
            mode=mode, max_summary_calls_per_turn=calls, max_context_tokens=32_000
        )
        built = (
            AgentBuilder().provider(provider).store(store).setting("summary_config", config).build()
        )
        session = AgentSession(AGENT, "backlog", built)
        await session.load()
        start = time.perf_counter()
        await session.submit_turn("hello again")
        seconds = time.perf_counter() - start
        in_turn = len(provider.calls_for("summary"))
        left_out = _left_out(provider)
        turns = 1
        while _left_out(provider) and turns < 200:
            turns += 1
            await asyncio.sleep(0.01)  # the user's pause: an instant fake model never yields
            await session.submit_turn("hello again")
        await session.aclose()
        total = len(provider.calls_for("summary"))
        rows.append(
            f"| {mode} | {count:,} | {calls} | {in_turn} | {seconds * 1000:.0f} ms "
            f"| {left_out:,} | {turns} | {total} |"
        )
        print(rows[-1], flush=True)
    return rows


def _left_out(provider: MockProvider) -> int:
    """Messages the last turn request left out while their summary was pending (0: none)."""
    for message in provider.calls_for("turn")[-1].messages:
        if "still being summarized" in message.text:
            return int(message.text.strip("[").split()[0])
    return 0


async def main(quick: bool) -> None:
    sizes = QUICK_SIZES if quick else SIZES
    print("| store | messages | resume (median) | resume peak | full GC | turn |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        await measure_store("memory", InMemoryStore(), sizes)
        sqlite = SqliteStore(Path(tmp) / "bench.db")
        await measure_store("sqlite", sqlite, sizes)
        await sqlite.close()
        dsn = os.environ.get("AGENTCORE_TEST_POSTGRES_DSN")
        postgres = None
        if dsn:
            from agentcore.stores.postgres import PostgresStore

            postgres = PostgresStore(dsn)
            for session_id in await postgres.list_sessions():
                await postgres.delete_session(session_id)
            await measure_store("postgres", postgres, sizes)
        print()
        print(
            "| store | Full slot messages | resume (median) | resume peak "
            "| counting its context, counts stored | full GC "
            "| counting its context, no stored counts |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        print(await full_slot("memory", InMemoryStore(), sizes[-1]), flush=True)
        sqlite = SqliteStore(Path(tmp) / "full.db")
        print(await full_slot("sqlite", sqlite, sizes[-1]), flush=True)
        await sqlite.close()
        if postgres is not None:
            print(await full_slot("postgres", postgres, sizes[-1]), flush=True)
            await postgres.close()
    print()
    print(
        "| mode | messages | max calls per turn | summary calls in the first turn "
        "| first turn | messages its request left out | turns until none left out "
        "| summary calls in all |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    await backlog(2_000 if quick else 10_000, 4)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.quick)))
