"""What a 50 MB tool result costs a turn: stored size, sent size, loop stall, turn time.

Run ``python -m bench.tool_result_stall`` (``--unbounded`` adds the same turns
with ``max_result_chars=None``, the old behaviour's sizes). Each turn goes
through an :class:`AgentSession` over a :class:`SqliteStore` in a temporary
directory: a :class:`MockProvider` calls one tool that returns 50 MB (a str,
or a dict of rows whose JSON is 50 MB, from a sync and an async tool), then
answers. A ticker task sleeps 5 ms in a loop and records the longest gap
beyond its sleep while the turn runs. Rows with autosummary register the
plugin with ``SummaryConfig(max_context_tokens=128_000)``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    Message,
    SqliteStore,
    ToolRegistry,
    ToolUseBlock,
)
from agentcore.llm import LlmResponse
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore.tools import DEFAULT_MAX_RESULT_CHARS

SIZE = 50 * 1024 * 1024
ROUNDS = 3
TICK = 0.005


def big_text() -> str:
    words = ("status", "ok", "latency", "12ms", "request", "id", "42", "path", "/api/v1")
    line = " ".join(words) + "\n"
    return (line * (SIZE // len(line) + 1))[:SIZE]


def big_rows() -> dict[str, Any]:
    row = {"id": 0, "path": "/api/v1/items", "status": "ok", "latency_ms": 12.5}
    count = SIZE // 75  # about 75 characters of JSON a row
    return {"rows": [{**row, "id": index} for index in range(count)]}


async def longest_stall(work: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """(longest event-loop stall, seconds ``work`` took)."""
    longest = 0.0
    done = asyncio.Event()

    async def tick() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(TICK)
            now = time.perf_counter()
            longest = max(longest, now - last - TICK)
            last = now

    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0.02)
    start = time.perf_counter()
    try:
        await work()
    finally:
        took = time.perf_counter() - start
        done.set()
        await ticker
    return longest, took


def tool_call() -> LlmResponse:
    return LlmResponse(
        Message.assistant("", [ToolUseBlock("c1", "fetch", {})]), stop_reason="tool_use"
    )


async def one_case(
    payload: Any, *, is_async: bool, autosummary: bool, limit: int | None
) -> dict[str, float]:
    """The figures of ``ROUNDS`` turns whose tool returns ``payload``."""
    registry = ToolRegistry(max_result_chars=limit, timeout=None)
    if is_async:

        async def fetch_async() -> Any:
            """Fetch everything."""
            return payload

        registry.register(fetch_async, name="fetch")
    else:

        def fetch() -> Any:
            """Fetch everything."""
            return payload

        registry.register(fetch)
    stalls: list[float] = []
    times: list[float] = []
    stored = sent = 0.0
    for round_index in range(ROUNDS + 1):  # the first round warms up, unmeasured
        provider = MockProvider([tool_call(), "ok"])
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "bench.db"
            async with SqliteStore(path) as store:
                builder = AgentBuilder().provider(provider).tool_registry(registry).store(store)
                if autosummary:
                    from agentcore_autosummary import SummaryConfig

                    builder = builder.setting(
                        "summary_config", SummaryConfig(max_context_tokens=128_000)
                    )
                else:
                    builder = builder.load_plugins(False)
                session = AgentSession(Agent("a"), f"s{round_index}", builder.build())

                async def turn(session: AgentSession = session) -> None:
                    await session.submit_turn("fetch it")

                stall, took = await longest_stall(turn)
            files = [path, path.with_name(path.name + "-wal")]
            stored = sum(file.stat().st_size for file in files if file.exists()) / 1e6
        request = provider.calls_for("turn")[-1]
        sent = sum(len(message.text) for message in request.messages) / 1e6
        if round_index:
            stalls.append(stall)
            times.append(took)
    return {
        "stored_mb": stored,
        "sent_mchars": sent,
        "stall_ms": max(stalls) * 1000,
        "turn_s": statistics.median(times),
    }


async def main(unbounded: bool) -> None:
    get_token_counter(None)  # load the encoding first: loading is not what is measured
    text, rows = big_text(), big_rows()
    print(
        f"tool result: {len(text) / 1e6:.1f} MB str, or a dict of {len(rows['rows']):,} rows; "
        f"limit {DEFAULT_MAX_RESULT_CHARS:,} characters; {ROUNDS} turns a row (+1 warm-up)"
    )
    try:
        import agentcore_autosummary  # noqa: F401

        with_plugin: tuple[bool, ...] = (False, True)
    except ImportError:
        with_plugin = (False,)
    cases: list[tuple[str, Any, bool]] = [
        ("str, sync tool", text, False),
        ("dict, sync tool", rows, False),
        ("dict, async tool", rows, True),
    ]
    limits: list[int | None] = [DEFAULT_MAX_RESULT_CHARS, *([None] if unbounded else [])]
    print(
        f"| {'result':<18} | {'limit':<9} | {'autosummary':<11} | stored (DB MB) "
        "| sent (M chars) | longest stall | turn |"
    )
    print(f"|{'-' * 20}|{'-' * 11}|{'-' * 13}|---:|---:|---:|---:|")
    for label, payload, is_async in cases:
        for limit in limits:
            for plugin in with_plugin if limit is not None else (False,):
                figures = await one_case(
                    payload, is_async=is_async, autosummary=plugin, limit=limit
                )
                shown = f"{limit:,}" if limit is not None else "none"
                print(
                    f"| {label:<18} | {shown:<9} | {'yes' if plugin else 'no':<11} "
                    f"| {figures['stored_mb']:.2f} | {figures['sent_mchars']:.3f} "
                    f"| {figures['stall_ms']:.1f} ms | {figures['turn_s'] * 1000:.0f} ms |",
                    flush=True,
                )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--unbounded", action="store_true", help="also run turns with max_result_chars=None"
    )
    asyncio.run(main(parser.parse_args().unbounded))
