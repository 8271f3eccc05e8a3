"""Prompt caching on the wire: Anthropic's breakpoints, OpenAI's cache key, cache usage."""

from __future__ import annotations

from typing import Any

import pytest

from agentcore.errors import ConfigError
from agentcore.llm import LlmRequest, ResponseComplete, ToolSpec
from agentcore.messages import Message, ToolUseBlock
from agentcore.providers import AnthropicProvider, OpenAIProvider
from agentcore.usage import Usage

from .conftest import ANTHROPIC_KEY
from .loopback import LlmServer
from .payloads import (
    anthropic_message,
    anthropic_stream,
    anthropic_usage,
    openai_completion,
    openai_stream,
    openai_usage,
)

TOOL = ToolSpec("lookup", "Look a city up.", {"type": "object", "properties": {}})
EPHEMERAL = {"type": "ephemeral"}
CONVERSATION = [
    Message.system("You are a weather assistant."),
    Message.user("Weather in Oslo?"),
    Message.assistant("", [ToolUseBlock("toolu_1", "lookup", {"city": "Oslo"})]),
    Message.tool_result("toolu_1", "18 degrees"),
    Message.assistant("18 degrees in Oslo."),
    Message.user("And in Bergen?"),
]


def _marked(body: dict[str, Any]) -> list[Any]:
    found: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if "cache_control" in value:
                found.append(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body)
    return found


async def _anthropic(server: LlmServer, **options: Any) -> dict[str, Any]:
    server.reply_json(anthropic_message())
    async with AnthropicProvider(
        "claude-sonnet-4-5", base_url=server.url, api_key=ANTHROPIC_KEY, **options
    ) as provider:
        await provider.complete(LlmRequest(CONVERSATION, tools=[TOOL]))
    body: dict[str, Any] = server.requests[-1].json
    return body


async def test_anthropic_marks_tools_system_the_previous_turn_and_the_newest(
    llm_server: LlmServer,
) -> None:
    body = await _anthropic(llm_server)
    assert body["tools"][-1]["cache_control"] == EPHEMERAL
    assert body["system"] == [
        {"type": "text", "text": "You are a weather assistant.", "cache_control": EPHEMERAL}
    ]
    turns = body["messages"]
    assert [turn["role"] for turn in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[3]["content"][-1] == {
        "type": "text",
        "text": "18 degrees in Oslo.",
        "cache_control": EPHEMERAL,
    }
    assert turns[4]["content"][-1]["cache_control"] == EPHEMERAL
    assert len(_marked(body)) == 4  # Anthropic's limit.


async def test_anthropic_one_hour_entries_and_no_cache(llm_server: LlmServer) -> None:
    body = await _anthropic(llm_server, cache_ttl="1h")
    assert {str(block["cache_control"]) for block in _marked(body)} == {
        str({"type": "ephemeral", "ttl": "1h"})
    }
    off = await _anthropic(llm_server, cache="off")
    assert _marked(off) == []
    assert off["system"] == "You are a weather assistant."


async def test_a_first_request_marks_what_it_has(llm_server: LlmServer) -> None:
    llm_server.reply_json(anthropic_message())
    async with AnthropicProvider(
        "claude-sonnet-4-5", base_url=llm_server.url, api_key=ANTHROPIC_KEY
    ) as provider:
        await provider.complete(LlmRequest([Message.user("Hi")]))
    body = llm_server.requests[-1].json
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hi", "cache_control": EPHEMERAL}]}
    ]


@pytest.mark.parametrize(
    ("options", "problem"),
    [({"cache": "always"}, "cache must be"), ({"cache_ttl": "10m"}, "cache_ttl must be")],
)
def test_bad_anthropic_cache_options_are_refused(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        AnthropicProvider("claude-sonnet-4-5", api_key="k", **options)


async def test_anthropic_usage_keeps_cache_reads_and_writes_apart_when_streamed(
    llm_server: LlmServer,
) -> None:
    usage = anthropic_usage(40, 7, cache_read=3000, cache_creation=500)
    llm_server.reply_sse(anthropic_stream(usage=usage))
    async with AnthropicProvider(
        "claude-sonnet-4-5", base_url=llm_server.url, api_key=ANTHROPIC_KEY
    ) as provider:
        events = [event async for event in provider.stream(LlmRequest([Message.user("Hi")]))]
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert final.response.usage == Usage(3540, 7, cached_input_tokens=3000, cache_write_tokens=500)


async def _openai(server: LlmServer, request: LlmRequest, **options: Any) -> dict[str, Any]:
    server.reply_json(openai_completion())
    async with OpenAIProvider("gpt-5-mini", base_url=server.openai_url, **options) as provider:
        await provider.complete(request)
    body: dict[str, Any] = server.requests[-1].json
    return body


async def test_openai_sends_the_conversation_as_prompt_cache_key(llm_server: LlmServer) -> None:
    request = LlmRequest([Message.user("Hi")], cache_key="session-42")
    assert (await _openai(llm_server, request, cache="on"))["prompt_cache_key"] == "session-42"
    fixed = await _openai(llm_server, request, cache="on", prompt_cache_key="my-app")
    assert fixed["prompt_cache_key"] == "my-app"
    # "auto" sends it to OpenAI's own endpoint only: another server may refuse the field.
    assert "prompt_cache_key" not in await _openai(llm_server, request)
    assert "prompt_cache_key" not in await _openai(llm_server, request, cache="off")
    assert "prompt_cache_key" not in await _openai(llm_server, LlmRequest([Message.user("Hi")]))


async def test_auto_sends_the_key_to_openai_itself() -> None:
    import json

    import httpx

    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=openai_completion())

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    provider = OpenAIProvider("gpt-5-mini", api_key="k", http_client=client)
    async with client, provider:
        assert provider.base_url == "https://api.openai.com/v1"
        await provider.complete(LlmRequest([Message.user("Hi")], cache_key="session-42"))
    assert bodies[0]["prompt_cache_key"] == "session-42"
    assert "cache_prompt" not in bodies[0]


async def test_llama_cpp_gets_cache_prompt(llm_server: LlmServer) -> None:
    request = LlmRequest([Message.user("Hi")])
    assert (await _openai(llm_server, request, cache_prompt=True))["cache_prompt"] is True
    assert "cache_prompt" not in await _openai(llm_server, request)


async def test_openai_usage_reads_cached_tokens_plain_and_streamed(llm_server: LlmServer) -> None:
    usage = openai_usage(prompt=2048, completion=9, cached=1920)
    llm_server.reply_json(openai_completion(usage=usage))
    llm_server.reply_sse(openai_stream(["Hi"], usage=usage))
    async with OpenAIProvider("gpt-5-mini", base_url=llm_server.openai_url) as provider:
        plain = await provider.complete(LlmRequest([Message.user("Hi")]))
        events = [event async for event in provider.stream(LlmRequest([Message.user("Hi")]))]
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    for got in (plain.usage, final.response.usage):
        assert got == Usage(2048, 9, cached_input_tokens=1920)
        assert got is not None and got.cache_write_tokens == 0


def test_a_cache_key_must_be_text() -> None:
    with pytest.raises(ValueError, match="cache_key"):
        LlmRequest([Message.user("Hi")], cache_key="")


async def test_a_sessions_turn_requests_carry_its_id_as_cache_key() -> None:
    from agentcore import Agent, AgentBuilder, AgentSession
    from agentcore.testing import MockProvider

    provider = MockProvider(responder=lambda request: "ok")
    session = AgentSession(Agent("a"), "session-7", AgentBuilder().provider(provider).build())
    await session.submit_turn("Hi")
    await session.submit_turn_stream("Again").finalize()
    assert [call.cache_key for call in provider.calls] == ["session-7", "session-7"]


async def test_a_request_no_later_one_starts_with_writes_no_entry_at_its_end(
    llm_server: LlmServer,
) -> None:
    llm_server.reply_json(anthropic_message())
    async with AnthropicProvider(
        "claude-sonnet-4-5", base_url=llm_server.url, api_key=ANTHROPIC_KEY
    ) as provider:
        await provider.complete(LlmRequest(CONVERSATION, tools=[TOOL], cache_newest=False))
    body = llm_server.requests[-1].json
    turns = body["messages"]
    # What it shares with the conversation's earlier requests is still read from the cache.
    assert body["tools"][-1]["cache_control"] == EPHEMERAL
    assert body["system"][-1]["cache_control"] == EPHEMERAL
    assert turns[3]["content"][-1]["cache_control"] == EPHEMERAL
    assert "cache_control" not in turns[4]["content"][-1]
    assert len(_marked(body)) == 3


def test_cache_newest_must_be_a_bool() -> None:
    with pytest.raises(ConfigError, match="cache_newest"):
        LlmRequest(CONVERSATION, cache_newest="no")  # type: ignore[arg-type]


async def test_a_hook_decides_cache_newest_for_its_call_alone() -> None:
    from agentcore import Agent, AgentBuilder, AgentSession, TurnContext, hookimpl
    from agentcore.testing import MockProvider

    class OneOff:
        @hookimpl
        def before_model_call(self, ctx: TurnContext) -> None:
            if ctx.turn_index == 0:
                ctx.cache_newest = False

    provider = MockProvider(responder=lambda request: "ok")
    bundle = AgentBuilder().provider(provider).plugin(OneOff()).build()
    session = AgentSession(Agent("a"), "s", bundle)
    await session.submit_turn("Hi")
    await session.submit_turn("Again")
    assert [call.cache_newest for call in provider.calls] == [False, True]
