"""Structured output, tool choice and reasoning on both providers' wires (httpx.MockTransport)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentcore import Agent, AgentBuilder, AgentSession, SqliteStore, ToolRegistry
from agentcore.errors import BadRequestError
from agentcore.llm import LlmRequest, ResponseComplete, StreamEvent, TextDelta, ToolSpec
from agentcore.messages import Message, ReasoningBlock, TextBlock, ToolUseBlock
from agentcore.output import OutputSpec, parse_output
from agentcore.providers import AnthropicProvider, OpenAIProvider


@dataclasses.dataclass
class Weather:
    city: str
    celsius: float


WEATHER = OutputSpec.of(Weather)
LOOKUP = ToolSpec("lookup", "Look a city up.", {"type": "object", "properties": {}})


class Wire:
    """A MockTransport that records request bodies and answers with queued replies."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.replies: list[httpx.Response] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        return self.replies.pop(0)

    def json(self, payload: dict[str, Any]) -> None:
        self.replies.append(httpx.Response(200, json=payload))

    def sse(self, events: list[tuple[str | None, Any]]) -> None:
        lines = []
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            lines.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
        self.replies.append(
            httpx.Response(
                200,
                content="".join(lines).encode(),
                headers={"content-type": "text/event-stream"},
            )
        )

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))


@pytest.fixture
def wire() -> Wire:
    return Wire()


def openai(wire: Wire) -> OpenAIProvider:
    return OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", http_client=wire.client())


def anthropic(wire: Wire) -> AnthropicProvider:
    return AnthropicProvider(
        "claude-x",
        base_url="http://127.0.0.1:9",
        api_key="sk-ant-test-key-0123456789",
        cache="off",
        http_client=wire.client(),
    )


def ask(**fields: Any) -> LlmRequest:
    return LlmRequest([Message.user("weather in Oslo?")], **fields)


async def drain(events: AsyncIterator[StreamEvent]) -> tuple[list[str], ResponseComplete]:
    texts, last = [], None
    async for event in events:
        if isinstance(event, TextDelta):
            texts.append(event.text)
        if isinstance(event, ResponseComplete):
            last = event
    assert last is not None
    return texts, last


def openai_reply(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
        ],
    }


def openai_chunks(deltas: list[dict[str, Any]]) -> list[tuple[str | None, Any]]:
    events: list[tuple[str | None, Any]] = [
        (None, {"model": "m", "choices": [{"index": 0, "delta": delta}]}) for delta in deltas
    ]
    events.append(
        (None, {"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    )
    events.append((None, "[DONE]"))
    return events


# -- OpenAI-compatible -------------------------------------------------------------


async def test_openai_sends_response_format_and_the_reply_parses(wire: Wire) -> None:
    wire.json(openai_reply({"content": '{"city": "Oslo", "celsius": -3.5}'}))
    spec = OutputSpec.of(Weather, description="The weather.", strict=True)
    response = await openai(wire).complete(ask(output=spec))
    assert wire.bodies[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "Weather",
            "schema": dict(spec.schema),
            "description": "The weather.",
            "strict": True,
        },
    }
    assert "tool_choice" not in wire.bodies[0]  # Sent only with tools.
    assert parse_output(response.message, Weather) == Weather("Oslo", -3.5)


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("lookup", {"type": "function", "function": {"name": "lookup"}}),
    ],
)
async def test_openai_tool_choice(wire: Wire, choice: str, sent: Any) -> None:
    wire.json(openai_reply({"content": "ok"}))
    await openai(wire).complete(ask(tools=[LOOKUP], tool_choice=choice))
    assert wire.bodies[0]["tool_choice"] == sent


async def test_a_tool_choice_naming_no_offered_tool_is_refused_before_sending(wire: Wire) -> None:
    with pytest.raises(BadRequestError, match=r"names the tool 'weather'.*tools: 'lookup'"):
        await openai(wire).complete(ask(tools=[LOOKUP], tool_choice="weather"))
    with pytest.raises(BadRequestError, match="names the tool 'weather'"):
        await anthropic(wire).complete(ask(tools=[LOOKUP], tool_choice="weather"))
    assert wire.bodies == []


async def test_openai_reasoning_content_is_kept_and_never_sent_back(wire: Wire) -> None:
    wire.json(openai_reply({"reasoning_content": "Oslo is cold.", "content": "Cold."}))
    provider = openai(wire)
    reply = (await provider.complete(ask())).message
    assert reply.content == (ReasoningBlock("Oslo is cold."), TextBlock("Cold."))
    assert (reply.text, reply.reasoning) == ("Cold.", "Oslo is cold.")
    wire.json(openai_reply({"reasoning": "Via OpenRouter.", "content": "Still cold."}))
    follow_up = LlmRequest([Message.user("weather?"), reply, Message.user("and now?")])
    second = (await provider.complete(follow_up)).message
    assert second.reasoning == "Via OpenRouter."
    assert wire.bodies[1]["messages"][1] == {"role": "assistant", "content": "Cold."}


async def test_openai_streamed_reasoning_and_structured_output(wire: Wire) -> None:
    wire.sse(
        openai_chunks(
            [
                {"role": "assistant", "reasoning_content": "Think"},
                {"reasoning_content": "ing."},
                {"content": '{"city": "Oslo", '},
                {"content": '"celsius": 2}'},
            ]
        )
    )
    texts, complete = await drain(openai(wire).stream(ask(output=WEATHER)))
    assert wire.bodies[0]["response_format"]["json_schema"]["name"] == "Weather"
    assert texts == ['{"city": "Oslo", ', '"celsius": 2}']
    message = complete.response.message
    assert message.reasoning == "Thinking."
    assert WEATHER.parse(message) == Weather("Oslo", 2.0)


# -- Anthropic ---------------------------------------------------------------------


def anthropic_reply(content: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": content,
        "stop_reason": stop,
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }


async def test_anthropic_forces_the_output_tool_and_gives_its_input_as_text(wire: Wire) -> None:
    wire.json(
        anthropic_reply(
            [
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Weather",
                    "input": {"city": "Oslo", "celsius": 1},
                }
            ],
            stop="tool_use",
        )
    )
    response = await anthropic(wire).complete(ask(output=WEATHER))
    body = wire.bodies[0]
    assert body["tools"] == [
        {
            "name": "Weather",
            "description": "Give your final answer by calling this tool; its input is the answer.",
            "input_schema": dict(WEATHER.schema),
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "Weather"}
    assert response.message.tool_calls == ()
    assert response.stop_reason == "end_turn"
    assert WEATHER.parse(response.message) == Weather("Oslo", 1.0)


async def test_anthropic_output_with_other_tools_requires_some_tool(wire: Wire) -> None:
    wire.json(
        anthropic_reply(
            [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}], "tool_use"
        )
    )
    response = await anthropic(wire).complete(ask(tools=[LOOKUP], output=WEATHER))
    body = wire.bodies[0]
    assert [tool["name"] for tool in body["tools"]] == ["lookup", "Weather"]
    assert body["tool_choice"] == {"type": "any"}
    assert response.stop_reason == "tool_use"
    assert response.message.tool_calls == (ToolUseBlock("t1", "lookup", {}),)


async def test_anthropic_output_named_like_a_tool_is_refused(wire: Wire) -> None:
    spec = OutputSpec.of(Weather, name="lookup")
    with pytest.raises(BadRequestError, match="output schema 'lookup' has the name of one"):
        await anthropic(wire).complete(ask(tools=[LOOKUP], output=spec))


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        ("lookup", {"type": "tool", "name": "lookup"}),
    ],
)
async def test_anthropic_tool_choice(wire: Wire, choice: str, sent: Any) -> None:
    wire.json(anthropic_reply([{"type": "text", "text": "ok"}]))
    await anthropic(wire).complete(ask(tools=[LOOKUP], tool_choice=choice))
    assert wire.bodies[0]["tool_choice"] == sent


def event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"type": kind, **fields}


def delta(index: int, **fields: Any) -> tuple[str, dict[str, Any]]:
    return event("content_block_delta", index=index, delta=fields)


async def test_anthropic_streams_the_output_tool_as_text_and_keeps_thinking(wire: Wire) -> None:
    wire.sse(
        [
            event("message_start", message={"model": "claude-x", "usage": {"input_tokens": 4}}),
            event("content_block_start", index=0, content_block={"type": "thinking"}),
            delta(0, type="thinking_delta", thinking="Cold "),
            delta(0, type="thinking_delta", thinking="there."),
            delta(0, type="signature_delta", signature="SIG"),
            event("content_block_stop", index=0),
            event(
                "content_block_start",
                index=1,
                content_block={"type": "tool_use", "id": "t1", "name": "Weather", "input": {}},
            ),
            delta(1, type="input_json_delta", partial_json='{"city": "Oslo",'),
            delta(1, type="input_json_delta", partial_json=' "celsius": -1}'),
            event("content_block_stop", index=1),
            event("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 9}),
            event("message_stop"),
        ]
    )
    texts, complete = await drain(anthropic(wire).stream(ask(output=WEATHER)))
    assert texts == ['{"city": "Oslo",', ' "celsius": -1}']
    response = complete.response
    assert response.stop_reason == "end_turn"
    assert response.message.content == (
        ReasoningBlock("Cold there.", signature="SIG"),
        TextBlock('{"city": "Oslo", "celsius": -1}'),
    )
    assert WEATHER.parse(response.message) == Weather("Oslo", -1.0)


async def test_anthropic_sends_signed_thinking_back_and_leaves_unsigned_out(wire: Wire) -> None:
    wire.json(anthropic_reply([{"type": "text", "text": "ok"}]))
    call = ToolUseBlock("t1", "lookup", {})
    history = [
        Message.user("weather?"),
        Message("assistant", [ReasoningBlock("from elsewhere"), TextBlock("Hm.")]),
        Message.user("again?"),
        Message(
            "assistant", [ReasoningBlock("mine", signature="S"), ReasoningBlock("", data="D"), call]
        ),
        Message.tool_result("t1", "sunny"),
    ]
    await anthropic(wire).complete(LlmRequest(history, [LOOKUP]))
    turns = wire.bodies[0]["messages"]
    assert turns[1]["content"] == [{"type": "text", "text": "Hm."}]
    assert turns[3]["content"] == [
        {"type": "thinking", "thinking": "mine", "signature": "S"},
        {"type": "redacted_thinking", "data": "D"},
        {"type": "tool_use", "id": "t1", "name": "lookup", "input": {}},
    ]


# -- parsing errors ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It is cold.", "the model's reply is not JSON of the output schema 'Weather'"),
        (
            '{"city": "Oslo"}',
            "does not match the output schema 'Weather': missing required field 'celsius'",
        ),
        (
            '{"city": "Oslo", "celsius": "cold"}',
            "field 'celsius' must be a number, got string 'cold'",
        ),
        ('{"city": "Oslo", "celsius": 1, "wind": 3}', "unexpected field 'wind'"),
    ],
)
def test_a_reply_that_does_not_match_raises_output_error(text: str, expected: str) -> None:
    from agentcore import OutputError

    with pytest.raises(OutputError, match=expected):
        WEATHER.parse(Message.assistant(text))


def test_a_fenced_reply_parses() -> None:
    fenced = '```json\n{"city": "Oslo", "celsius": 4}\n```'
    assert WEATHER.parse(fenced) == Weather("Oslo", 4.0)


def test_schema_dicts_and_bad_outputs() -> None:
    from agentcore import ConfigError

    schema = {"title": "Answer", "type": "object", "properties": {"n": {"type": "integer"}}}
    spec = OutputSpec.of(schema)
    assert (spec.name, spec.parse('{"n": 3}')) == ("Answer", {"n": 3})
    with pytest.raises(ConfigError, match="must describe a JSON object"):
        OutputSpec.of({"type": "array"})
    with pytest.raises(ConfigError, match="output takes a JSON schema dict or a class"):
        OutputSpec.of(3)  # type: ignore[call-overload]
    with pytest.raises(ConfigError, match="must describe a JSON object"):
        OutputSpec.of(int)


# -- through a session -------------------------------------------------------------


async def test_a_session_on_anthropic_runs_tools_then_ends_with_the_output(
    wire: Wire, tmp_path: Path
) -> None:
    registry = ToolRegistry()

    @registry.tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return "-2 C"

    thinking = {"type": "thinking", "thinking": "Look it up.", "signature": "S1"}
    call = {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"city": "Oslo"}}
    answer = {"type": "tool_use", "id": "t2", "name": "Weather", "input": WEATHER_JSON}
    wire.json(anthropic_reply([thinking, call], "tool_use"))
    wire.json(anthropic_reply([answer], "tool_use"))
    store = SqliteStore(tmp_path / "s.db")
    bundle = (
        AgentBuilder()
        .provider(anthropic(wire))
        .tool_registry(registry)
        .store(store)
        .output(Weather)
        .load_plugins(False)
        .build()
    )
    try:
        session = AgentSession(Agent("w", system_prompt="Weather."), "s1", bundle)
        reply = await session.submit_turn("Weather in Oslo?")
        assert parse_output(reply, Weather) == Weather("Oslo", -2.0)
        first, second = wire.bodies
        assert first["tool_choice"] == second["tool_choice"] == {"type": "any"}
        assert second["messages"][1]["content"][0] == thinking  # Sent back, signed.
        reopened = AgentSession(Agent("w", system_prompt="Weather."), "s1", bundle)
        history = await reopened.history()
        assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
        assert history[1].content[0] == ReasoningBlock("Look it up.", signature="S1")
        assert history[3].text == json.dumps(WEATHER_JSON)
    finally:
        await store.close()


WEATHER_JSON = {"city": "Oslo", "celsius": -2}
