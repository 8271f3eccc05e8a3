"""An AgentSession over real sockets: a tool call round trip and a streamed turn."""

from __future__ import annotations

import json

from agentcore import Agent, AgentBuilder, AgentSession, TextDelta, ToolRegistry
from agentcore.providers import AnthropicProvider, OpenAIProvider

from .loopback import LlmServer
from .payloads import (
    anthropic_message,
    anthropic_stream,
    openai_completion,
    openai_stream,
    openai_tool_call,
)


def _weather_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    def weather(city: str) -> str:
        """Current weather.

        Args:
            city: The city to look up.
        """
        return f"{city}: 18 degrees, light rain"

    return registry


def _session(provider: OpenAIProvider | AnthropicProvider) -> AgentSession:
    bundle = (
        AgentBuilder()
        .provider(provider)
        .tool_registry(_weather_tools())
        .load_plugins(False)
        .build()
    )
    return AgentSession(Agent("forecaster", system_prompt="Answer briefly."), "e2e", bundle)


async def test_openai_tool_round_trip_and_streamed_turn(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(
        openai_completion(
            None, tool_calls=[openai_tool_call("call_1", "weather", {"city": "Oslo"})]
        )
    )
    llm_server.reply_json(openai_completion("Oslo: 18 degrees and light rain."))
    llm_server.reply_sse(openai_stream(("Bring ", "an ", "umbrella.")), chunk_size=5)
    session = _session(openai_provider)

    reply = await session.submit_turn("Weather in Oslo?")
    assert reply.text == "Oslo: 18 degrees and light rain."
    second = llm_server.requests[1].json
    assert second["messages"][0] == {"role": "system", "content": "Answer briefly."}
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "Oslo: 18 degrees, light rain",
    }
    assert json.loads(second["messages"][-2]["tool_calls"][0]["function"]["arguments"]) == {
        "city": "Oslo"
    }
    assert second["tools"][0]["function"]["name"] == "weather"

    stream = session.submit_turn_stream("Should I take an umbrella?")
    deltas = [event.text async for event in stream if isinstance(event, TextDelta)]
    assert "".join(deltas) == "Bring an umbrella."
    assert llm_server.requests[2].json["stream"] is True
    history = await session.history()
    assert [m.role for m in history] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    assert session.cost.total().input_tokens == 30  # three calls reporting 10 input tokens each


async def test_anthropic_tool_round_trip_and_streamed_turn(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}}
    llm_server.reply_json(anthropic_message([tool_use]))
    llm_server.reply_json(anthropic_message("Oslo: 18 degrees and light rain."))
    llm_server.reply_sse(anthropic_stream((("text", ["Bring ", "an ", "umbrella."]),)))
    session = _session(anthropic_provider)

    reply = await session.submit_turn("Weather in Oslo?")
    assert reply.text == "Oslo: 18 degrees and light rain."
    second = llm_server.requests[1].json
    assert second["system"] == "Answer briefly."
    assert (
        second["messages"][-1]["content"][0]
        == {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": "Oslo: 18 degrees, light rain",
            "is_error": False,
        }
        or second["messages"][-1]["content"][0]["tool_use_id"] == "toolu_1"
    )

    text = "".join([event.text async for event in session.submit_turn_stream("Umbrella?")])
    assert text == "Bring an umbrella."
    assert [m.role for m in await session.history()][-2:] == ["user", "assistant"]
