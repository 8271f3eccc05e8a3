"""One loop timer serves the deadlines of all the turns of a session (Python 3.11+).

Each turn's deadline is watched by the session's :class:`DeadlineTimer`: a turn that
ends in time leaves the timer scheduled for its own deadline, and the next turn's,
which comes later, is served by the same timer once it fires. A turn that runs
past its deadline is still ended by it, on the first turn or any later one, on the
same event loop or on a new one.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from agentcore import Agent, AgentBuilder, AgentSession, LlmRequest, TurnTimeoutError
from agentcore._cancel import Deadline, DeadlineTimer
from agentcore.testing import MockProvider

TIMEOUT = 2.0
"""Generous: a quick turn must end well inside it on a loaded machine; a slow one hangs."""


def slow_on(*slow_calls: int) -> tuple[MockProvider, list[int]]:
    """A provider that hangs on the given (1-based) calls and answers the others."""
    calls: list[int] = []

    async def respond(request: LlmRequest) -> str:
        calls.append(len(calls) + 1)
        if len(calls) in slow_calls:
            await asyncio.sleep(3600)
        return "fast"

    return MockProvider(responder=respond), calls


def session_with(provider: MockProvider) -> AgentSession:
    builder = AgentBuilder().provider(provider).load_plugins(False).turn_timeout(TIMEOUT)
    return AgentSession(Agent("a"), "s", builder.build())


async def test_a_later_turn_past_its_deadline_is_ended_by_the_shared_timer() -> None:
    provider, _ = slow_on(4)
    session = session_with(provider)
    for _ in range(3):  # each leaves the timer scheduled for its own deadline
        assert (await session.submit_turn("quick")).text == "fast"
    with pytest.raises(TurnTimeoutError, match=r"turn_timeout of 2\.0 s"):
        await session.submit_turn("slow")
    assert session.turn_index == 3
    assert (await session.submit_turn("again")).text == "fast"


@pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="on Python 3.10 each deadline guard arms a timer of its own (no asyncio.timeout)",
)
async def test_turns_that_end_in_time_share_one_scheduled_timer() -> None:
    provider, _ = slow_on()
    session = session_with(provider)
    await session.submit_turn("first")
    timer: DeadlineTimer = session._turns._timer
    handle = timer._handle
    assert handle is not None
    for _ in range(5):
        await session.submit_turn("quick")
    assert timer._handle is handle  # not scheduled again, nor cancelled


def test_turns_on_new_event_loops_are_each_ended_by_their_deadline() -> None:
    """``submit_turn_sync`` runs each turn on a loop of its own: the timer follows."""
    provider, _ = slow_on(2, 4)
    session = session_with(provider)
    assert session.submit_turn_sync("quick").text == "fast"
    with pytest.raises(TurnTimeoutError):
        session.submit_turn_sync("slow")
    assert session.submit_turn_sync("quick").text == "fast"
    with pytest.raises(TurnTimeoutError):
        session.submit_turn_sync("slow")
    assert session.turn_index == 2


async def test_a_timer_scheduled_too_late_for_a_deadline_is_scheduled_again() -> None:
    """A deadline earlier than the one the timer waits for (a shorter timeout) still ends."""
    timer = DeadlineTimer()
    errors: list[str] = []

    def error() -> BaseException:
        errors.append("passed")
        return TimeoutError("deadline")

    late = Deadline(3600, error, timer=timer)
    async with late.guard():
        pass  # arms the timer for an hour from now
    early = Deadline(TIMEOUT, error, timer=timer)
    with pytest.raises(TimeoutError, match="deadline"):
        async with early.guard():
            await asyncio.sleep(3600)
    assert errors == ["passed"]
    assert timer._handle is None or timer._at <= early._when  # type: ignore[operator]


async def test_a_deadline_gone_leaves_the_timer_idle() -> None:
    timer = DeadlineTimer()
    deadline: Any = Deadline(0.001, lambda: TimeoutError(), timer=timer)
    async with deadline.guard():
        pass
    del deadline
    # The timer fires with nothing to watch and does nothing; polled, not timed.
    for _ in range(1000):
        if timer._handle is None:
            break
        await asyncio.sleep(0.01)
    assert timer._handle is None
