"""The call hooks at the edges: cancellation, abandoned streams, failing hooks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    LlmResponse,
    Message,
    ToolRegistry,
    ToolUseBlock,
    TurnContext,
    hookimpl,
)
from agentcore.calls import ModelCallInfo, ToolCallInfo
from agentcore.testing import MockProvider

MakeSession = Callable[..., AgentSession]


class _Recorder:
    def __init__(self) -> None:
        self.model_calls: list[ModelCallInfo] = []
        self.tool_calls: list[tuple[str, ToolCallInfo]] = []

    @hookimpl
    def after_model_call(self, ctx: TurnContext, call: ModelCallInfo) -> None:
        self.model_calls.append(call)

    @hookimpl
    def before_tool_call(self, ctx: TurnContext, call: ToolCallInfo) -> None:
        self.tool_calls.append(("before", call))

    @hookimpl
    def after_tool_call(self, ctx: TurnContext, call: ToolCallInfo) -> None:
        self.tool_calls.append(("after", call))


async def test_a_cancelled_turn_reports_its_running_tool_call_as_cancelled(agent: Agent) -> None:
    started = asyncio.Event()
    registry = ToolRegistry()

    @registry.tool
    async def wait() -> str:
        """Wait for a long time."""
        started.set()
        await asyncio.sleep(30)
        return "late"

    provider = MockProvider(
        [LlmResponse(Message.assistant("", [ToolUseBlock("w", "wait")]), stop_reason="tool_use")]
    )
    recorder = _Recorder()
    bundle = (
        AgentBuilder()
        .provider(provider)
        .tool_registry(registry)
        .plugin(recorder)
        .load_plugins(False)
        .build()
    )
    session = AgentSession(agent, "s", bundle)
    task = asyncio.ensure_future(session.submit_turn("wait please"))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [kind for kind, _ in recorder.tool_calls] == ["before", "after"]
    _, finished = recorder.tool_calls[1]
    assert isinstance(finished.error, asyncio.CancelledError) and finished.result is None


async def test_a_stream_closed_before_its_reply_is_complete_reports_the_call(
    make_session: MakeSession,
) -> None:
    recorder = _Recorder()
    provider = MockProvider(["a long reply in many small chunks"], chunk_size=2)
    session = make_session(provider, plugins=(recorder,))
    stream = session.submit_turn_stream("hello")
    await stream.__anext__()
    await stream.aclose()
    (call,) = recorder.model_calls
    assert call.streamed and call.response is None
    assert isinstance(call.error, GeneratorExit)


async def test_a_streamed_call_is_reported_before_its_final_event_is_delivered(
    make_session: MakeSession,
) -> None:
    recorder = _Recorder()
    session = make_session(MockProvider(["streamed"]), plugins=(recorder,))
    stream = session.submit_turn_stream("hello")
    seen_before_final = None
    async for event in stream:
        if type(event).__name__ == "ResponseComplete":
            seen_before_final = len(recorder.model_calls)
    assert seen_before_final == 1
    assert recorder.model_calls[0].response is not None
    assert recorder.model_calls[0].response.text == "streamed"


async def test_a_failing_call_hook_is_logged_and_changes_nothing(
    make_session: MakeSession, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        @hookimpl
        async def after_model_call(self, ctx: TurnContext, call: ModelCallInfo) -> None:
            raise RuntimeError("meter offline")

    session = make_session(MockProvider(["reply"]), plugins=(Broken(),))
    with caplog.at_level(logging.ERROR, logger="agentcore.plugins"):
        assert (await session.submit_turn("hello")).text == "reply"
    assert "failed in after_model_call (session=s1, turn=0)" in caplog.text
    assert session.turn_index == 1


async def test_the_turn_provider_forwards_attributes_and_is_never_wrapped_twice(
    make_session: MakeSession,
) -> None:
    from agentcore.call_hooks import HookedProvider

    providers: list[object] = []

    class Spy:
        @hookimpl
        def on_turn_start(self, ctx: TurnContext) -> None:
            providers.append(ctx.provider)

    inner = MockProvider(["reply"], model="mock-model")
    session = make_session(inner, plugins=(Spy(),))
    await session.submit_turn("hello")
    (hooked,) = providers
    assert isinstance(hooked, HookedProvider) and hooked.wrapped is inner
    assert hooked.model == "mock-model"
    pm = session.bundle.plugin_manager
    assert HookedProvider(hooked, pm, providers[0]).wrapped is inner  # type: ignore[arg-type]
