"""A reply with no text and no tool call fails the turn with EmptyReplyError, storing nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    EmptyReplyError,
    LlmError,
    LlmProvider,
    LlmResponse,
    Message,
    ReasoningBlock,
    SqliteStore,
    TextBlock,
    TextDelta,
    ToolRegistry,
    ToolUseBlock,
    TurnContext,
    hookimpl,
    parse_output,
)
from agentcore.testing import MockProvider

from .loopback import LlmServer
from .payloads import anthropic_message, anthropic_stream, openai_completion, openai_stream


def _tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    def weather(city: str) -> str:
        """Current weather.

        Args:
            city: The city to look up.
        """
        return f"{city}: 18 degrees"

    return registry


class _Errors:
    def __init__(self) -> None:
        self.seen: list[BaseException] = []

    @hookimpl
    def on_turn_error(self, ctx: TurnContext, error: BaseException) -> None:
        self.seen.append(error)


def _session(
    provider: LlmProvider,
    path: Path,
    *,
    tools: bool = True,
    plugin: object | None = None,
    output: Any = None,
) -> AgentSession:
    builder = AgentBuilder().provider(provider).store(SqliteStore(path)).load_plugins(False)
    if tools:
        builder = builder.tool_registry(_tools())
    if plugin is not None:
        builder = builder.plugin(plugin)
    if output is not None:
        builder = builder.output(output)
    return AgentSession(Agent("a", system_prompt="Be brief."), "s", builder.build())


async def _turn(session: AgentSession, text: str, streaming: bool) -> str:
    if streaming:
        stream = session.submit_turn_stream(text)
        return "".join([event.text async for event in stream if isinstance(event, TextDelta)])
    return (await session.submit_turn(text)).text


async def _unchanged(session: AgentSession, before: list[Message], index: int) -> None:
    assert await session.history() == before
    assert session.turn_index == index
    resumed = AgentSession(session.agent, session.session_id, session.bundle)
    assert await resumed.history() == before
    assert resumed.turn_index == index


EMPTY_REPLIES = {
    "no-content": LlmResponse(Message("assistant", [])),
    "empty-text": LlmResponse(Message.assistant("")),
    "whitespace": LlmResponse(Message.assistant(" \n\t ")),
    "reasoning-only": LlmResponse(
        Message("assistant", [ReasoningBlock("Thinking it over at length.")]),
        stop_reason="max_tokens",
    ),
}


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("reply", EMPTY_REPLIES.values(), ids=EMPTY_REPLIES.keys())
async def test_an_empty_reply_fails_the_turn_and_stores_nothing(
    tmp_path: Path, reply: LlmResponse, streaming: bool
) -> None:
    errors = _Errors()
    provider = MockProvider(["Hi there.", reply, "Still here."])
    session = _session(provider, tmp_path / "s.db", plugin=errors)
    await session.submit_turn("Hello")
    before = await session.history()

    with pytest.raises(EmptyReplyError, match="no text and no tool call") as info:
        await _turn(session, "Anything?", streaming)

    assert isinstance(info.value, LlmError)
    assert info.value.stop_reason == reply.stop_reason
    assert errors.seen == [info.value]
    await _unchanged(session, before, 1)
    assert await _turn(session, "Anything now?", streaming) == "Still here."
    assert session.turn_index == 2


async def test_a_reply_that_stopped_at_max_tokens_says_so(tmp_path: Path) -> None:
    provider = MockProvider([EMPTY_REPLIES["reasoning-only"]])
    session = _session(provider, tmp_path / "s.db")
    with pytest.raises(EmptyReplyError, match="raise the agent's max_tokens"):
        await session.submit_turn("Think hard.")


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "stream"])
async def test_an_empty_reply_after_a_tool_round_stores_none_of_the_round(
    tmp_path: Path, streaming: bool
) -> None:
    call = LlmResponse(
        Message.assistant(tool_calls=[ToolUseBlock("c1", "weather", {"city": "Oslo"})]),
        stop_reason="tool_use",
    )
    provider = MockProvider([call, ""])
    session = _session(provider, tmp_path / "s.db")
    with pytest.raises(EmptyReplyError):
        await _turn(session, "Weather in Oslo?", streaming)
    assert len(provider.calls) == 2  # The tool ran and the model was asked again.
    await _unchanged(session, [], 0)


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "stream"])
async def test_tool_calls_only_and_structured_output_are_not_empty(
    tmp_path: Path, streaming: bool
) -> None:
    # Without a tool registry a reply of tool calls alone ends the turn, and is stored.
    call = ToolUseBlock("c1", "weather", {"city": "Oslo"})
    calls_only = LlmResponse(Message.assistant(tool_calls=[call]), stop_reason="tool_use")
    session = _session(MockProvider([calls_only]), tmp_path / "a.db", tools=False)
    assert await _turn(session, "Weather?", streaming) == ""
    assert (await session.history())[-1].tool_calls == (call,)

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    session = _session(MockProvider(['{"n": 3}']), tmp_path / "b.db", output=schema)
    await _turn(session, "A number?", streaming)
    assert parse_output((await session.history())[-1], schema) == {"n": 3}


# -- what real servers send -------------------------------------------------------

WIRE_EMPTY = {
    "openai-null-content": ("openai", openai_completion(None)),
    "openai-empty-content": ("openai", openai_completion("")),
    "anthropic-no-blocks": ("anthropic", anthropic_message([])),
    "anthropic-empty-text": ("anthropic", anthropic_message("")),
}


def _provider(name: str, server: LlmServer) -> Any:
    from agentcore.providers import AnthropicProvider, OpenAIProvider

    if name == "openai":
        return OpenAIProvider("gpt-4o-mini", base_url=server.openai_url, api_key="sk-test-abcdef")
    return AnthropicProvider("claude-sonnet-4-5", base_url=server.url, api_key="sk-ant-abcdef")


@pytest.mark.parametrize(("name", "body"), WIRE_EMPTY.values(), ids=WIRE_EMPTY.keys())
async def test_an_empty_reply_from_a_server_fails_the_turn(
    llm_server: LlmServer, tmp_path: Path, name: str, body: dict[str, Any]
) -> None:
    llm_server.reply_json(body)
    async with _provider(name, llm_server) as provider:
        session = _session(provider, tmp_path / "s.db")
        with pytest.raises(EmptyReplyError, match="stop reason 'end_turn'"):
            await session.submit_turn("Hello")
        await _unchanged(session, [], 0)
    assert len(llm_server.requests) == 1  # Not retried.


@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_an_empty_stream_from_a_server_fails_the_turn(
    llm_server: LlmServer, tmp_path: Path, name: str
) -> None:
    llm_server.reply_sse(openai_stream(()) if name == "openai" else anthropic_stream(()))
    async with _provider(name, llm_server) as provider:
        session = _session(provider, tmp_path / "s.db")
        with pytest.raises(EmptyReplyError):
            await _turn(session, "Hello", streaming=True)
        await _unchanged(session, [], 0)


async def test_anthropic_structured_output_through_its_tool_is_not_empty(
    llm_server: LlmServer, tmp_path: Path
) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    async with _provider("anthropic", llm_server) as provider:
        session = _session(provider, tmp_path / "s.db", tools=False, output=schema)
        spec = session.agent.output or session.bundle.config.output
        assert spec is not None
        tool_use = {"type": "tool_use", "id": "toolu_1", "name": spec.name, "input": {"n": 3}}
        llm_server.reply_json(anthropic_message([tool_use], stop_reason="tool_use"))
        reply = await session.submit_turn("A number?")
    assert parse_output(reply, schema) == {"n": 3}
    assert not any(isinstance(block, ToolUseBlock) for block in reply.content)
    assert isinstance(reply.content[0], TextBlock)
