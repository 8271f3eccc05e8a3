"""Errors a program can act on: overflow with the server's figures, fields, 404s, HTML pages.

The error bodies are written the way each server writes them (see
``agentcore/providers/_overflow.py`` for where each wording comes from).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentcore.errors import (
    BadRequestError,
    ContextWindowExceededError,
    LlmError,
    MalformedResponseError,
    ModelNotFoundError,
    ServiceUnavailableError,
)
from agentcore.llm import LlmRequest
from agentcore.messages import Message
from agentcore.providers import AnthropicProvider, OpenAIProvider, OpenAIResponsesProvider
from agentcore.providers._base import HttpProvider
from agentcore.providers._errors import MAX_BODY_CHARS

from .conftest import ANTHROPIC_KEY
from .loopback import LlmServer
from .payloads import anthropic_stream, openai_chunk
from .responses_payloads import responses_stream

REQUEST = LlmRequest([Message.user("Hi")])


def make(kind: str, server: LlmServer, **options: Any) -> HttpProvider:
    options.setdefault("backoff_base", 0.001)
    options.setdefault("backoff_max", 0.002)
    if kind == "anthropic":
        return AnthropicProvider(
            "claude-sonnet-4-5", base_url=server.url, api_key=ANTHROPIC_KEY, **options
        )
    if kind == "responses":
        return OpenAIResponsesProvider("some-model", base_url=server.openai_url, **options)
    return OpenAIProvider("some-model", base_url=server.openai_url, **options)


async def call(provider: HttpProvider, stream: bool) -> Any:
    if stream:
        return [event async for event in provider.stream(REQUEST)]
    return await provider.complete(REQUEST)


def openai_style(message: str, error_type: str, code: Any = None, **extra: Any) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code, **extra}}


# (server, kind of provider, HTTP status, body, prompt, limit, requested)
OVERFLOWS: list[tuple[str, str, int, dict[str, Any], int | None, int | None, int | None]] = [
    (
        "openai",
        "openai",
        400,
        openai_style(
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 130412 tokens. Please reduce the length of the messages.",
            "invalid_request_error",
            "context_length_exceeded",
        ),
        130412,
        128000,
        None,
    ),
    (
        "openai-responses",
        "responses",
        400,
        openai_style(
            "Your input exceeds the context window of this model. This model's maximum "
            "context length is 400000 tokens. However, your messages resulted in 401200 tokens.",
            "invalid_request_error",
            "context_length_exceeded",
        ),
        401200,
        400000,
        None,
    ),
    (
        "anthropic",
        "anthropic",
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 208310 tokens > 200000 maximum",
            },
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        },
        208310,
        200000,
        None,
    ),
    (
        "anthropic-max-tokens",
        "anthropic",
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "input length and `max_tokens` exceed context limit: 198000 + 8192 "
                "> 200000, decrease input length or `max_tokens` and try again",
            },
        },
        198000,
        200000,
        206192,
    ),
    (
        "vllm",
        "openai",
        400,
        openai_style(
            "This model's maximum context length is 2048 tokens. However, you requested 1024 "
            "output tokens and your prompt contains at least 2049 input tokens, for a total of "
            "at least 3073 tokens. Please reduce the length of the input prompt or the number "
            "of requested output tokens. (parameter=input_tokens, value=2049)",
            "BadRequestError",
            400,
        ),
        2049,
        2048,
        3073,
    ),
    (
        "vllm-input-only",
        "openai",
        400,
        openai_style(
            "This model's maximum context length is 32768 tokens. However, your request has "
            "33000 input tokens. Please reduce the length of the input messages.",
            "BadRequestError",
            400,
        ),
        33000,
        32768,
        None,
    ),
    (
        "vllm-legacy",
        "openai",
        400,
        {
            "object": "error",
            "message": "This model's maximum context length is 4096 tokens. However, you "
            "requested 5000 tokens (3976 in the messages, 1024 in the completion). Please "
            "reduce the length of the messages or completion.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
        3976,
        4096,
        5000,
    ),
    (
        "llama.cpp",
        "openai",
        400,
        openai_style(
            "request (4476 tokens) exceeds the available context size (4096 tokens), "
            "try increasing it",
            "exceed_context_size_error",
            400,
            n_prompt_tokens=4476,
            n_ctx=4096,
        ),
        4476,
        4096,
        None,
    ),
    (
        "llama-cpp-python",
        "openai",
        400,
        openai_style(
            "This model's maximum context length is 2048 tokens. However, you requested 3367 "
            "tokens (2343 in the messages, 1024 in the completion). Please reduce the length "
            "of the messages or completion.",
            "invalid_request_error",
            "context_length_exceeded",
        ),
        2343,
        2048,
        3367,
    ),
    (
        "llama-cpp-python-no-max-tokens",
        "openai",
        400,
        openai_style(
            "This model's maximum context length is 2048 tokens. However, you requested 2057 "
            "tokens (2057 in the messages, None in the completion). Please reduce the length "
            "of the messages or completion.",
            "invalid_request_error",
            "context_length_exceeded",
        ),
        2057,
        2048,
        2057,
    ),
    (
        "llama-cpp-python-raw",
        "openai",
        500,
        openai_style(
            "Requested tokens (2343) exceed context window of 2048", "internal_server_error"
        ),
        2343,
        2048,
        None,
    ),
    (
        "ollama",
        "openai",
        400,
        openai_style("the input length exceeds the context length", "invalid_request_error"),
        None,
        None,
        None,
    ),
    (
        "ollama-500",
        "openai",
        500,
        openai_style("the input length exceeds the context length", "api_error"),
        None,
        None,
        None,
    ),
]


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize(
    ("server", "kind", "status", "body", "prompt", "limit", "requested"),
    OVERFLOWS,
    ids=[case[0] for case in OVERFLOWS],
)
async def test_overflow_carries_the_servers_figures_and_is_never_retried(
    llm_server: LlmServer,
    stream: bool,
    server: str,
    kind: str,
    status: int,
    body: dict[str, Any],
    prompt: int | None,
    limit: int | None,
    requested: int | None,
) -> None:
    for _ in range(3):
        llm_server.reply_json(body, status=status, headers={"x-request-id": "req-42"})
    async with make(kind, llm_server) as provider:
        with pytest.raises(ContextWindowExceededError) as info:
            await call(provider, stream)
    error = info.value
    assert isinstance(error, BadRequestError)
    assert (error.prompt_tokens, error.limit_tokens, error.requested_tokens) == (
        prompt,
        limit,
        requested,
    )
    assert error.status_code == status
    assert error.request_id == "req-42"
    assert error.body is not None and json.loads(error.body) == body
    assert "context window" in str(error)
    if server == "anthropic-max-tokens":
        assert limit is not None and prompt is not None
        # Never retried as it was; sent once more with the reply the window leaves.
        first, second = (request.json for request in llm_server.requests)
        assert (first["max_tokens"], second["max_tokens"]) == (4096, limit - prompt)
    else:
        assert len(llm_server.requests) == 1  # never retried, not even the HTTP 500 ones


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_overflow_in_an_error_event_of_a_stream(kind: str, llm_server: LlmServer) -> None:
    error_event: Any
    if kind == "responses":
        error_event = {
            "type": "error",
            "code": "context_length_exceeded",
            "message": "This model's maximum context length is 4096 tokens. However, your "
            "messages resulted in 4476 tokens.",
            "param": None,
            "sequence_number": 2,
        }
        events = [*responses_stream()[:2], ("error", error_event)]
        llm_server.reply_sse(events, headers={"x-request-id": "req-7"})
    elif kind == "openai":
        error_event = openai_style(
            "request (4476 tokens) exceeds the available context size (4096 tokens), "
            "try increasing it",
            "exceed_context_size_error",
            400,
            n_prompt_tokens=4476,
            n_ctx=4096,
        )
        llm_server.reply_sse([error_event], headers={"x-request-id": "req-7"})
    else:
        error_event = {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 4476 tokens > 4096 maximum",
            },
        }
        events = [*anthropic_stream()[:1], ("error", error_event)]
        llm_server.reply_sse(events, headers={"request-id": "req-7"})
    async with make(kind, llm_server) as provider:
        with pytest.raises(ContextWindowExceededError) as info:
            await call(provider, stream=True)
    assert (info.value.prompt_tokens, info.value.limit_tokens) == (4476, 4096)
    assert info.value.request_id == "req-7"
    assert info.value.body is not None and "4476" in info.value.body
    assert len(llm_server.requests) == 1


async def test_other_bad_requests_are_not_overflow(llm_server: LlmServer) -> None:
    llm_server.reply_json(
        openai_style("Invalid 'messages[1].content': string too long.", "invalid_request_error"),
        status=400,
    )
    async with make("openai", llm_server) as provider:
        with pytest.raises(BadRequestError) as info:
            await provider.complete(REQUEST)
    assert not isinstance(info.value, ContextWindowExceededError)


# -- the fields every error carries -------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize(
    ("kind", "header", "body", "code"),
    [
        (
            "openai",
            "x-request-id",
            openai_style("You exceeded your current quota", "insufficient_quota", "quota"),
            "quota",
        ),
        (
            "anthropic",
            "request-id",
            {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
            "rate_limit_error",
        ),
    ],
)
async def test_errors_carry_status_code_body_and_request_id(
    llm_server: LlmServer,
    stream: bool,
    kind: str,
    header: str,
    body: dict[str, Any],
    code: str,
) -> None:
    llm_server.reply_json(body, status=429, headers={header: "req_abc123", "Retry-After": "90"})
    async with make(kind, llm_server, max_retries=0) as provider:
        with pytest.raises(LlmError) as info:
            await call(provider, stream)
    error = info.value
    assert (error.status_code, error.code, error.request_id) == (429, code, "req_abc123")
    assert error.body is not None and json.loads(error.body) == body


async def test_the_body_on_an_error_is_cut(llm_server: LlmServer) -> None:
    llm_server.reply_json(openai_style("x" * 20_000, "invalid_request_error"), status=400)
    async with make("openai", llm_server) as provider:
        with pytest.raises(BadRequestError) as info:
            await provider.complete(REQUEST)
    assert info.value.body is not None
    assert len(info.value.body) <= MAX_BODY_CHARS + 1
    assert len(str(info.value)) < 700


# -- unknown models and wrong URLs ----------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
@pytest.mark.parametrize(
    ("kind", "body", "code"),
    [
        (
            "openai",
            openai_style(
                "The model `gpt-9` does not exist or you do not have access to it.",
                "invalid_request_error",
                "model_not_found",
            ),
            "model_not_found",
        ),
        (
            "anthropic",
            {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-9"}},
            "not_found_error",
        ),
        (
            "openai",  # Ollama
            openai_style('model "llama9" not found, try pulling it first', "not_found_error"),
            "not_found_error",
        ),
    ],
)
async def test_an_unknown_model_is_its_own_error(
    llm_server: LlmServer, stream: bool, kind: str, body: dict[str, Any], code: str
) -> None:
    llm_server.reply_json(body, status=404)
    async with make(kind, llm_server) as provider:
        with pytest.raises(ModelNotFoundError) as info:
            await call(provider, stream)
    assert isinstance(info.value, BadRequestError)
    assert (info.value.status_code, info.value.code) == (404, code)
    assert "model" in str(info.value)
    assert len(llm_server.requests) == 1


async def test_a_404_without_a_model_points_at_base_url(llm_server: LlmServer) -> None:
    llm_server.reply_raw("404 page not found", status=404, content_type="text/plain")
    async with make("openai", llm_server) as provider:
        with pytest.raises(BadRequestError) as info:
            await provider.complete(REQUEST)
    assert not isinstance(info.value, ModelNotFoundError)
    assert "is base_url right?" in str(info.value)


PAGE = (
    "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>"
    "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_an_html_page_answering_an_api_call_says_so(
    kind: str, stream: bool, llm_server: LlmServer
) -> None:
    # A wrong base_url: a web site answers the POST with its home page.
    llm_server.reply_raw(
        "<html><head><title>Welcome</title></head><body>Hello</body></html>",
        content_type="text/html; charset=utf-8",
    )
    async with make(kind, llm_server) as provider:
        with pytest.raises(MalformedResponseError) as info:
            await call(provider, stream)
    message = str(info.value)
    assert "answered with an HTML page ('Welcome'), not JSON" in message
    assert "is base_url right?" in message
    assert "probably dropped" not in message


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_a_proxy_error_page_is_retried_then_named(
    stream: bool, llm_server: LlmServer
) -> None:
    for _ in range(2):
        llm_server.reply_raw(PAGE, status=502, content_type="text/html")
    async with make("openai", llm_server, max_retries=1) as provider:
        with pytest.raises(ServiceUnavailableError) as info:
            await call(provider, stream)
    assert "HTML page ('502 Bad Gateway')" in str(info.value)
    assert info.value.status_code == 502
    assert len(llm_server.requests) == 2


async def test_an_html_page_without_a_content_type_is_recognised(llm_server: LlmServer) -> None:
    llm_server.reply_raw(PAGE, content_type="application/octet-stream")
    async with make("openai", llm_server) as provider:
        with pytest.raises(MalformedResponseError, match="HTML page"):
            await provider.complete(REQUEST)


async def test_a_chunk_error_from_openai_keeps_its_code(llm_server: LlmServer) -> None:
    llm_server.reply_sse(
        [
            openai_chunk({"content": "Hi"}),
            openai_style("The server is overloaded", "server_error", "overloaded"),
        ]
    )
    async with make("openai", llm_server) as provider:
        with pytest.raises(ServiceUnavailableError) as info:
            await call(provider, stream=True)
    assert info.value.code == "overloaded"
    assert info.value.status_code is None  # the HTTP status was 200; the event named none


async def test_a_stream_answered_by_an_untyped_html_page_says_so(llm_server: LlmServer) -> None:
    llm_server.reply_raw(PAGE.replace("502 Bad Gateway", "Sign in"), content_type="text/plain")
    async with make("openai", llm_server, max_retries=0) as provider:
        with pytest.raises(MalformedResponseError) as info:
            await call(provider, stream=True)
    assert "HTML page ('Sign in'), not JSON" in str(info.value)
    assert "probably dropped" not in str(info.value)


async def test_a_stream_answered_with_plain_text_says_what_came(llm_server: LlmServer) -> None:
    llm_server.reply_raw("upstream connect error", content_type="text/plain")
    async with make("anthropic", llm_server, max_retries=0) as provider:
        with pytest.raises(MalformedResponseError, match="holds no server-sent event") as info:
            await call(provider, stream=True)
    assert "upstream connect error" in str(info.value)


def test_every_llm_error_takes_the_same_details() -> None:
    import agentcore.errors as errors

    kinds = [
        cls
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.LlmError)
    ]
    assert len(kinds) >= 10
    for kind in kinds:
        error = kind("failed", status_code=418, code="teapot", body="{}", request_id="req-1")
        assert (error.status_code, error.code, error.body, error.request_id) == (
            418,
            "teapot",
            "{}",
            "req-1",
        )
        assert str(error) == "failed"
    limited = errors.RateLimitError("slow down", retry_after=2.5, status_code=429)
    assert (limited.retry_after, limited.status_code, limited.code) == (2.5, 429, None)
    overflow = errors.ContextWindowExceededError("too long", limit_tokens=2048, code="x")
    assert (overflow.limit_tokens, overflow.prompt_tokens, overflow.code) == (2048, None, "x")


def test_an_llm_error_refuses_a_detail_its_kind_does_not_have() -> None:
    import agentcore.errors as errors

    with pytest.raises(TypeError, match="AuthenticationError takes no retry_after"):
        errors.AuthenticationError("denied", retry_after=1.0)
    tiny = errors.ResponseTooLargeError("big", limit_bytes=10, status_code=200)
    assert (tiny.limit_bytes, tiny.status_code, tiny.request_id) == (10, 200, None)
    assert errors.ModelNotFoundError.details == ("status_code", "code", "body", "request_id")
