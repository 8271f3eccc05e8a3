"""A streamed turn abandoned mid-way leaves no span current and detaches cleanly."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable

import pytest
from opentelemetry import trace
from otel_helpers import Traces

from agentcore import AgentSession, LlmResponse, Message, ToolRegistry, ToolUseBlock
from agentcore.testing import MockProvider

MakeSession = Callable[..., AgentSession]
TRIALS = 20


def _detach_failures(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "Failed to detach context" in r.getMessage()]


SETTLE_ROUNDS = 5
"""The most collections :func:`_settle` makes (each one walks the whole heap)."""


async def _settle(traces: Traces, turns: int) -> None:
    """Collect the abandoned stream until ``turns`` turn spans have ended (bounded)."""
    for attempt in range(SETTLE_ROUNDS):  # The loop closes a collected generator soon after.
        if attempt:  # First without a collection: a stream no cycle holds is freed at once.
            gc.collect()
        await asyncio.sleep(0.01)
        if len(traces.named("invoke_agent")) >= turns:
            return


async def test_a_stream_dropped_mid_way_leaves_no_span_current(
    make_session: MakeSession, traces: Traces, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    current_after: list[object] = []
    for trial in range(TRIALS):
        session = make_session(MockProvider(["a long streamed reply"]), session_id=f"s{trial}")
        stream = session.submit_turn_stream("Hello")
        await stream.__anext__()  # The consumer takes one event, then walks away.
        del stream
        await _settle(traces, trial + 1)
        current_after.append(trace.get_current_span())
    assert _detach_failures(caplog) == []
    assert all(span is trace.INVALID_SPAN for span in current_after)
    turns = traces.named("invoke_agent")
    assert len(turns) == TRIALS  # Each abandoned turn's span was ended.


async def test_a_stream_closed_mid_way_leaves_no_span_current(
    make_session: MakeSession, traces: Traces, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for trial in range(TRIALS):
        session = make_session(MockProvider(["a long streamed reply"]), session_id=f"s{trial}")
        stream = session.submit_turn_stream("Hello")
        await stream.__anext__()
        assert trace.get_current_span() is trace.INVALID_SPAN  # Not between two events either.
        await stream.aclose()
        assert trace.get_current_span() is trace.INVALID_SPAN
    assert _detach_failures(caplog) == []
    assert len(traces.named("invoke_agent")) == TRIALS


async def test_a_stream_abandoned_in_another_task_leaves_its_consumer_clean(
    make_session: MakeSession, traces: Traces, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)

    async def consumer(session: AgentSession) -> object:
        stream = session.submit_turn_stream("Hello")
        await stream.__anext__()
        return trace.get_current_span()  # The task ends with the stream left open.

    for trial in range(TRIALS):
        session = make_session(MockProvider(["a long streamed reply"]), session_id=f"s{trial}")
        seen = await asyncio.create_task(consumer(session))
        assert seen is trace.INVALID_SPAN
        await _settle(traces, trial + 1)
    assert _detach_failures(caplog) == []
    assert len(traces.named("invoke_agent")) == TRIALS  # Each abandoned turn's span was ended.


async def test_a_streamed_turn_still_parents_its_calls_under_the_turn(
    make_session: MakeSession, traces: Traces
) -> None:
    session = make_session(MockProvider(["streamed"]))
    async for _ in session.submit_turn_stream("Hello"):
        pass
    turn, chat = traces.spans()
    assert chat.parent is not None and turn.context is not None
    assert chat.parent.span_id == turn.context.span_id


async def test_in_a_streamed_turn_the_tool_span_is_current_inside_the_tool(
    make_session: MakeSession, traces: Traces
) -> None:
    registry = ToolRegistry()
    seen: list[int] = []

    @registry.tool
    async def probe() -> str:
        """Report the current span."""
        seen.append(trace.get_current_span().get_span_context().span_id)
        return "done"

    provider = MockProvider(
        [
            LlmResponse(
                Message.assistant("", [ToolUseBlock("p", "probe")]), stop_reason="tool_use"
            ),
            "ok",
        ]
    )
    session = make_session(provider, tools=registry)
    async for _ in session.submit_turn_stream("probe"):
        assert trace.get_current_span() is trace.INVALID_SPAN
    (tool_span,) = traces.named("execute_tool probe")
    assert tool_span.context is not None
    assert seen == [tool_span.context.span_id]
    assert trace.get_current_span() is trace.INVALID_SPAN
