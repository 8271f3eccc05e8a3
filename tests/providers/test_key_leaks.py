"""The API key never leaks: 720 error surfaces, walked down to every object they hold.

Every kind of failure a provider can meet (a reset connection, a refused
one, each timeout, every HTTP status class, broken and oversized bodies,
HTML pages, a server that echoes the key back) is provoked on each of the
three providers (Chat Completions, Anthropic, Responses: 240 surfaces each)
with and without streaming, with the key in the header, in the
base URL's password, as the base URL's user name, in both places, and in
``headers=`` (Azure's ``api-key``, a ready-made ``Authorization``). Each
error is walked recursively (``str``, ``repr``, ``args``, ``__dict__``,
``__cause__``, ``__context__`` and every object they reach, httpx requests
and their headers included), and so is every log record; the key, and the
Basic credentials made from it, appear nowhere.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from agentcore.errors import LlmError, MalformedResponseError
from agentcore.llm import LlmRequest
from agentcore.messages import Message
from agentcore.providers import AnthropicProvider, OpenAIProvider, OpenAIResponsesProvider
from agentcore.providers._base import HttpProvider

from .loopback import LlmServer
from .payloads import (
    anthropic_error,
    anthropic_stream,
    openai_completion,
    openai_error,
    openai_stream,
)
from .responses_payloads import call_item, responses_response, responses_stream

KEY = "sk-live-LEAKCHECK-7d1e9f3a5c2b8e40"
OTHER_KEY = "sk-ant-harmless-0000"  # Anthropic needs a key even when KEY sits in the URL.
REQUEST = LlmRequest([Message.user("Hi")])
PLACEMENTS = (
    "header",
    "url-password",
    "url-user",
    "both",
    "headers-api-key",
    "headers-authorization",
)
"""Where the key is given: ``api_key=``, the base URL, both, or ``headers=`` (Azure's
``api-key``, a ready-made ``Authorization`` header)."""
HEADER_PLACEMENTS = {
    "headers-api-key": {"api-key": KEY},
    "headers-authorization": {"Authorization": f"Bearer {KEY}"},
}
FORBIDDEN = (
    KEY,
    base64.b64encode(f"user:{KEY}".encode()).decode(),
    base64.b64encode(f"{KEY}:".encode()).decode(),
)


def body(kind: str, message: str, error_type: str = "invalid_request_error") -> dict[str, Any]:
    if kind != "anthropic":
        return openai_error(message, error_type)
    return anthropic_error(error_type, message)


def echo(kind: str, error_type: str = "invalid_request_error") -> dict[str, Any]:
    return body(kind, f"Incorrect API key provided: {KEY}", error_type)


# Each scenario queues the server's replies and returns extra provider options.
Scenario = Callable[[LlmServer, str], dict[str, Any]]


def reset(server: LlmServer, kind: str) -> dict[str, Any]:
    server.reply_reset()
    server.reply_reset()
    return {}


def refused(server: LlmServer, kind: str) -> dict[str, Any]:
    return {"port": "unused"}


TIMEOUT = 0.1
"""The timeouts the timeout scenarios set: each of their 72 calls waits this long.

Far below the server's delay (3 s), so the timeout fires; still far above a
loopback connection, so it fires while waiting for the reply.
"""


def read_timeout(server: LlmServer, kind: str) -> dict[str, Any]:
    server.reply_json(openai_completion(), delay=3.0)
    return {"timeout": TIMEOUT}


def idle_timeout(server: LlmServer, kind: str) -> dict[str, Any]:
    server.reply_drip(b": ping\n\n" * 100, every=TIMEOUT / 4, chunk_size=8)
    return {"idle_timeout": TIMEOUT}


def call_timeout(server: LlmServer, kind: str) -> dict[str, Any]:
    server.reply_json(openai_completion(), delay=3.0)
    return {"call_timeout": TIMEOUT}


def status(code: int, error_type: str, *, twice: bool = False) -> Scenario:
    def scenario(server: LlmServer, kind: str) -> dict[str, Any]:
        for _ in range(2 if twice else 1):
            server.reply_json(
                echo(kind, error_type), status=code, headers={"x-request-id": "req-1"}
            )
        return {}

    return scenario


def overflow(server: LlmServer, kind: str) -> dict[str, Any]:
    server.reply_json(
        body(kind, f"prompt is too long: 9000 tokens > 8000 maximum ({KEY})"), status=400
    )
    return {}


def not_found(server: LlmServer, kind: str) -> dict[str, Any]:
    server.reply_json(
        body(kind, f"The model `{KEY}` does not exist", "not_found_error"), status=404
    )
    return {}


def html(code: int) -> Scenario:
    def scenario(server: LlmServer, kind: str) -> dict[str, Any]:
        page = f"<html><head><title>Error {KEY}</title></head><body>{KEY}</body></html>"
        for _ in range(2):
            server.reply_raw(page, status=code, content_type="text/html")
        return {}

    return scenario


def invalid_json(server: LlmServer, kind: str) -> dict[str, Any]:
    server.reply_raw(f'{{"echo": "{KEY}", ', content_type="application/json")
    return {}


def missing_fields(server: LlmServer, kind: str) -> dict[str, Any]:
    server.reply_json({"id": KEY, "model": KEY})
    return {}


def too_large(server: LlmServer, kind: str) -> dict[str, Any]:
    server.reply_sse(openai_stream([KEY * 200]), chunk_size=1024)
    return {"max_reply_bytes": 2000}


def dropped(server: LlmServer, kind: str) -> dict[str, Any]:
    events = responses_stream([KEY, KEY]) if kind == "responses" else openai_stream([KEY, KEY])
    for _ in range(2):
        server.reply_sse(events, drop_after_bytes=120)
    return {}


def error_event(server: LlmServer, kind: str) -> dict[str, Any]:
    if kind == "responses":
        event = {"type": "error", "code": "server_error", "message": f"bad key {KEY}"}
        for _ in range(2):
            server.reply_sse([("error", event)] * 2)
    elif kind == "openai":
        server.reply_sse([{"error": {"message": f"bad key {KEY}", "type": "server_error"}}] * 2)
        server.reply_sse([{"error": {"message": f"bad key {KEY}", "type": "server_error"}}] * 2)
    else:
        for _ in range(2):
            server.reply_sse([("error", echo(kind, "overloaded_error"))])
    return {}


def closed(server: LlmServer, kind: str) -> dict[str, Any]:
    return {"closed": True}


SCENARIOS: dict[str, Scenario] = {
    "connection reset": reset,
    "connection refused": refused,
    "read timeout": read_timeout,
    "idle timeout": idle_timeout,
    "call timeout": call_timeout,
    "HTTP 400": status(400, "invalid_request_error"),
    "HTTP 401": status(401, "authentication_error"),
    "HTTP 403": status(403, "permission_error"),
    "HTTP 404 model": not_found,
    "HTTP 429": status(429, "rate_limit_error", twice=True),
    "HTTP 500": status(500, "api_error", twice=True),
    "overflow": overflow,
    "HTML 502": html(502),
    "HTML 200": html(200),
    "invalid JSON": invalid_json,
    "missing fields": missing_fields,
    "reply too large": too_large,
    "dropped mid-body": dropped,
    "error event": error_event,
    "closed provider": closed,
}


def base_url(server: LlmServer, kind: str, placement: str, port: str | None) -> str:
    root = server.url if port is None else f"http://127.0.0.1:{port}"
    root = root + ("" if kind == "anthropic" else "/v1")
    host = root.removeprefix("http://")
    if placement in ("url-password", "both"):
        return f"http://user:{KEY}@{host}"
    if placement == "url-user":
        return f"http://{KEY}@{host}"
    return root


def make(
    kind: str, server: LlmServer, placement: str, unused_port: int, options: dict[str, Any]
) -> HttpProvider:
    port = str(unused_port) if options.pop("port", None) else None
    url = base_url(server, kind, placement, port)
    header_key = KEY if placement in ("header", "both") else None
    common: dict[str, Any] = {"max_retries": 1, "backoff_base": 0.001, "backoff_max": 0.002}
    if placement in HEADER_PLACEMENTS:
        common["headers"] = HEADER_PLACEMENTS[placement]
    common.update(options)
    if kind == "openai":
        return OpenAIProvider("gpt-4o-mini", base_url=url, api_key=header_key, **common)
    if kind == "responses":
        return OpenAIResponsesProvider("gpt-5-mini", base_url=url, api_key=header_key, **common)
    return AnthropicProvider(
        "claude-sonnet-4-5", base_url=url, api_key=header_key or OTHER_KEY, **common
    )


def texts(obj: Any, seen: set[int] | None = None, depth: int = 0) -> Iterator[str]:
    """Every text reachable from ``obj``: strings, bytes, reprs, and what attributes hold."""
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 12:
        return
    seen.add(id(obj))
    if isinstance(obj, str):
        yield obj
        return
    if isinstance(obj, (bytes, bytearray)):
        yield bytes(obj).decode("latin-1")
        return
    if obj is None or isinstance(obj, (bool, int, float)):
        return
    yield repr(obj)
    yield str(obj)
    if isinstance(obj, BaseException):
        for part in (obj.args, obj.__cause__, obj.__context__):
            yield from texts(part, seen, depth + 1)
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            yield from texts(key, seen, depth + 1)
            yield from texts(value, seen, depth + 1)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for item in obj:
            yield from texts(item, seen, depth + 1)
    for name in getattr(type(obj), "__slots__", ()):
        yield from texts(getattr(obj, name, None), seen, depth + 1)
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        yield from texts(vars(obj), seen, depth + 1)


def leaks(obj: Any) -> list[str]:
    return [text for text in texts(obj) if any(secret in text for secret in FORBIDDEN)]


async def provoke(provider: HttpProvider, stream: bool, closed: bool) -> LlmError:
    if closed:
        await provider.aclose()
    try:
        if stream:
            async for _ in provider.stream(REQUEST):
                pass
        else:
            await provider.complete(REQUEST)
    except LlmError as exc:
        return exc
    raise AssertionError("the call was expected to fail")


def test_the_walker_finds_a_key_in_request_headers() -> None:
    import httpx

    request = httpx.Request("POST", "http://h/v1", headers={"authorization": f"Bearer {KEY}"})
    error = LlmError("x")
    error.__cause__ = httpx.ReadTimeout("slow", request=request)
    assert "[secure]" in repr(request.headers)  # httpx hides it from repr, not from the walk
    assert leaks(error)


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_no_key_in_any_error_surface_or_log(
    llm_server: LlmServer, unused_port: int, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    caplog.set_level(logging.DEBUG)
    checked = 0
    found: dict[str, list[str]] = {}
    kinds: set[str] = set()
    for name, scenario in SCENARIOS.items():
        for stream in (False, True):
            for placement in PLACEMENTS:
                options = scenario(llm_server, kind)
                is_closed = bool(options.pop("closed", False))
                provider = make(kind, llm_server, placement, unused_port, options)
                async with provider:
                    assert not leaks(provider.__repr__())
                    assert not leaks(provider.base_url)
                    error = await provoke(provider, stream, is_closed)
                kinds.add(type(error).__name__)
                checked += 1
                case = f"{name} / {kind} / {'stream' if stream else 'complete'} / {placement}"
                if leaked := leaks(error):
                    found[case] = leaked[:2]
                while llm_server.pending:  # a scenario's spare replies (a retry not made)
                    llm_server._replies.popleft()
    records = [
        text
        for record in caplog.records
        for text in (record.getMessage(), *texts(record.args), *texts(record.exc_info))
        if any(secret in text for secret in FORBIDDEN)
    ]
    assert not found, found
    assert not records, records[:3]
    assert checked == len(SCENARIOS) * 2 * len(PLACEMENTS) == 240
    assert len(caplog.records) > 50  # retries, httpx and httpcore lines were all checked
    assert kinds >= {
        "ServiceUnavailableError",
        "LlmTimeoutError",
        "BadRequestError",
        "AuthenticationError",
        "ModelNotFoundError",
        "RateLimitError",
        "ContextWindowExceededError",
        "MalformedResponseError",
        "ResponseTooLargeError",
        "LlmError",
    }
    # The key did reach the server where it belongs: in the header or as Basic credentials.
    sent = [
        r.headers.get("authorization", r.headers.get("x-api-key", "")) for r in llm_server.requests
    ]
    assert any(KEY in value for value in sent)
    assert any(value.startswith("Basic ") for value in sent)
    assert any(r.headers.get("api-key") == KEY for r in llm_server.requests)


def bad_arguments(server: LlmServer, kind: str, stream: bool) -> None:
    """A reply whose tool call has arguments that are not JSON, quoting the key."""
    raw = f'{{"note": "{KEY}", '
    if kind == "openai" and not stream:
        call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": raw}}
        server.reply_json(openai_completion(None, tool_calls=[call]))
    elif kind == "responses" and not stream:
        server.reply_json(responses_response([call_item("call_1", "f", raw)]))
    elif kind == "responses":
        server.reply_sse(responses_stream([], tool_calls=[("call_1", "f", [raw])]))
    elif kind == "openai":
        server.reply_sse(openai_stream([], tool_calls=[("call_1", "f", [raw])]))
    else:  # Anthropic's non-streamed input is an object: only a stream can break it.
        server.reply_sse(anthropic_stream((("tool_use", ("toolu_1", "f", [raw])),)))


@pytest.mark.parametrize("placement", PLACEMENTS)
@pytest.mark.parametrize(
    ("kind", "stream"),
    [
        ("openai", False),
        ("openai", True),
        ("anthropic", True),
        ("responses", False),
        ("responses", True),
    ],
)
async def test_no_key_in_the_tool_argument_snippet_of_a_malformed_reply(
    llm_server: LlmServer, unused_port: int, kind: str, stream: bool, placement: str
) -> None:
    bad_arguments(llm_server, kind, stream)
    async with make(kind, llm_server, placement, unused_port, {}) as provider:
        error = await provoke(provider, stream, closed=False)
    assert isinstance(error, MalformedResponseError)
    assert "are not valid JSON" in str(error) and '{"note": "***", ' in str(error)
    assert not leaks(error)
