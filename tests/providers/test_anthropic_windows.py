"""Anthropic turns behind a server with a small window: the reply is sized to fit.

The server below speaks the Messages API and refuses, as Anthropic does,
any request whose input and ``max_tokens`` exceed its window ("input length
and `max_tokens` exceed context limit: X + Y > L"). It counts tokens its own
way (more than the local count), as a real server's tokenizer does.
"""

from __future__ import annotations

import json
import math
from typing import Any

import httpx
import pytest

from agentcore import Agent, AgentBuilder, AgentSession, InMemoryStore
from agentcore.errors import ContextWindowExceededError
from agentcore.llm import LlmRequest
from agentcore.messages import Message
from agentcore.providers import AnthropicProvider

WINDOWS = (1024, 2048, 4096)


class WindowedServer:
    """An Anthropic-compatible server with a window of ``window`` tokens."""

    def __init__(self, window: int, chars_per_token: float = 3.0) -> None:
        self.window = window
        self.chars_per_token = chars_per_token
        self.refusals = 0
        self.answered: list[dict[str, Any]] = []

    def count(self, body: dict[str, Any]) -> int:
        """The input tokens of ``body`` by this server's tokenizer."""
        system = body.get("system", "")
        texts = [system if isinstance(system, str) else json.dumps(system)]
        for turn in body["messages"]:
            content = turn["content"]
            if isinstance(content, str):
                texts.append(content)
            else:
                texts += [block.get("text", json.dumps(block)) for block in content]
        return sum(math.ceil(len(text) / self.chars_per_token) + 4 for text in texts)

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        prompt, output = self.count(body), body["max_tokens"]
        if prompt + output > self.window:
            self.refusals += 1
            message = (
                f"input length and `max_tokens` exceed context limit: {prompt} + {output} > "
                f"{self.window}, decrease input length or `max_tokens` and try again"
            )
            error = {"type": "invalid_request_error", "message": message}
            return httpx.Response(400, json={"type": "error", "error": error})
        self.answered.append(body)
        text = f"Noted, reply {len(self.answered)}."
        if body.get("stream"):
            return httpx.Response(
                200, content=_events(text, prompt), headers={"content-type": "text/event-stream"}
            )
        return httpx.Response(200, json=_message(text, prompt))


def _message(text: str, prompt: int) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-local",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": prompt, "output_tokens": 5},
    }


def _events(text: str, prompt: int) -> bytes:
    start = {**_message("", prompt), "content": []}
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def _provider(server: WindowedServer, **options: Any) -> AnthropicProvider:
    client = httpx.AsyncClient(transport=httpx.MockTransport(server.handle))
    return AnthropicProvider(
        "claude-local", base_url="http://127.0.0.1:9", api_key="key", http_client=client, **options
    )


async def _twenty_turns(provider: AnthropicProvider, *, stream: bool) -> list[str]:
    bundle = AgentBuilder().provider(provider).store(InMemoryStore()).load_plugins(False).build()
    session = AgentSession(Agent("assistant", system_prompt="Be brief."), "s", bundle)
    replies = []
    for turn in range(20):
        text = f"Item {turn} is on shelf {turn * 7}, note it."
        if stream:
            parts = [event.text async for event in session.submit_turn_stream(text)]
            replies.append("".join(part for part in parts if part))
        else:
            replies.append((await session.submit_turn(text)).text)
    return replies


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_every_turn_passes_when_the_window_is_learned_from_a_refusal(
    window: int, stream: bool
) -> None:
    server = WindowedServer(window)
    async with _provider(server) as provider:
        replies = await _twenty_turns(provider, stream=stream)
    assert replies == [f"Noted, reply {n}." for n in range(1, 21)]
    assert all(server.count(body) + body["max_tokens"] <= window for body in server.answered)
    # The first refusal teaches the window and how the server counts.
    assert server.refusals <= 2


@pytest.mark.parametrize("window", WINDOWS)
async def test_a_given_window_sizes_the_reply_before_the_first_request(window: int) -> None:
    server = WindowedServer(window, chars_per_token=4.0)
    async with _provider(server, context_windows={"claude-local": window}) as provider:
        replies = await _twenty_turns(provider, stream=False)
    assert len(replies) == 20
    # Sized from the start; a server that counts more than the local count
    # refuses at most once, and the figures it gives are learned.
    assert server.answered[0]["max_tokens"] < window
    assert server.refusals <= 1


async def test_a_large_window_still_gets_the_default_max_tokens() -> None:
    server = WindowedServer(200_000)
    async with _provider(server, context_windows={"claude-local": 200_000}) as provider:
        await _twenty_turns(provider, stream=False)
    assert {body["max_tokens"] for body in server.answered} == {4096}


async def test_a_request_s_own_max_tokens_is_sent_as_it_is_and_its_refusal_raised() -> None:
    server = WindowedServer(1024)
    async with _provider(server) as provider:
        request = LlmRequest([Message.user("hello")], max_tokens=2000)
        with pytest.raises(ContextWindowExceededError) as caught:
            await provider.complete(request)
    assert caught.value.limit_tokens == 1024
    assert server.refusals == 1


async def test_an_input_larger_than_the_window_is_refused_once_and_raised() -> None:
    server = WindowedServer(1024)
    async with _provider(server) as provider:
        with pytest.raises(ContextWindowExceededError):
            await provider.complete(LlmRequest([Message.user("word " * 2000)]))
        assert server.refusals == 1
        # The window is now known: the next request that fits is sized and answered.
        reply = await provider.complete(LlmRequest([Message.user("hello")]))
    assert reply.text == "Noted, reply 1."
    assert server.refusals == 1


@pytest.mark.parametrize("window", WINDOWS)
async def test_autosummary_turns_pass_with_the_window_given_to_the_plugin_only(window: int) -> None:
    autosummary = pytest.importorskip(
        "agentcore_autosummary", reason="the autosummary plugin is not installed"
    )
    server = WindowedServer(window)
    config = autosummary.SummaryConfig(max_context_tokens=window, max_summary_tokens=window // 8)
    async with _provider(server) as provider:
        bundle = (
            AgentBuilder()
            .provider(provider)
            .store(InMemoryStore())
            .load_plugins(True)
            .setting("summary_config", config)
            .build()
        )
        session = AgentSession(Agent("assistant", system_prompt="Be brief."), "s", bundle)
        for turn in range(30):
            words = " ".join(f"word{turn}x{n}" for n in range(window // 40))
            await session.submit_turn(f"Item {turn} is on shelf {turn * 7}: {words}")
        history = await session.history()
    assert len(history) == 60
    assert any(body["max_tokens"] < 4096 for body in server.answered)
    assert server.refusals <= 2
