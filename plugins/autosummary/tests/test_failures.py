"""Summaries under cancellation: isolated from their own calls, cancelled whole on close,
their cost stored with them."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    LlmRequest,
    SqliteStore,
    Usage,
)
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig, get_conversation_summary

MakeSession = Callable[..., AgentSession]


# A window just large enough for a summary request, with a watermark every turn reaches.
class SmallWindow(TypedDict):
    """The size fields of :data:`SMALL`, typed for ``SummaryConfig(**SMALL)``."""

    max_context_tokens: int
    max_summary_tokens: int
    keep_recent_tokens: int


SMALL: SmallWindow = {"max_context_tokens": 600, "max_summary_tokens": 32, "keep_recent_tokens": 10}
INLINE = SummaryConfig(trigger_token_ratio=0.02, **SMALL)
BACKGROUND = SummaryConfig(trigger_token_ratio=0.02, mode="background", **SMALL)


async def view(session: AgentSession) -> tuple[Any, ...]:
    """Turn index, history, slot config and cost of a session object."""
    slot = await session.get_slot()
    return (
        session.turn_index,
        await session.history(),
        slot.config,
        slot.version,
        dict(session.cost.breakdown()),
    )


async def resumed(session: AgentSession) -> tuple[Any, ...]:
    # A session with nothing stored yet starts in the mode it is given.
    fresh = AgentSession(session.agent, session.session_id, session.bundle, FocusedConfig())
    return await view(fresh)


def jittery(rng: random.Random) -> Callable[[LlmRequest], Any]:
    summaries = 0

    async def respond(request: LlmRequest) -> str:
        nonlocal summaries
        await asyncio.sleep(rng.uniform(0, 0.004))
        if request.purpose == "summary":
            summaries += 1
            return f"summary #{summaries}"
        return f"re: {request.messages[-1].text}"

    return respond


@pytest.mark.parametrize("config", [INLINE, BACKGROUND], ids=["inline", "background"])
async def test_turns_cancelled_at_random_points_with_summaries(
    agent: Agent, tmp_path: Path, config: SummaryConfig
) -> None:
    rng = random.Random(7)
    store = SqliteStore(tmp_path / "cancel.db")
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=jittery(rng)))
        .store(store)
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(agent, "c", bundle, FocusedConfig())
    counts = {
        "returned": 0,
        "cancelled": 0,
        "broken": 0,
        "lost_or_duplicated": 0,
        "first_stored": 0,
        "second_stored": 0,
    }
    for trial in range(50):
        before = len(await session.history())
        turns_before = session.turn_index
        # Two trials do not depend on the machine's speed: the first is cancelled before its
        # model replies, the second has a minute. The others land where the load puts them
        # (on a loaded machine all of them may come before the write).
        timeout = rng.uniform(0, 0.012)
        if trial < 2:
            timeout = (0.0, 60.0)[trial]
        try:
            await asyncio.wait_for(session.submit_turn(f"question {trial}"), timeout)
            counts["returned"] += 1
            expected = before + 2
            stored = True
        except asyncio.TimeoutError:
            # A turn whose store write had begun is stored whole before the cancel propagates.
            counts["cancelled"] += 1
            stored = session.turn_index > turns_before
            expected = before + 2 if stored else before
        if trial < 2:
            counts[("first_stored", "second_stored")[trial]] = int(stored)
        await session.aclose()  # let a background summary land before comparing
        live = await view(session)
        if live != await resumed(session):
            counts["broken"] += 1
        if len(live[1]) != expected:
            counts["lost_or_duplicated"] += 1
        try:
            await session.submit_turn(f"check {trial}")
        except Exception:
            counts["broken"] += 1
            session = AgentSession(agent, "c", bundle, FocusedConfig())
    await session.aclose()
    print(f"\ncancellation trials with {config.mode} summaries: {counts}")
    assert counts["broken"] == 0 and counts["lost_or_duplicated"] == 0
    assert counts["first_stored"] == 0 and counts["second_stored"] == 1
    assert await get_conversation_summary(session) is not None
    await store.close()


async def test_a_summary_call_that_raises_cancelled_error_is_a_failed_attempt(
    make_session: MakeSession,
) -> None:
    async def respond(request: LlmRequest) -> str:
        if request.purpose == "summary":
            raise asyncio.CancelledError()
        return "reply"

    session = make_session(MockProvider(responder=respond), summary=INLINE, mode=FocusedConfig())
    for turn in range(10):
        assert (await session.submit_turn(f"message number {turn}, long enough")).text == "reply"
    assert session.turn_index == 10 and len(await session.history()) == 20
    state = await session.get_session_data("autosummary/default")
    assert state["last_attempt_turn"] is not None and state["generation"] == 0
    await session.aclose()


async def test_aclose_cancel_pending_drops_a_summary_whole(agent: Agent, tmp_path: Path) -> None:
    started = asyncio.Event()

    async def respond(request: LlmRequest) -> str:
        if request.purpose == "summary":
            started.set()
            await asyncio.sleep(3600)
        return "reply"

    store = SqliteStore(tmp_path / "close.db")
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .store(store)
        .setting("summary_config", BACKGROUND)
        .build()
    )
    session = AgentSession(agent, "close", bundle, FocusedConfig())
    await session.submit_turn("a message long enough to trigger a summary " * 4)
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.wait_for(session.aclose(cancel_pending=True), 5)
    assert await get_conversation_summary(session) is None
    assert (await session.get_slot()).config.focused == FocusedConfig()
    assert await view(session) == await resumed(session)
    await store.close()


@pytest.mark.parametrize("config", [INLINE, BACKGROUND], ids=["inline", "background"])
async def test_the_last_summary_cost_survives_a_resume(
    agent: Agent, tmp_path: Path, config: SummaryConfig
) -> None:
    def respond(request: LlmRequest) -> Any:
        from agentcore import LlmResponse, Message

        if request.purpose == "summary":
            return LlmResponse(Message.assistant("the summary"), Usage(700, 37))
        return LlmResponse(Message.assistant("reply"), Usage(15, 4))

    store = SqliteStore(tmp_path / "cost.db")
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .store(store)
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(agent, "cost", bundle, FocusedConfig())
    await session.submit_turn("a message long enough to trigger a summary " * 4)
    await session.aclose()
    assert session.cost.total("summary") == Usage(700, 37)
    again = AgentSession(agent, "cost", bundle)
    await again.load()
    assert again.cost.breakdown() == session.cost.breakdown()
    await store.close()
