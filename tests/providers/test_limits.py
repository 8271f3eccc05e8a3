"""Bounds on a call: an idle timeout only real events reset, a per-call deadline, a reply cap.

Each slow server here would hold a call for ever under a timeout that counts
the time between bytes; every test is itself bounded by ``asyncio.wait_for``
so a regression fails instead of hanging.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest

from agentcore.errors import (
    ConfigError,
    LlmTimeoutError,
    MalformedResponseError,
    ResponseTooLargeError,
    ServiceUnavailableError,
)
from agentcore.llm import LlmRequest
from agentcore.messages import Message
from agentcore.providers import AnthropicProvider, OpenAIProvider, OpenAIResponsesProvider
from agentcore.providers._base import HttpProvider
from agentcore.providers._clock import DEFAULT_MAX_REPLY_BYTES

from .conftest import ANTHROPIC_KEY
from .loopback import LlmServer, Reply, encode_sse
from .payloads import anthropic_stream, openai_chunk, openai_completion, openai_stream
from .responses_payloads import responses_stream

REQUEST = LlmRequest([Message.user("Hi")])
GUARD = 15.0
"""No test here may take longer than this: the servers would go on for minutes."""

T = TypeVar("T")


async def bounded(awaitable: Awaitable[T]) -> tuple[T, float]:
    started = time.monotonic()
    result = await asyncio.wait_for(awaitable, GUARD)
    return result, time.monotonic() - started


def make(kind: str, server: LlmServer, **options: Any) -> HttpProvider:
    options.setdefault("max_retries", 0)
    if kind == "openai":
        return OpenAIProvider("gpt-4o-mini", base_url=server.openai_url, **options)
    if kind == "responses":
        return OpenAIResponsesProvider("gpt-5-mini", base_url=server.openai_url, **options)
    return AnthropicProvider(
        "claude-sonnet-4-5", base_url=server.url, api_key=ANTHROPIC_KEY, **options
    )


def text_stream(kind: str, texts: list[str]) -> list[Any]:
    """The events of a streamed reply of ``texts`` on the wire of ``kind``."""
    if kind == "openai":
        return openai_stream(texts)
    if kind == "responses":
        return responses_stream(texts)
    return anthropic_stream((("text", texts),))


async def consume(provider: HttpProvider) -> list[Any]:
    return [event async for event in provider.stream(REQUEST)]


async def expect_error(awaitable: Awaitable[Any], error: type[Exception]) -> tuple[Any, float]:
    async def run() -> Exception:
        with pytest.raises(error) as info:
            await awaitable
        return info.value

    return await bounded(run())


# -- the idle timeout ---------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_a_stream_that_drips_a_byte_every_200_ms_times_out(
    kind: str, llm_server: LlmServer
) -> None:
    # One real event, then the rest of the stream one byte every 0.2 s (about 90 s in all).
    head = encode_sse(text_stream(kind, ["Hi"])[:2])
    tail = encode_sse([openai_chunk({"content": "x" * 400})]) if kind == "openai" else b"x" * 450
    llm_server.reply(
        Reply(
            200,
            content_type="text/event-stream",
            chunks=[head] + [tail[i : i + 1] for i in range(len(tail))],
            chunk_delay=0.2,
        )
    )
    async with make(kind, llm_server, idle_timeout=0.7) as provider:
        error, elapsed = await expect_error(consume(provider), LlmTimeoutError)
    assert "idle_timeout" in str(error)
    assert "no event for 0.7 s" in str(error)
    assert elapsed < 10.0  # 0.7 s idle (plus the first chunk's 0.2 s), far below the drip's 90 s


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_keep_alive_comments_do_not_keep_a_stream_alive(
    kind: str, llm_server: LlmServer
) -> None:
    for _ in range(3):
        llm_server.reply_drip(b": keep-alive\n\n" * 500, every=0.1, chunk_size=14)
    async with make(kind, llm_server, idle_timeout=0.6, max_retries=2) as provider:
        error, elapsed = await expect_error(consume(provider), LlmTimeoutError)
    assert "keep-alive" in str(error)
    assert elapsed < 10.0  # the comments would go on for 50 s
    assert len(llm_server.requests) == 1  # an idle timeout is not retried (the model may run)


async def test_anthropic_pings_alone_do_not_keep_a_stream_alive(llm_server: LlmServer) -> None:
    ping = encode_sse([("ping", {"type": "ping"})])
    llm_server.reply_drip(ping * 300, every=0.1, chunk_size=len(ping))
    async with make("anthropic", llm_server, idle_timeout=0.6) as provider:
        _, elapsed = await expect_error(consume(provider), LlmTimeoutError)
    assert elapsed < 10.0  # the pings would go on for 30 s


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_empty_deltas_do_not_keep_a_stream_alive(kind: str, llm_server: LlmServer) -> None:
    # The start of a reply, then 40 events with an empty delta, one every 0.25 s (10 s), then
    # the text and the end: without content for 1.5 s (idle_timeout), the call fails.
    if kind == "openai":
        events = openai_stream(["late"])
        head, tail = events[:1], events[1:]
        empty: Any = openai_chunk({"content": ""})
    elif kind == "responses":
        events = responses_stream(["late"])
        head, tail = events[:4], events[4:]  # up to the message's first content part
        empty = (
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "output_index": 0,
                "content_index": 0,
                "delta": "",
            },
        )
    else:
        events = anthropic_stream((("text", ["late"]),))
        head, tail = events[:2], events[2:]
        empty = (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": ""},
            },
        )
    drip = [encode_sse([empty]) for _ in range(120)]
    llm_server.reply(
        Reply(
            200,
            content_type="text/event-stream",
            chunks=[encode_sse(head), *drip, encode_sse(tail)],
            chunk_delay=0.25,
        )
    )
    async with make(kind, llm_server, idle_timeout=1.5) as provider:
        error, elapsed = await expect_error(consume(provider), LlmTimeoutError)
    assert "no event for 1.5 s" in str(error) and "empty deltas" in str(error)
    assert elapsed < 15.0  # the drip would go on for 30 s before the text


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_real_events_reset_the_idle_timeout(kind: str, llm_server: LlmServer) -> None:
    # Each event comes 0.2 s after the last: 16 of them take over 3 s, twice the idle
    # timeout, while no gap between two content events comes near it (generous under load).
    words = [f"w{i} " for i in range(16)]
    chunks = [encode_sse([event]) for event in text_stream(kind, words)]
    llm_server.reply(Reply(200, content_type="text/event-stream", chunks=chunks, chunk_delay=0.2))
    async with make(kind, llm_server, idle_timeout=1.5) as provider:
        events_seen, _ = await bounded(consume(provider))
    assert events_seen[-1].response.text == "".join(words)


async def test_a_non_streamed_reply_that_drips_times_out(llm_server: LlmServer) -> None:
    body = json.dumps(openai_completion("x" * 200)).encode()
    llm_server.reply_drip(body, every=0.2, content_type="application/json")
    async with make("openai", llm_server, idle_timeout=0.8) as provider:
        error, elapsed = await expect_error(provider.complete(REQUEST), LlmTimeoutError)
    assert "no complete reply within 0.8 s" in str(error)
    assert elapsed < 10.0  # the drip would go on for over a minute


def test_idle_timeout_defaults_to_the_read_timeout(llm_server: LlmServer) -> None:
    assert make("openai", llm_server).limits.idle_timeout == 600.0
    assert make("openai", llm_server, timeout=30).limits.idle_timeout == 30.0
    assert make("openai", llm_server, timeout=30, idle_timeout=5).limits.idle_timeout == 5.0
    assert make("openai", llm_server).limits.call_timeout is None
    assert make("openai", llm_server).limits.max_reply_bytes == DEFAULT_MAX_REPLY_BYTES == 8 << 20


@pytest.mark.parametrize(
    "options",
    [
        {"idle_timeout": 0},
        {"idle_timeout": -1.0},
        {"idle_timeout": float("nan")},
        {"call_timeout": float("inf")},
        {"call_timeout": "10"},
        {"max_reply_bytes": 0},
        {"max_reply_bytes": 1.5},
        {"max_reply_bytes": True},
    ],
)
def test_bad_limits_are_refused(llm_server: LlmServer, options: dict[str, Any]) -> None:
    name = next(iter(options))
    with pytest.raises(ConfigError, match=name):
        make("openai", llm_server, **options)


# -- the per-call deadline ----------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_call_timeout_bounds_a_stream_that_keeps_sending(
    kind: str, llm_server: LlmServer
) -> None:
    # Real events every 0.1 s for 30 s: the idle timeout never fires, the deadline does.
    chunks = [encode_sse([event]) for event in text_stream(kind, [f"{i} " for i in range(300)])]
    llm_server.reply(Reply(200, content_type="text/event-stream", chunks=chunks, chunk_delay=0.1))
    seen: list[Any] = []

    async def run() -> None:
        async for event in provider.stream(REQUEST):
            seen.append(event)

    async with make(kind, llm_server, idle_timeout=5, call_timeout=1.0) as provider:
        error, elapsed = await expect_error(run(), LlmTimeoutError)
    assert "deadline of 1 s (call_timeout)" in str(error)
    assert seen  # text did arrive before the deadline
    assert elapsed < 10.0  # the stream would go on for 30 s


async def test_call_timeout_covers_retries_and_backoff(llm_server: LlmServer) -> None:
    for _ in range(4):
        llm_server.reply_json(
            {"error": {"message": "busy", "type": "server_error"}},
            status=503,
            headers={"Retry-After": "30"},
        )
    async with make("openai", llm_server, max_retries=3, call_timeout=1.0) as provider:
        error, elapsed = await expect_error(provider.complete(REQUEST), ServiceUnavailableError)
    # The 30 s backoff would pass the deadline: the server's own error is raised at once.
    assert "HTTP 503" in str(error)
    assert len(llm_server.requests) == 1
    assert elapsed < 10.0


async def test_call_timeout_bounds_a_slow_non_streamed_reply(llm_server: LlmServer) -> None:
    llm_server.reply_json(openai_completion(), delay=30.0)
    async with make("openai", llm_server, call_timeout=0.5) as provider:
        error, elapsed = await expect_error(provider.complete(REQUEST), LlmTimeoutError)
    assert "call_timeout" in str(error)
    assert elapsed < 10.0  # the reply would come after 30 s


# -- the reply cap ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_a_streamed_reply_over_the_cap_is_refused(kind: str, llm_server: LlmServer) -> None:
    llm_server.reply_sse(text_stream(kind, ["y" * 1000] * 200), chunk_size=4096, chunk_delay=0)
    async with make(kind, llm_server, max_reply_bytes=50_000) as provider:
        error, _ = await expect_error(consume(provider), ResponseTooLargeError)
    assert isinstance(error, ResponseTooLargeError) and isinstance(error, MalformedResponseError)
    assert error.limit_bytes == 50_000
    assert "max_reply_bytes" in str(error)
    assert len(llm_server.requests) == 1  # not retried


async def test_a_declared_size_over_the_cap_is_refused_unread(llm_server: LlmServer) -> None:
    body = json.dumps(openai_completion("z" * 3_000_000)).encode()
    llm_server.reply_raw(body)
    async with make("openai", llm_server, max_reply_bytes=1_000_000) as provider:
        error, _ = await expect_error(provider.complete(REQUEST), ResponseTooLargeError)
    assert f"{len(body)} bytes" in str(error)


async def test_a_chunked_reply_over_the_cap_is_refused(llm_server: LlmServer) -> None:
    body = json.dumps(openai_completion("z" * 300_000)).encode()
    chunks = [body[i : i + 16384] for i in range(0, len(body), 16384)]
    llm_server.reply(Reply(200, content_type="application/json", chunks=chunks))
    async with make("anthropic", llm_server, max_reply_bytes=100_000) as provider:
        error, _ = await expect_error(provider.complete(REQUEST), ResponseTooLargeError)
    assert "more than 100000 bytes" in str(error)


async def test_a_reply_under_the_cap_is_read_whole(llm_server: LlmServer) -> None:
    llm_server.reply_json(openai_completion("w" * 90_000))
    async with make("openai", llm_server, max_reply_bytes=100_000) as provider:
        response, _ = await bounded(provider.complete(REQUEST))
    assert len(response.text) == 90_000
