"""The spans of turns, model calls and tool calls, read back from the real OpenTelemetry SDK."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode
from otel_helpers import Traces

from agentcore import (
    AgentBuilder,
    AgentSession,
    ConfigError,
    FocusedConfig,
    InMemoryStore,
    LlmError,
    LlmRequest,
    LlmResponse,
    Message,
    ToolRegistry,
    ToolUseBlock,
    Usage,
    hookimpl,
)
from agentcore.plugins import create_plugin_manager, list_plugins
from agentcore.testing import MockProvider
from agentcore_autosummary import get_conversation_summary

MakeSession = Callable[..., AgentSession]


def attrs_of(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    found: int = span.context.span_id  # the SDK leaves ReadableSpan.context untyped
    return found


def summarizing(request: LlmRequest) -> str:
    return "They greeted each other." if request.purpose == "summary" else "Hello there!"


def test_the_plugin_is_found_through_its_entry_point() -> None:
    infos = {info.name: info for info in list_plugins(create_plugin_manager())}
    otel = infos["otel"]
    assert otel.distribution == "agentcore-otel" and otel.version == "0.3.0"
    assert {"after_model_call", "before_tool_call", "after_tool_call"} <= set(otel.hooks)
    assert {"on_turn_start", "on_turn_error", "post_turn_end"} <= set(otel.hooks)


def test_agentcore_plugins_lists_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcore.cli import main

    monkeypatch.delenv("AGENTCORE_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    assert main(["plugins"]) == 0
    listed = {entry["name"]: entry for entry in json.loads(capsys.readouterr().out)}
    assert listed["otel"]["distribution"] == "agentcore-otel"
    assert "after_model_call" in listed["otel"]["hooks"]


async def test_a_turn_is_a_span_with_its_model_call_as_a_child(
    make_session: MakeSession, traces: Traces
) -> None:
    provider = MockProvider(
        ["Hi!"], usage=Usage(120, 8, cached_input_tokens=100, cache_write_tokens=15)
    )
    session = make_session(provider)
    await session.submit_turn("Hello")
    turn, chat = traces.spans()
    assert turn.name == "invoke_agent helper" and turn.kind is SpanKind.INTERNAL
    assert attrs_of(turn) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "helper",
        "gen_ai.conversation.id": "chat-1",
        "session.id": "chat-1",
        "gen_ai.request.model": "mock-model",
        "agentcore.turn.index": 0,
        "agentcore.turn.streamed": False,
        "agentcore.slot.id": "default",
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 8,
        "gen_ai.usage.cache_read.input_tokens": 100,
        "gen_ai.usage.cache_creation.input_tokens": 15,
        "gen_ai.response.finish_reasons": ("stop",),
    }
    assert chat.name == "chat mock-model" and chat.kind is SpanKind.CLIENT
    assert parent_id(chat) == span_id(turn)
    assert chat.context is not None and turn.context is not None
    assert chat.context.trace_id == turn.context.trace_id
    assert attrs_of(chat) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "MockProvider",
        "gen_ai.request.model": "mock-model",
        "gen_ai.request.stream": False,
        "gen_ai.conversation.id": "chat-1",
        "session.id": "chat-1",
        "agentcore.request.purpose": "turn",
        "agentcore.turn.index": 0,
        "gen_ai.response.model": "mock-model",
        "gen_ai.response.finish_reasons": ("stop",),
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 8,
        "gen_ai.usage.cache_read.input_tokens": 100,
        "gen_ai.usage.cache_creation.input_tokens": 15,
    }
    assert turn.status.status_code is StatusCode.UNSET
    assert turn.start_time is not None and chat.start_time is not None
    assert turn.end_time is not None and chat.end_time is not None
    assert turn.start_time <= chat.start_time <= chat.end_time <= turn.end_time


async def test_a_summarizing_turn_shows_the_summary_call_under_the_turn(
    make_session: MakeSession, traces: Traces
) -> None:
    session = make_session(
        MockProvider(responder=summarizing),
        summary={
            "max_context_tokens": 600,
            "max_summary_tokens": 32,
            "keep_recent_tokens": 10,
            "trigger_token_ratio": 0.02,
        },
        mode=FocusedConfig(),
    )
    await session.submit_turn("Hi there! " + "This message crosses the tiny watermark. " * 4)
    assert await get_conversation_summary(session) == "They greeted each other."
    turn, turn_call, summarized, summary_call = traces.spans()
    assert turn.name == "invoke_agent helper"
    assert summarized.name == "summarize default" and parent_id(summarized) == span_id(turn)
    assert [attrs_of(s)["agentcore.request.purpose"] for s in (turn_call, summary_call)] == [
        "turn",
        "summary",
    ]
    assert parent_id(turn_call) == parent_id(summary_call) == span_id(turn)
    # The turn span covers the inline summary: it closes after every post_turn_end.
    assert turn.end_time is not None and summary_call.end_time is not None
    assert summary_call.end_time <= turn.end_time
    assert attrs_of(summary_call)["gen_ai.usage.output_tokens"] > 0
    assert (
        attrs_of(turn)["gen_ai.usage.input_tokens"]
        == attrs_of(turn_call)["gen_ai.usage.input_tokens"]
    )


async def test_a_background_summary_still_nests_under_its_turn(
    make_session: MakeSession, traces: Traces
) -> None:
    session = make_session(
        MockProvider(responder=summarizing, delay=0.01),
        summary={
            "max_context_tokens": 600,
            "max_summary_tokens": 32,
            "keep_recent_tokens": 10,
            "trigger_token_ratio": 0.02,
            "mode": "background",
        },
        mode=FocusedConfig(),
    )
    await session.submit_turn("Hi there! " + "This message crosses the tiny watermark. " * 4)
    await session.aclose()
    turn = traces.named("invoke_agent")[0]
    (summary_call,) = [
        s for s in traces.named("chat") if attrs_of(s)["agentcore.request.purpose"] == "summary"
    ]
    assert parent_id(summary_call) == span_id(turn)


async def test_tool_calls_are_spans_current_while_the_tool_runs(
    make_session: MakeSession, traces: Traces
) -> None:
    registry = ToolRegistry(timeout=30)

    @registry.tool
    def lookup(city: str) -> str:
        """Look the weather up."""
        with trace.get_tracer("weather-client").start_as_current_span("GET /weather"):
            return f"sunny in {city}"

    @registry.tool
    async def broken() -> str:
        """Always fails."""
        raise RuntimeError("backend down")

    calls = [ToolUseBlock("t1", "lookup", {"city": "Oslo"}), ToolUseBlock("t2", "broken")]
    provider = MockProvider(
        [LlmResponse(Message.assistant("", calls), stop_reason="tool_use"), "Sunny in Oslo."]
    )
    session = make_session(provider, tools=registry)
    await session.submit_turn("Weather in Oslo?")
    turn = traces.named("invoke_agent")[0]
    first_call, second_call = traces.named("chat")
    (lookup_span,) = traces.named("execute_tool lookup")
    (broken_span,) = traces.named("execute_tool broken")
    assert attrs_of(first_call)["gen_ai.response.finish_reasons"] == ("tool_call",)
    for span in (first_call, second_call, lookup_span, broken_span):
        assert parent_id(span) == span_id(turn)
    assert attrs_of(lookup_span) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.id": "t1",
        "gen_ai.tool.type": "function",
        "gen_ai.conversation.id": "chat-1",
        "session.id": "chat-1",
        "agentcore.turn.index": 0,
        "agentcore.tool.is_error": False,
    }
    assert lookup_span.status.status_code is StatusCode.UNSET
    assert broken_span.status.status_code is StatusCode.ERROR
    assert attrs_of(broken_span)["error.type"] == "RuntimeError"
    assert [event.name for event in broken_span.events] == ["exception"]
    assert broken_span.events[0].attributes is not None
    assert broken_span.events[0].attributes["exception.message"] == "backend down"


async def test_a_tool_span_is_the_current_span_inside_the_tool(
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
    await make_session(provider, tools=registry).submit_turn("probe")
    (tool_span,) = traces.named("execute_tool probe")
    assert seen == [span_id(tool_span)]
    # Outside the turn nothing stays current.
    assert not trace.get_current_span().get_span_context().is_valid


async def test_a_provider_error_is_recorded_on_the_call_and_the_turn(
    make_session: MakeSession, traces: Traces
) -> None:
    error = LlmError("upstream overloaded", status_code=529)
    session = make_session(MockProvider([error]))
    with pytest.raises(LlmError):
        await session.submit_turn("Hello")
    turn, chat = traces.spans()
    for span in (turn, chat):
        assert span.status.status_code is StatusCode.ERROR
        assert span.status.description == "upstream overloaded"
        assert attrs_of(span)["error.type"] == "LlmError"
        assert [event.name for event in span.events] == ["exception"]
    assert "gen_ai.usage.input_tokens" not in attrs_of(chat)
    assert not trace.get_current_span().get_span_context().is_valid


async def test_a_cancelled_turn_ends_its_spans(make_session: MakeSession, traces: Traces) -> None:
    session = make_session(MockProvider(["late"], delay=10))
    task = asyncio.ensure_future(session.submit_turn("Hello"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    turn, chat = traces.spans()
    assert attrs_of(turn)["error.type"] == attrs_of(chat)["error.type"] == "CancelledError"


async def test_a_streamed_turn_is_traced_like_a_plain_one(
    make_session: MakeSession, traces: Traces
) -> None:
    session = make_session(MockProvider(["streamed reply"]))
    async for _ in session.submit_turn_stream("Hello"):
        pass
    turn, chat = traces.spans()
    assert attrs_of(turn)["agentcore.turn.streamed"] is True
    assert attrs_of(chat)["gen_ai.request.stream"] is True
    assert parent_id(chat) == span_id(turn)
    assert turn.status.status_code is StatusCode.UNSET


async def test_an_abandoned_stream_closes_its_turn_span(
    make_session: MakeSession, traces: Traces
) -> None:
    session = make_session(MockProvider(["a long streamed reply"]))
    stream = session.submit_turn_stream("Hello")
    await stream.__anext__()
    await stream.aclose()
    turn, chat = traces.spans()
    assert attrs_of(turn)["error.type"] == "GeneratorExit"
    assert chat.status.status_code is StatusCode.ERROR


SECRET = "my card number is 4111"


async def test_no_content_is_recorded_unless_turned_on(
    make_session: MakeSession, traces: Traces
) -> None:
    await make_session(MockProvider(["noted"])).submit_turn(SECRET)
    for span in traces.spans():
        assert not any(SECRET in str(value) for value in attrs_of(span).values())
        assert not any(key.endswith(".messages") for key in attrs_of(span))


async def test_content_is_recorded_when_the_setting_is_on(
    make_session: MakeSession, traces: Traces
) -> None:
    registry = ToolRegistry()

    @registry.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text.upper()

    provider = MockProvider(
        [
            LlmResponse(
                Message.assistant("", [ToolUseBlock("e", "echo", {"text": "hi"})]),
                stop_reason="tool_use",
            ),
            "HI it is",
        ]
    )
    session = make_session(provider, tools=registry, otel_capture_content=True)
    await session.submit_turn(SECRET)
    turn = traces.named("invoke_agent")[0]
    first, second = traces.named("chat")
    (tool,) = traces.named("execute_tool")
    assert attrs_of(turn)["gen_ai.system_instructions"] == "You are helpful."
    assert attrs_of(turn)["gen_ai.input.messages"] == (
        '[{"role": "user", "parts": [{"type": "text", "content": "my card number is 4111"}]}]'
    )
    assert attrs_of(first)["gen_ai.output.messages"] == (
        '[{"role": "assistant", "parts": [{"type": "tool_call", "id": "e", "name": "echo", '
        '"arguments": {"text": "hi"}}], "finish_reason": "tool_call"}]'
    )
    assert '"type": "tool_call_response", "id": "e", "response": "HI"' in str(
        attrs_of(second)["gen_ai.input.messages"]
    )
    assert attrs_of(tool)["gen_ai.tool.call.arguments"] == '{"text": "hi"}'
    assert attrs_of(tool)["gen_ai.tool.call.result"] == "HI"
    assert '"finish_reason": "stop"' in str(attrs_of(turn)["gen_ai.output.messages"])


async def test_the_environment_variable_turns_content_on_when_no_setting_is_given(
    make_session: MakeSession, traces: Traces, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "True")
    await make_session(MockProvider(["noted"])).submit_turn(SECRET)
    assert SECRET in str(attrs_of(traces.named("chat")[0])["gen_ai.input.messages"])
    traces.exporter.clear()
    session = make_session(MockProvider(["noted"]), otel_capture_content=False)
    await session.submit_turn(SECRET)
    assert "gen_ai.input.messages" not in attrs_of(traces.named("chat")[0])


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("otel_capture_content", "yes", "must be True or False"),
        ("otel_capture_content", 1, "must be True or False"),
        ("otel_tracer_provider", object(), "must be an opentelemetry.trace.TracerProvider"),
    ],
)
def test_bad_settings_fail_the_build(name: str, value: object, problem: str) -> None:
    builder = AgentBuilder().provider(MockProvider()).load_plugins(True).setting(name, value)
    with pytest.raises(ConfigError, match=rf"invalid value for the setting '{name}'.*{problem}"):
        builder.build()


async def test_without_an_sdk_the_plugin_records_nothing_and_changes_nothing(agent: Any) -> None:
    bundle = AgentBuilder().provider(MockProvider(["fine"])).load_plugins(True).build()
    session = AgentSession(agent, "no-sdk", bundle)
    assert (await session.submit_turn("Hello")).text == "fine"
    assert not trace.get_current_span().get_span_context().is_valid


def test_the_attribute_names_are_the_semantic_conventions() -> None:
    from opentelemetry.semconv._incubating.attributes import (
        error_attributes,
        gen_ai_attributes,
        session_attributes,
    )

    from agentcore_otel import attributes

    known = {
        value
        for module in (gen_ai_attributes, session_attributes, error_attributes)
        for value in vars(module).values()
        if isinstance(value, str)
    }
    ours = {
        value
        for name, value in vars(attributes).items()
        if name.isupper() and isinstance(value, str) and "." in value
    }
    assert {name for name in ours if not name.startswith("agentcore.")} <= known
    operations = {member.value for member in gen_ai_attributes.GenAiOperationNameValues}
    assert {
        attributes.OPERATION_CHAT,
        attributes.OPERATION_INVOKE_AGENT,
        attributes.OPERATION_EXECUTE_TOOL,
    } <= operations


class SlowTurnEnd:
    """A plugin whose ``on_turn_end`` takes long, so a caller may cancel the turn there."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()

    @hookimpl
    async def on_turn_end(self, ctx: Any) -> None:
        self.entered.set()
        await asyncio.sleep(10)


async def test_a_turn_cancelled_in_its_end_hooks_still_ends_its_span(
    agent: Any, traces: Traces
) -> None:
    slow = SlowTurnEnd()
    builder = AgentBuilder().provider(MockProvider(["stored reply"])).store(InMemoryStore())
    builder.load_plugins(True).plugin(slow).setting("otel_tracer_provider", traces.provider)
    session = AgentSession(agent, "chat-1", builder.build(), "full")
    task = asyncio.ensure_future(session.submit_turn("Hello"))
    await asyncio.wait_for(slow.entered.wait(), 5)
    task.cancel()
    # The turn was stored before its end hooks: the cancel reaches the caller and the
    # stored reply is on the session.
    with pytest.raises(asyncio.CancelledError):
        await task
    assert session.last_reply is not None and session.last_reply.text == "stored reply"
    turn, chat = traces.spans()
    assert turn.end_time is not None
    assert turn.status.status_code is StatusCode.UNSET
    assert parent_id(chat) == span_id(turn)
    assert not trace.get_current_span().get_span_context().is_valid
