"""JSON nested too deeply, in a reply, a streamed event or a tool call's arguments.

Whatever the nesting, a turn whose reply cannot be read fails with the
provider's :class:`~agentcore.LlmError` naming the problem, never with a bare
``RecursionError``, and the session keeps exactly what it had.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    LlmError,
    SqliteStore,
    TextDelta,
    ToolRegistry,
)
from agentcore.errors import BadRequestError, MalformedResponseError
from agentcore.llm import LlmRequest
from agentcore.messages import Message
from agentcore.providers import AnthropicProvider, OpenAIProvider

from .loopback import LlmServer, Reply, encode_sse
from .payloads import (
    anthropic_message,
    anthropic_stream,
    openai_completion,
    openai_stream,
)

PLACEHOLDER = "@@deep@@"
"""A string in a payload that is swapped for the deep JSON text once encoded."""

LIMIT = 128
"""The deepest nesting of arrays and objects a provider reads (the documented limit)."""


def deep_array(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def nested(depth: int) -> dict[str, Any]:
    """A tool argument value nested ``depth`` objects deep in all (the arguments included)."""
    value: Any = 1
    for _ in range(depth - 1):
        value = {"a": value}
    return {"city": "Oslo", "a": value} if depth > 1 else {"city": "Oslo"}


def _swap(encoded: str, deep: str) -> str:
    marker = json.dumps(PLACEHOLDER)
    assert marker in encoded
    return encoded.replace(marker, deep)


def _reply_raw(server: LlmServer, payload: Any, deep: str) -> None:
    server.reply_raw(_swap(json.dumps(payload), deep))


def _reply_sse(server: LlmServer, events: list[Any], deep: str) -> None:
    data = _swap(encode_sse(events).decode("utf-8"), deep).encode("utf-8")
    chunks = [data[i : i + 4096] for i in range(0, len(data), 4096)]
    server.reply(Reply(200, content_type="text/event-stream", chunks=chunks))


def _tools() -> ToolRegistry:
    registry = ToolRegistry()

    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "a": {}},
        "required": ["city"],
    }

    @registry.tool(parameters=schema)
    def weather(city: str, a: Any = None) -> str:
        """Current weather in ``city``; ``a`` is anything."""
        return f"{city}: 18 degrees"

    return registry


# Each scenario queues a reply that holds ``deep`` (the deep JSON text) somewhere.
Scenario = Callable[[LlmServer, str], None]


def openai_whole_reply(server: LlmServer, deep: str) -> None:
    payload = openai_completion("Hello!")
    payload["extra"] = PLACEHOLDER
    _reply_raw(server, payload, deep)


def openai_arguments(server: LlmServer, deep: str) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": deep}}
    server.reply_json(openai_completion(None, tool_calls=[call]))


def openai_stream_chunk(server: LlmServer, deep: str) -> None:
    events: list[Any] = openai_stream(("Hel", "lo"))
    events.insert(2, {"choices": [], "extra": PLACEHOLDER})
    _reply_sse(server, events, deep)


def openai_stream_arguments(server: LlmServer, deep: str) -> None:
    half = len(deep) // 2
    server.reply_sse(
        openai_stream((), tool_calls=[("call_1", "weather", [deep[:half], deep[half:]])])
    )


def anthropic_whole_reply(server: LlmServer, deep: str) -> None:
    payload = anthropic_message("Hello!")
    payload["extra"] = PLACEHOLDER
    _reply_raw(server, payload, deep)


def anthropic_input(server: LlmServer, deep: str) -> None:
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": PLACEHOLDER}
    # The input must be an object: wrap the deep value in one.
    _reply_raw(server, anthropic_message([tool_use]), '{"city": "Oslo", "a": ' + deep + "}")


def anthropic_stream_event(server: LlmServer, deep: str) -> None:
    events: list[Any] = anthropic_stream()
    events.insert(2, ("ping", {"type": "ping", "extra": PLACEHOLDER}))
    _reply_sse(server, events, deep)


def anthropic_stream_arguments(server: LlmServer, deep: str) -> None:
    half = len(deep) // 2
    server.reply_sse(
        anthropic_stream((("tool_use", ("toolu_1", "weather", [deep[:half], deep[half:]])),))
    )


OPENAI_SCENARIOS = {
    "whole-reply": (openai_whole_reply, False),
    "arguments": (openai_arguments, False),
    "stream-chunk": (openai_stream_chunk, True),
    "stream-arguments": (openai_stream_arguments, True),
}
ANTHROPIC_SCENARIOS = {
    "whole-reply": (anthropic_whole_reply, False),
    "input": (anthropic_input, False),
    "stream-event": (anthropic_stream_event, True),
    "stream-arguments": (anthropic_stream_arguments, True),
}
SCENARIOS = [
    pytest.param("openai", scenario, streaming, id=f"openai-{name}")
    for name, (scenario, streaming) in OPENAI_SCENARIOS.items()
] + [
    pytest.param("anthropic", scenario, streaming, id=f"anthropic-{name}")
    for name, (scenario, streaming) in ANTHROPIC_SCENARIOS.items()
]


def _provider(name: str, server: LlmServer) -> OpenAIProvider | AnthropicProvider:
    if name == "openai":
        return OpenAIProvider(
            "gpt-4o-mini", base_url=server.openai_url, api_key="sk-test-0123456789abcdef"
        )
    return AnthropicProvider(
        "claude-sonnet-4-5", base_url=server.url, api_key="sk-ant-test-0123456789abcdef"
    )


def _session(provider: OpenAIProvider | AnthropicProvider, path: Path) -> AgentSession:
    bundle = (
        AgentBuilder()
        .provider(provider)
        .tool_registry(_tools())
        .store(SqliteStore(path))
        .load_plugins(False)
        .build()
    )
    return AgentSession(Agent("forecaster", system_prompt="Answer briefly."), "deep", bundle)


async def _turn(session: AgentSession, text: str, streaming: bool) -> str:
    if streaming:
        stream = session.submit_turn_stream(text)
        return "".join([event.text async for event in stream if isinstance(event, TextDelta)])
    return (await session.submit_turn(text)).text


@pytest.mark.parametrize("make_deep", [deep_array, deep_object], ids=["arrays", "objects"])
@pytest.mark.parametrize("depth", [LIMIT + 1, 990, 5000])
@pytest.mark.parametrize(("provider_name", "scenario", "streaming"), SCENARIOS)
async def test_deep_json_fails_the_turn_and_stores_nothing(
    llm_server: LlmServer,
    tmp_path: Path,
    provider_name: str,
    scenario: Scenario,
    streaming: bool,
    depth: int,
    make_deep: Callable[[int], str],
) -> None:
    deep = make_deep(depth)
    async with _provider(provider_name, llm_server) as provider:
        session = _session(provider, tmp_path / "deep.db")
        llm_server.reply_json(
            openai_completion("Fine.") if provider_name == "openai" else anthropic_message("Fine.")
        )
        await session.submit_turn("Hello")
        before = await session.history()

        scenario(llm_server, deep)
        with pytest.raises(LlmError, match="nested too deeply") as info:
            await _turn(session, "Weather in Oslo?", streaming)

        assert isinstance(info.value, MalformedResponseError)
        assert str(LIMIT) in str(info.value)
        assert await session.history() == before
        resumed = AgentSession(session.agent, session.session_id, session.bundle)
        assert await resumed.history() == before
        assert len(llm_server.requests) == 2  # A reply that cannot be read is not retried.


@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize("provider_name", ["openai", "anthropic"])
async def test_arguments_nested_within_the_limit_are_called_and_stored(
    llm_server: LlmServer, tmp_path: Path, provider_name: str, streaming: bool
) -> None:
    # The non-streamed Anthropic reply holds the input 4 levels down: message, content, block.
    arguments = nested(LIMIT - 4)
    text = json.dumps(arguments)
    if provider_name == "openai":
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "weather", "arguments": text},
        }
        first = openai_completion(None, tool_calls=[call])
        stream = openai_stream((), tool_calls=[("call_1", "weather", [text])])
        final = openai_completion("Oslo: 18 degrees.")
        final_stream = openai_stream(("Oslo: 18 degrees.",))
    else:
        tool_use = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": arguments}
        first = anthropic_message([tool_use])
        stream = anthropic_stream((("tool_use", ("toolu_1", "weather", [text])),))
        final = anthropic_message("Oslo: 18 degrees.")
        final_stream = anthropic_stream((("text", ["Oslo: 18 degrees."]),))
    if streaming:
        llm_server.reply_sse(stream, chunk_size=4096)
        llm_server.reply_sse(final_stream)
    else:
        llm_server.reply_json(first)
        llm_server.reply_json(final)
    async with _provider(provider_name, llm_server) as provider:
        session = _session(provider, tmp_path / "deep.db")
        assert await _turn(session, "Weather in Oslo?", streaming) == "Oslo: 18 degrees."
        resumed = AgentSession(session.agent, session.session_id, session.bundle)
        history = await resumed.history()
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert history[1].tool_calls[0].arguments == arguments


@pytest.mark.parametrize("depth", [LIMIT + 1, 5000])
@pytest.mark.parametrize("streaming", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize("provider_name", ["openai", "anthropic"])
async def test_an_error_body_nested_too_deeply_is_the_status_error(
    llm_server: LlmServer, provider_name: str, streaming: bool, depth: int
) -> None:
    llm_server.reply_raw(deep_object(depth), status=400)
    async with _provider(provider_name, llm_server) as provider:
        request = LlmRequest([Message.user("Hi")])
        with pytest.raises(BadRequestError) as info:
            if streaming:
                _ = [event async for event in provider.stream(request)]
            else:
                await provider.complete(request)
    assert str(info.value).count('{"a":') > 10  # The body is the message, cut.
