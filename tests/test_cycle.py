from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcore.cycle import (
    CycleResult,
    LlmCycle,
    StreamNotFinishedError,
    ToolResultEvent,
    round_limit_text,
)
from agentcore.errors import ConfigError, LlmError, MalformedResponseError, RateLimitError
from agentcore.llm import (
    LlmRequest,
    LlmResponse,
    ResponseComplete,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from agentcore.messages import Message, ToolUseBlock
from agentcore.testing import MockProvider
from agentcore.tools import ToolRegistry
from agentcore.usage import Usage

USER = Message.user("What is the weather in Paris?")


def tool_reply(*calls: ToolUseBlock, text: str = "", usage: Usage | None = None) -> LlmResponse:
    return LlmResponse(Message.assistant(text, calls), usage, "tool_use")


def weather_registry(log: list[str] | None = None) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    async def get_weather(city: str) -> str:
        """Get the weather of a city."""
        if log is not None:
            log.append(city)
        return f"sunny in {city}"

    return registry


def assert_every_call_answered(messages: Sequence[Message]) -> None:
    """Each assistant tool call is followed at once by its results, in call order."""
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        calls = message.tool_calls
        if message.role == "assistant" and calls:
            results = messages[index : index + len(calls)]
            assert [m.role for m in results] == ["tool"] * len(calls)
            assert [m.tool_call_id for m in results] == [c.id for c in calls]
            index += len(calls)
        else:
            assert message.role != "tool", "a tool result that answers no call"


class ScriptedStreamProvider:
    """A provider whose stream yields given events and records when it is closed."""

    def __init__(self, rounds: list[list[StreamEvent]]) -> None:
        self.rounds = rounds
        self.requests: list[LlmRequest] = []
        self.closed = 0

    async def complete(self, request: LlmRequest) -> LlmResponse:
        raise NotImplementedError

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        try:
            for event in self.rounds.pop(0):
                await asyncio.sleep(0)
                yield event
        finally:
            self.closed += 1


class NoUsageProvider:
    """A provider that reports no usage."""

    def __init__(self, replies: list[LlmResponse]) -> None:
        self.replies = replies

    async def complete(self, request: LlmRequest) -> LlmResponse:
        return self.replies.pop(0)

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        response = await self.complete(request)
        yield ResponseComplete(response)


# -- configuration -----------------------------------------------------------------


@pytest.mark.parametrize("rounds", [0, -1, True, 2.5, "3"])
def test_max_tool_rounds_is_validated(rounds: Any) -> None:
    with pytest.raises(ConfigError, match="max_tool_rounds must be an int >= 1"):
        LlmCycle(MockProvider([]), max_tool_rounds=rounds)
    with pytest.raises(ValueError):
        LlmCycle(MockProvider([]), max_tool_rounds=rounds)


def test_other_settings_are_validated() -> None:
    with pytest.raises(ConfigError, match="provider must implement LlmProvider"):
        LlmCycle(object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_tokens"):
        LlmCycle(MockProvider([]), max_tokens=0)
    with pytest.raises(ConfigError, match="purpose"):
        LlmCycle(MockProvider([]), purpose="")


def test_a_provider_whose_methods_are_set_per_instance_is_checked_per_instance() -> None:
    class Bare:
        pass

    served = MockProvider(["hi"])
    with_methods = Bare()
    with_methods.complete = served.complete  # type: ignore[attr-defined]
    with_methods.stream = served.stream  # type: ignore[attr-defined]
    for _ in range(3):
        LlmCycle(with_methods)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="provider must implement LlmProvider"):
            LlmCycle(Bare())  # type: ignore[arg-type]


# -- submit_messages ----------------------------------------------------------------


async def test_submit_messages_makes_one_call() -> None:
    provider = MockProvider(["Hello!"], usage=Usage(10, 5))
    cycle = LlmCycle(provider, model="m-1", max_tokens=100, purpose="summary")
    result = await cycle.submit_messages([USER])
    assert len(provider.calls) == 1
    request = provider.calls[0]
    assert (request.messages, request.tools) == ((USER,), ())
    assert (request.model, request.max_tokens, request.purpose) == ("m-1", 100, "summary")
    assert result.new_messages == (Message.assistant("Hello!"),)
    assert result.final_message == Message.assistant("Hello!")
    assert result.response.text == "Hello!"
    assert (result.usage, result.calls, result.round_limit_reached) == (Usage(10, 5), 1, False)


async def test_submit_messages_offers_tools_but_runs_none() -> None:
    call = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    provider = MockProvider([tool_reply(call)], usage=Usage(1, 1))
    spec = weather_registry().specs()[0]
    result = await LlmCycle(provider).submit_messages([USER], tools=[spec])
    assert provider.calls[0].tools == (spec,)
    assert provider.calls[0].purpose == "turn"
    assert result.new_messages == (Message.assistant("", [call]),)
    assert result.calls == 1


# -- submit_with_tools -----------------------------------------------------------


async def test_tool_loop_round_trip() -> None:
    log: list[str] = []
    registry = weather_registry(log)
    call = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    provider = MockProvider(
        [tool_reply(call, text="Checking.", usage=Usage(10, 5)), "It is sunny in Paris."],
        usage=Usage(20, 7),
    )
    result = await LlmCycle(provider, model="m").submit_with_tools([USER], registry)

    assistant_call = Message.assistant("Checking.", [call])
    tool_result = Message.tool_result("c1", "sunny in Paris")
    final = Message.assistant("It is sunny in Paris.")
    assert log == ["Paris"]
    assert result.new_messages == (assistant_call, tool_result, final)
    assert result.final_message == final
    assert result.response.text == "It is sunny in Paris."
    assert result.usage == Usage(30, 12)
    assert result.calls == 2
    assert not result.round_limit_reached
    assert [r.messages for r in provider.calls] == [(USER,), (USER, assistant_call, tool_result)]
    assert all(r.tools == tuple(registry.specs()) for r in provider.calls)
    assert all(r.model == "m" and r.purpose == "turn" for r in provider.calls)


async def test_calls_without_usage_count_as_zero() -> None:
    registry = weather_registry()
    call = ToolUseBlock("c1", "get_weather", {"city": "Oslo"})
    provider = NoUsageProvider(
        [tool_reply(call), LlmResponse(Message.assistant("Done."), Usage(4, 2))]
    )
    result = await LlmCycle(provider).submit_with_tools([USER], registry)
    assert result.usage == Usage(4, 2)
    assert result.calls == 2


async def test_tool_errors_go_back_to_the_model() -> None:
    registry = weather_registry()
    calls = [
        ToolUseBlock("c1", "no_such_tool", {}),
        ToolUseBlock("c2", "get_weather", {"town": "Paris"}),
    ]
    provider = MockProvider([tool_reply(*calls), "Sorry."], usage=Usage(1, 1))
    result = await LlmCycle(provider).submit_with_tools([USER], registry)
    errors = result.new_messages[1:3]
    assert [m.is_error for m in errors] == [True, True]
    assert "unknown tool 'no_such_tool'" in errors[0].text
    assert "missing required argument 'city'" in errors[1].text
    assert result.final_message.text == "Sorry."


async def test_parallel_tool_calls_in_one_reply() -> None:
    registry = ToolRegistry()
    both_running = asyncio.Event()
    running = 0

    @registry.tool
    async def fetch(url: str, delay: float) -> str:
        nonlocal running
        running += 1
        if running == 2:
            both_running.set()
        await asyncio.wait_for(both_running.wait(), 2)
        await asyncio.sleep(delay)
        return f"page {url}"

    calls = [
        ToolUseBlock("a", "fetch", {"url": "one", "delay": 0.05}),
        ToolUseBlock("b", "fetch", {"url": "two", "delay": 0.0}),
    ]
    provider = MockProvider([tool_reply(*calls), "Both fetched."], usage=Usage(1, 1))
    result = await LlmCycle(provider).submit_with_tools([USER], registry)
    assert [(m.role, m.tool_call_id, m.text) for m in result.new_messages] == [
        ("assistant", None, ""),
        ("tool", "a", "page one"),
        ("tool", "b", "page two"),
        ("assistant", None, "Both fetched."),
    ]
    assert_every_call_answered(result.new_messages)


async def test_round_limit_stops_and_answers_every_call() -> None:
    log: list[str] = []
    registry = weather_registry(log)
    counter = 0

    def always_tools(request: LlmRequest) -> LlmResponse:
        nonlocal counter
        counter += 1
        return tool_reply(
            ToolUseBlock(f"x{counter}", "get_weather", {"city": f"C{counter}"}),
            ToolUseBlock(f"y{counter}", "get_weather", {"city": f"D{counter}"}),
        )

    provider = MockProvider(responder=always_tools, usage=Usage(2, 1))
    result = await LlmCycle(provider, max_tool_rounds=2).submit_with_tools([USER], registry)

    assert result.calls == 3 == len(provider.calls)
    assert log == ["C1", "D1", "C2", "D2"]  # two rounds ran, the third was refused
    assert result.round_limit_reached
    assert result.usage == Usage(6, 3)
    assert len(result.new_messages) == 9
    assert_every_call_answered(result.new_messages)
    refused = result.new_messages[-2:]
    assert [m.tool_call_id for m in refused] == ["x3", "y3"]
    assert all(m.is_error for m in refused)
    assert refused[0].text == "tool round limit (2) reached; the call was not run"
    assert refused[0].text == round_limit_text(2)
    assert result.final_message.tool_calls[0].id == "x3"
    assert result.response.stop_reason == "tool_use"


async def test_round_limit_of_one() -> None:
    call = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    again = ToolUseBlock("c2", "get_weather", {"city": "Rome"})
    provider = MockProvider([tool_reply(call), tool_reply(again)], usage=Usage(1, 1))
    result = await LlmCycle(provider, max_tool_rounds=1).submit_with_tools(
        [USER], weather_registry()
    )
    assert result.calls == 2
    assert [m.text for m in result.new_messages if m.role == "tool"] == [
        "sunny in Paris",
        round_limit_text(1),
    ]


async def test_provider_error_propagates() -> None:
    provider = MockProvider([LlmError("down")])
    with pytest.raises(LlmError, match="down"):
        await LlmCycle(provider).submit_messages([USER])

    call = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    provider = MockProvider([tool_reply(call), RateLimitError("slow down")], usage=Usage(1, 1))
    with pytest.raises(RateLimitError):
        await LlmCycle(provider).submit_with_tools([USER], weather_registry())
    assert len(provider.calls) == 2


async def test_cancelling_the_loop_cancels_running_tools() -> None:
    registry = ToolRegistry()
    started = asyncio.Event()
    cancelled = asyncio.Event()

    @registry.tool
    async def wait_forever() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    provider = MockProvider([tool_reply(ToolUseBlock("c1", "wait_forever"))], usage=Usage(1, 1))
    task = asyncio.ensure_future(LlmCycle(provider).submit_with_tools([USER], registry))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(cancelled.wait(), 1)


@settings(max_examples=40, deadline=None)
@given(
    plan=st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=6),
    limit=st.integers(min_value=1, max_value=4),
)
def test_no_tool_call_is_ever_left_unanswered(plan: list[int], limit: int) -> None:
    """Whatever the model asks for, history holds a result for every call."""
    replies: list[str | LlmResponse] = []
    for round_number, count in enumerate(plan):
        calls = [
            ToolUseBlock(f"r{round_number}c{i}", "get_weather", {"city": str(i)})
            for i in range(count)
        ]
        replies.append(tool_reply(*calls) if calls else "done")
    if isinstance(replies[-1], LlmResponse):
        replies.append("done")

    async def run() -> CycleResult:
        provider = MockProvider(replies, usage=Usage(1, 1))
        cycle = LlmCycle(provider, max_tool_rounds=limit)
        return await cycle.submit_with_tools([USER], weather_registry())

    result = asyncio.run(run())
    assert_every_call_answered(result.new_messages)
    tool_rounds = sum(1 for m in result.new_messages if m.tool_calls)
    assert tool_rounds <= limit + 1
    assert result.calls == sum(1 for m in result.new_messages if m.role == "assistant")
    assert result.round_limit_reached == bool(result.final_message.tool_calls)


# -- streaming ---------------------------------------------------------------------


async def test_stream_with_tools_yields_every_round() -> None:
    log: list[str] = []
    registry = weather_registry(log)
    call = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    provider = MockProvider(
        [tool_reply(call, text="Let me check."), "Sunny."], usage=Usage(3, 2), chunk_size=5
    )
    stream = LlmCycle(provider).stream_with_tools([USER], registry)
    events = [event async for event in stream]

    tool_result = Message.tool_result("c1", "sunny in Paris")
    final = Message.assistant("Sunny.")
    assert events[:6] == [
        TextDelta("Let m"),
        TextDelta("e che"),
        TextDelta("ck."),
        ToolCallDelta(call),
        ToolResultEvent(tool_result, call),
        TextDelta("Sunny"),
    ]
    assert events[6] == TextDelta(".")
    assert isinstance(events[7], ResponseComplete)
    assert events[7].response.message == final
    assert len(events) == 8
    assert sum(isinstance(e, ResponseComplete) for e in events) == 1
    assert "".join(e.text for e in events) == "Let me check.Sunny."
    assert log == ["Paris"]

    result = stream.result
    assert result.new_messages == (Message.assistant("Let me check.", [call]), tool_result, final)
    assert result.usage == Usage(6, 4)
    assert result.calls == 2
    assert result.response == events[7].response
    assert provider.calls[1].messages == (USER, *result.new_messages[:2])
    assert provider.calls[0].tools == tuple(registry.specs())


async def test_stream_matches_submit() -> None:
    def script() -> list[str | LlmResponse]:
        return [
            tool_reply(
                ToolUseBlock("a", "get_weather", {"city": "Paris"}),
                ToolUseBlock("b", "get_weather", {"city": "Rome"}),
            ),
            tool_reply(ToolUseBlock("c", "get_weather", {"city": "Oslo"})),
            "All sunny.",
        ]

    submitted = await LlmCycle(MockProvider(script(), usage=Usage(1, 1))).submit_with_tools(
        [USER], weather_registry()
    )
    stream = LlmCycle(MockProvider(script(), usage=Usage(1, 1))).stream_with_tools(
        [USER], weather_registry()
    )
    events = [event async for event in stream]
    assert stream.result == submitted
    results = [e.message for e in events if isinstance(e, ToolResultEvent)]
    assert sorted(results, key=lambda m: m.tool_call_id or "") == [
        m for m in submitted.new_messages if m.role == "tool"
    ]


async def test_stream_round_limit() -> None:
    call = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    again = ToolUseBlock("c2", "get_weather", {"city": "Rome"})
    provider = MockProvider([tool_reply(call), tool_reply(again)], usage=Usage(1, 1))
    stream = LlmCycle(provider, max_tool_rounds=1).stream_with_tools([USER], weather_registry())
    events = [event async for event in stream]
    assert [type(e).__name__ for e in events] == [
        "ToolCallDelta",
        "ToolResultEvent",
        "ToolCallDelta",
        "ToolResultEvent",
        "ResponseComplete",
    ]
    refusal = events[3]
    assert isinstance(refusal, ToolResultEvent)
    assert refusal.call == again
    assert refusal.message == Message.tool_result("c2", round_limit_text(1), is_error=True)
    assert stream.result.round_limit_reached
    assert_every_call_answered(stream.result.new_messages)


async def test_stream_without_registry_is_one_call() -> None:
    call = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    provider = MockProvider([tool_reply(call, text="Hm.")], usage=Usage(1, 1))
    stream = LlmCycle(provider, purpose="side").stream_with_tools([USER])
    events = [event async for event in stream]
    assert [type(e).__name__ for e in events] == ["TextDelta", "ToolCallDelta", "ResponseComplete"]
    assert len(provider.calls) == 1
    request = provider.calls[0]
    assert (request.messages, request.tools, request.purpose) == ((USER,), (), "side")
    assert stream.result.new_messages == (Message.assistant("Hm.", [call]),)


async def test_stream_result_before_exhaustion_raises() -> None:
    provider = MockProvider(["Hello there, streaming."], usage=Usage(1, 1), chunk_size=4)
    stream = LlmCycle(provider).stream_with_tools([USER], weather_registry())
    with pytest.raises(StreamNotFinishedError, match="has not finished"):
        _ = stream.result
    first = await stream.__anext__()
    assert first == TextDelta("Hell")
    with pytest.raises(StreamNotFinishedError, match="iterate it to the end"):
        _ = stream.result
    rest = [event async for event in stream]
    assert isinstance(rest[-1], ResponseComplete)
    assert stream.result.final_message.text == "Hello there, streaming."


async def test_stream_provider_error_propagates() -> None:
    call = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    provider = MockProvider([tool_reply(call), LlmError("down")], usage=Usage(1, 1))
    stream = LlmCycle(provider).stream_with_tools([USER], weather_registry())
    seen: list[Any] = []
    with pytest.raises(LlmError, match="down"):
        async for event in stream:
            seen.append(event)
    assert [type(e).__name__ for e in seen] == ["ToolCallDelta", "ToolResultEvent"]
    with pytest.raises(StreamNotFinishedError, match="stopped with LlmError"):
        _ = stream.result


async def test_stream_without_response_complete_is_malformed() -> None:
    provider = ScriptedStreamProvider([[TextDelta("half a reply")]])
    stream = LlmCycle(provider).stream_with_tools([USER])
    with pytest.raises(MalformedResponseError, match="without a ResponseComplete"):
        async for _ in stream:
            pass
    assert provider.closed == 1


async def test_closing_the_stream_early_closes_the_provider_stream() -> None:
    reply = LlmResponse(Message.assistant("abc"), Usage(1, 1))
    provider = ScriptedStreamProvider(
        [[TextDelta("a"), TextDelta("b"), TextDelta("c"), ResponseComplete(reply)]]
    )
    async with LlmCycle(provider).stream_with_tools([USER]) as stream:
        assert await stream.__anext__() == TextDelta("a")
    assert provider.closed == 1
    with pytest.raises(StreamNotFinishedError):
        _ = stream.result


async def test_intermediate_response_complete_events_are_swallowed() -> None:
    call = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    first = tool_reply(call, usage=Usage(2, 2))
    last = LlmResponse(Message.assistant("ok"), Usage(3, 3))
    provider = ScriptedStreamProvider(
        [[ToolCallDelta(call), ResponseComplete(first)], [TextDelta("ok"), ResponseComplete(last)]]
    )
    stream = LlmCycle(provider).stream_with_tools([USER], weather_registry())
    events = [event async for event in stream]
    assert events[-1] == ResponseComplete(last)
    assert sum(isinstance(e, ResponseComplete) for e in events) == 1
    assert stream.result.usage == Usage(5, 5)
    assert provider.closed == 2
    assert provider.requests[1].tools == (
        ToolSpec(
            "get_weather", "Get the weather of a city.", weather_registry().specs()[0].parameters
        ),
    )


async def test_stream_reports_results_as_they_finish_and_stores_them_in_call_order() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def nap(delay: float) -> float:
        await asyncio.sleep(delay)
        return delay

    calls = [
        ToolUseBlock("slow", "nap", {"delay": 0.05}),
        ToolUseBlock("fast", "nap", {"delay": 0.0}),
    ]
    provider = MockProvider([tool_reply(*calls), "done"], usage=Usage(1, 1))
    stream = LlmCycle(provider).stream_with_tools([USER], registry)
    events = [event async for event in stream]
    finished = [e.message.tool_call_id for e in events if isinstance(e, ToolResultEvent)]
    assert finished == ["fast", "slow"]
    stored = [m.tool_call_id for m in stream.result.new_messages if m.role == "tool"]
    assert stored == ["slow", "fast"]


async def test_cancelling_a_stream_cancels_its_running_tools() -> None:
    registry = ToolRegistry()
    started: list[str] = []
    cancelled: list[str] = []

    @registry.tool
    async def wait_forever(label: str) -> None:
        started.append(label)
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(label)
            raise

    calls = [
        ToolUseBlock("a", "wait_forever", {"label": "a"}),
        ToolUseBlock("b", "wait_forever", {"label": "b"}),
    ]
    provider = MockProvider([tool_reply(*calls)], usage=Usage(1, 1))
    stream = LlmCycle(provider).stream_with_tools([USER], registry)

    async def consume() -> None:
        async for _ in stream:
            pass

    task = asyncio.ensure_future(consume())
    while len(started) < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(10):
        await asyncio.sleep(0)
    assert sorted(cancelled) == ["a", "b"]
    with pytest.raises(StreamNotFinishedError):
        _ = stream.result


def test_a_cycle_builds_the_request_its_constructor_would() -> None:
    from agentcore.output import OutputSpec

    output = OutputSpec.of({"type": "object", "properties": {"n": {"type": "integer"}}})
    cycle = LlmCycle(
        MockProvider(responder=lambda request: "ok"),
        model="m",
        max_tokens=64,
        temperature=0.5,
        stop=["END"],
        purpose="index",
        cache_key="session-1",
        tool_choice="required",
        output=output,
    )
    history = [Message.user("hi")]
    tools = [ToolSpec("lookup", "Look a key up.", {"type": "object", "properties": {}})]
    for first in (True, False):
        built = cycle.request(history, tools, first=first)
        assert built == LlmRequest(
            history,
            tools,
            "m",
            64,
            "index",
            temperature=0.5,
            stop=("END",),
            cache_key="session-1",
            tool_choice="required" if first else None,
            output=output,
        )
        assert type(built.messages) is tuple and type(built.tools) is tuple


def test_an_empty_cache_key_is_refused_when_the_cycle_is_made() -> None:
    with pytest.raises((ConfigError, TypeError, ValueError), match="cache_key"):
        LlmCycle(MockProvider(responder=lambda request: "ok"), cache_key="")


async def test_with_calls_keeps_the_settings_and_swaps_the_provider_and_callbacks() -> None:
    first = MockProvider(responder=lambda r: "first")
    second = MockProvider(responder=lambda r: "second")
    prepared: list[int] = []

    async def prepare(added: Sequence[Message]) -> list[Message]:
        prepared.append(len(added))
        return [USER]

    cycle = LlmCycle(
        first,
        model="m",
        max_tokens=50,
        temperature=0.5,
        stop=["END"],
        purpose="turn",
        max_tool_rounds=3,
        cache_key="k",
        tool_choice="auto",
    )
    copy = cycle.with_calls(second, prepare=prepare, on_overflow=None, tool_hooks=None)
    assert copy == LlmCycle(
        second,
        model="m",
        max_tokens=50,
        temperature=0.5,
        stop=["END"],
        purpose="turn",
        max_tool_rounds=3,
        prepare=prepare,
        cache_key="k",
        tool_choice="auto",
    )
    assert cycle.provider is first and cycle.prepare is None  # the original is unchanged
    result = await copy.submit_messages([])
    assert result.final_message.text == "second" and prepared == [0]
    request = second.calls_for("turn")[-1]
    assert (request.model, request.max_tokens, request.stop, request.cache_key) == (
        "m",
        50,
        ("END",),
        "k",
    )
    with pytest.raises(ConfigError, match="provider must implement LlmProvider"):
        cycle.with_calls(object(), prepare=None, on_overflow=None, tool_hooks=None)  # type: ignore[arg-type]
