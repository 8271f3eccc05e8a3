from __future__ import annotations

import itertools
from datetime import datetime, timezone

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcore.errors import LlmTimeoutError, ServiceUnavailableError
from agentcore.llm import LlmRequest
from agentcore.messages import Message
from agentcore.providers import OpenAIProvider
from agentcore.providers._errors import server_message
from agentcore.providers._retry import MAX_RETRY_AFTER, RetryPolicy, parse_retry_after
from agentcore.providers._sse import SseEvent, SseParser

from .payloads import openai_completion

REQUEST = LlmRequest([Message.user("Hi")])

# -- retry policy ------------------------------------------------------------


def test_backoff_grows_exponentially_with_jitter_and_cap() -> None:
    policy = RetryPolicy(max_retries=10, backoff_base=1.0, backoff_max=5.0)
    for retry, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (9, 5.0)]:
        for _ in range(50):
            delay = policy.delay(retry)
            assert delay is not None
            assert ceiling / 2 <= delay <= ceiling


def test_backoff_stops_at_max_retries() -> None:
    policy = RetryPolicy(max_retries=2)
    assert policy.delay(1) is not None
    assert policy.delay(2) is None


def test_retry_after_is_used_as_is_up_to_the_limit() -> None:
    policy = RetryPolicy(max_retries=3, backoff_base=0.01, backoff_max=0.02)
    assert policy.delay(0, retry_after=4.5) == 4.5
    assert policy.delay(0, retry_after=MAX_RETRY_AFTER) == MAX_RETRY_AFTER
    assert policy.delay(0, retry_after=MAX_RETRY_AFTER + 1) is None


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"Retry-After": "2"}, 2.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "-3"}, None),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"Retry-After": "Sat, 01 Nov 2025 12:00:30 GMT"}, 30.0),
        ({"Retry-After": "Sat, 01 Nov 2025 11:00:00 GMT"}, 0.0),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    now = datetime(2025, 11, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after(headers, now=now) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"error": {"message": "bad thing", "type": "x"}}', "bad thing"),
        (
            b'{"type": "error", "error": {"type": "x", "message": "anthropic says"}}',
            "anthropic says",
        ),
        (b'{"error": "plain string"}', "plain string"),
        (b'{"detail": "fastapi style"}', "fastapi style"),
        (b"<html>oops</html>", "an HTML page"),
        (b"<!DOCTYPE html><title>502 Bad Gateway</title>", "502 Bad Gateway"),
        (b"", "(empty body)"),
    ],
)
def test_server_message(body: bytes, expected: str) -> None:
    assert server_message(body) == expected


def test_server_message_is_cut() -> None:
    assert len(server_message(b"x" * 5000)) <= 501


# -- SSE parser --------------------------------------------------------------


def test_sse_parser_follows_the_specification() -> None:
    parser = SseParser()
    body = (
        "\ufeff: comment\n"
        "event: message_start\n"
        'data: {"a":\n'
        "data:1}\n"
        "id: 7\n"
        "retry: 10\n"
        "\n"
        "\n"
        "event: lonely\n"
        "\n"
        "data:  two spaces\n"
        "\n"
        "data: cut off at the end"
    )
    events = parser.feed(body.encode())
    assert events == [
        SseEvent("message_start", '{"a":\n1}'),
        SseEvent("message", " two spaces"),
    ]
    assert parser.pending
    assert parser.close() == []


def test_sse_line_separators_are_only_cr_and_lf() -> None:
    parser = SseParser()
    data = 'data: {"text": "a\u2028b\x85c\x0cd"}'
    assert parser.feed((data + "\r\n\r\n").encode()) == [SseEvent("message", data[6:])]


def test_sse_trailing_cr_is_completed_at_close() -> None:
    parser = SseParser()
    assert parser.feed(b"data: x\r") == []
    assert parser.feed(b"\r") == []
    assert parser.close() == [SseEvent("message", "x")]


event_names = st.one_of(
    st.none(), st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=12)
)
data_lines = st.lists(
    st.text(st.characters(exclude_characters="\r\n", exclude_categories=["Cs"]), max_size=30),
    min_size=1,
    max_size=3,
)


@settings(max_examples=80, deadline=None)
@given(
    events=st.lists(st.tuples(event_names, data_lines), min_size=1, max_size=6),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=12),
)
def test_sse_events_survive_any_chunking(
    events: list[tuple[str | None, list[str]]], newline: str, cuts: list[int]
) -> None:
    text = ""
    for name, lines in events:
        if name is not None:
            text += f"event: {name}{newline}"
        text += "".join(f"data: {line}{newline}" for line in lines)
        text += newline
    raw = text.encode("utf-8")
    points = sorted({0, len(raw), *(cut % (len(raw) + 1) for cut in cuts)})
    parser = SseParser()
    parsed = []
    for a, b in itertools.pairwise(points):
        parsed += parser.feed(raw[a:b])
    parsed += parser.close()
    assert parsed == [SseEvent(name or "message", "\n".join(lines)) for name, lines in events]


# -- transport errors with httpx.MockTransport --------------------------------


async def test_connect_errors_are_retried(sleeps: list[float]) -> None:
    attempts = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(200, json=openai_completion("third time"))

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        provider = OpenAIProvider("m", base_url="http://test/v1", http_client=client)
        assert (await provider.complete(REQUEST)).text == "third time"
        await provider.aclose()
        assert not client.is_closed  # A client passed in belongs to the caller.
    assert attempts == 3
    assert len(sleeps) == 2


async def test_connect_timeout_is_retried_read_timeout_is_not(sleeps: list[float]) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append("x")
        if len(seen) == 1:
            raise httpx.ConnectTimeout("connect timed out", request=request)
        raise httpx.ReadTimeout("read timed out", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        provider = OpenAIProvider("m", base_url="http://test/v1", http_client=client)
        with pytest.raises(LlmTimeoutError) as info:
            await provider.complete(REQUEST)
    assert len(seen) == 2
    # The httpx exception (which holds the request and its headers) is not chained.
    assert info.value.__cause__ is None
    assert info.value.__context__ is None
    assert "ReadTimeout" in str(info.value)


async def test_remote_protocol_error_is_unavailable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.RemoteProtocolError("server hung up", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        provider = OpenAIProvider("m", base_url="http://test/v1", http_client=client, max_retries=0)
        with pytest.raises(ServiceUnavailableError, match="server hung up"):
            await provider.complete(REQUEST)


async def test_timeout_is_sent_per_request_with_a_supplied_client() -> None:
    timeouts: list[dict[str, float | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        timeouts.append(request.extensions["timeout"])
        return httpx.Response(200, json=openai_completion())

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), timeout=99) as client:
        await OpenAIProvider("m", base_url="http://t/v1", http_client=client).complete(REQUEST)
        await OpenAIProvider("m", base_url="http://t/v1", http_client=client, timeout=2.5).complete(
            REQUEST
        )
    assert timeouts[0]["read"] == 99
    assert timeouts[1] == {"connect": 2.5, "read": 2.5, "write": 2.5, "pool": 2.5}


async def test_own_client_is_closed_by_the_context_manager() -> None:
    async with OpenAIProvider("m", base_url="http://t/v1") as provider:
        client = provider._api._client
        assert not client.is_closed
    assert client.is_closed
