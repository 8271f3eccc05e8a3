"""How long counting one 10 MB message blocks the event loop: before and after.

Run ``python -m bench.loop_block``. A ticker task sleeps 1 ms in a loop and
records the longest gap between its wake-ups while a turn with a 10 MB user
message runs through an :class:`AgentSession` with autosummary (the message is
refused before any call: it cannot fit the window). "before" counts the same
message synchronously, as the plugin did on the event loop; "after" is the
turn as it runs now, counting large texts in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from agentcore import Agent, AgentBuilder, AgentSession, ContextWindowExceededError, Message
from agentcore.testing import MockProvider
from agentcore.tokens import count_tokens, get_token_counter
from agentcore_autosummary import SummaryConfig

SIZE = 10 * 1024 * 1024
ROUNDS = 5


async def longest_block(work: Callable[[], Awaitable[object]]) -> float:
    """Seconds of the longest event-loop stall while ``work`` runs."""
    longest = 0.0
    done = asyncio.Event()

    async def tick() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            longest = max(longest, now - last - 0.001)
            last = now

    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0.01)
    try:
        await work()
    finally:
        done.set()
        await ticker
    return longest


def message() -> str:
    words = ("status", "ok", "latency", "12ms", "request", "id", "42", "path", "/api/v1")
    text = " ".join(words[i % len(words)] for i in range(SIZE // 6))
    return text[:SIZE]


async def main() -> None:
    text = message()
    get_token_counter(None)  # load the encoding first: loading is not what is measured

    async def before() -> None:
        count_tokens([Message.user(text)])

    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=lambda request: "ok"))
        .setting("summary_config", SummaryConfig(max_context_tokens=128_000))
        .build()
    )
    session = AgentSession(Agent("a"), "big", bundle)
    await session.submit_turn("warm up")  # plugins loaded, store and counters ready

    async def after() -> None:
        with contextlib.suppress(ContextWindowExceededError):
            await session.submit_turn(text)

    print(f"message: {len(text) / 1e6:.1f} MB, {ROUNDS} rounds each")

    async def idle() -> None:
        await asyncio.sleep(1.0)

    rows = (
        ("idle loop, for scale (machine noise)", idle),
        ("before (counted on the event loop)", before),
        ("after (the turn through AgentSession)", after),
    )
    for label, work in rows:
        blocks = sorted([await longest_block(work) for _ in range(ROUNDS)])
        print(
            f"{label}: longest block median {blocks[ROUNDS // 2] * 1000:.1f} ms, "
            f"max {blocks[-1] * 1000:.1f} ms"
        )


if __name__ == "__main__":
    asyncio.run(main())
