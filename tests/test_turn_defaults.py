"""A turn deadline by default, and background work that is not lost in silence."""

from __future__ import annotations

import asyncio
import logging
import warnings

import pytest

from agentcore import (
    DEFAULT_TURN_TIMEOUT,
    Agent,
    AgentBuilder,
    AgentSession,
    TurnTimeoutError,
)
from agentcore.testing import MockProvider


def builder() -> AgentBuilder:
    return AgentBuilder().provider(MockProvider(["ok"])).load_plugins(False)


def test_every_turn_has_a_generous_deadline_by_default() -> None:
    assert DEFAULT_TURN_TIMEOUT == 600
    assert builder().build().config.turn_timeout == DEFAULT_TURN_TIMEOUT
    assert builder().turn_timeout(None).build().config.turn_timeout is None
    assert builder().turn_timeout(30).build().config.turn_timeout == 30


async def test_a_deadline_turned_off_lets_a_slow_turn_finish(agent: Agent) -> None:
    bundle = (
        AgentBuilder()
        .provider(MockProvider(["slow but fine"], delay=0.2))
        .load_plugins(False)
        .turn_timeout(None)
        .build()
    )
    session = AgentSession(agent, "no-deadline", bundle)
    assert (await session.submit_turn("hi")).text == "slow but fine"


async def test_the_deadline_cuts_a_turn_that_hangs(agent: Agent) -> None:
    bundle = (
        AgentBuilder()
        .provider(MockProvider(["never"], delay=3600))
        .load_plugins(False)
        .turn_timeout(0.2)
        .build()
    )
    session = AgentSession(agent, "hang", bundle)
    with pytest.raises(TurnTimeoutError):
        await asyncio.wait_for(session.submit_turn("hi"), 60)
    assert session.turn_index == 0 and await session.history() == []


def session_with_pending_work(agent: Agent, session_id: str) -> tuple[AgentSession, object]:
    bundle = AgentBuilder().provider(MockProvider(["ok"])).load_plugins(False).build()
    return AgentSession(agent, session_id, bundle), asyncio.sleep(3600)


def test_leaving_asyncio_run_with_pending_background_work_warns(
    agent: Agent, caplog: pytest.LogCaptureFixture
) -> None:
    kept: list[AgentSession] = []  # held, so the warning is the loop's, not the collector's

    async def main() -> None:
        session, work = session_with_pending_work(agent, "left-open")
        kept.append(session)
        session.run_in_background(work)  # type: ignore[arg-type]
        await session.submit_turn("hi")

    expected = pytest.warns(ResourceWarning, match=r"session 'left-open'.*aclose\(\)")
    with caplog.at_level(logging.WARNING, logger="agentcore"), expected:
        asyncio.run(main())
    assert "session 'left-open'" in caplog.text and "aclose()" in caplog.text


@pytest.mark.parametrize("drain", ["aclose", "async with", "cancel_pending"])
def test_a_drained_session_leaves_asyncio_run_quietly(
    agent: Agent, caplog: pytest.LogCaptureFixture, drain: str
) -> None:
    done: list[str] = []

    async def short_work() -> None:
        await asyncio.sleep(0.01)
        done.append("work")

    async def main() -> None:
        session, work = session_with_pending_work(agent, "drained")
        work.close()  # type: ignore[attr-defined]
        if drain == "async with":
            async with session:
                session.run_in_background(short_work())
            return
        session.run_in_background(short_work() if drain == "aclose" else asyncio.sleep(3600))
        await session.aclose(cancel_pending=drain == "cancel_pending")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(main())
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert "cancelled before it finished" not in caplog.text
    assert done == ([] if drain == "cancel_pending" else ["work"])


async def test_a_deadline_reached_after_the_store_write_returns_the_stored_turn(
    agent: Agent, caplog: pytest.LogCaptureFixture
) -> None:
    from agentcore import TurnContext, hookimpl

    class HangingEndHook:
        @hookimpl
        async def on_turn_end(self, ctx: TurnContext) -> None:
            await asyncio.sleep(3600)

    bundle = (
        AgentBuilder()
        .provider(MockProvider(["stored"]))
        .load_plugins(False)
        .plugin(HangingEndHook())
        .turn_timeout(0.2)
        .build()
    )
    session = AgentSession(agent, "late", bundle)
    # The deadline's own cancel is the library's: it cuts the end hooks, the caller
    # gets the turn that was stored.
    reply = await asyncio.wait_for(session.submit_turn("hi"), 60)
    assert reply.text == "stored" and session.last_reply == reply
    assert session.turn_index == 1
    assert "cancelled in its end hooks" in caplog.text
