"""What every HTTP provider does alike, tested once over ``provider_cases.CASES``.

Each test runs for every provider of ``CASES`` (Chat Completions, Responses,
Anthropic) against the loopback server; the wire bodies and expected results come from the
provider's :class:`~tests.providers.provider_cases.ProviderCase`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import pytest

from agentcore.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    LlmTimeoutError,
    MalformedResponseError,
    RateLimitError,
    ServiceUnavailableError,
)
from agentcore.llm import LlmProvider, LlmRequest, ResponseComplete, TextDelta, ToolCallDelta
from agentcore.messages import Message, TextBlock, ToolUseBlock
from agentcore.usage import Usage

from .loopback import LlmServer, encode_sse
from .provider_cases import (
    CASES,
    SHARED_BAD_KWARGS,
    SHARED_UNSUPPORTED,
    WEATHER,
    Provider,
    ProviderCase,
    collect,
    hello,
    weather_history,
)


@pytest.fixture(params=CASES, ids=[case.name for case in CASES])
def case(request: pytest.FixtureRequest) -> ProviderCase:
    """Each provider's case in turn."""
    param: ProviderCase = request.param
    return param


@pytest.fixture
async def provider(case: ProviderCase, llm_server: LlmServer) -> AsyncIterator[Provider]:
    """The case's provider on ``llm_server``, with fast backoff."""
    async with case.make(llm_server) as made:
        yield made


def _each(field: str, shared: Sequence[Any] = ()) -> list[Any]:
    """``pytest.param(case, value)`` for the shared values and each case's own ``field``."""
    return [
        pytest.param(case, value, id=f"{case.name}-{index}")
        for case in CASES
        for index, value in enumerate([*shared, *getattr(case, field)])
    ]


# -- complete ------------------------------------------------------------------


async def test_complete_text_and_wire_format(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    llm_server.reply_json(case.reply("Hello there!"))

    response = await provider.complete(hello())

    assert response.text == "Hello there!"
    assert response.message.role == "assistant"
    assert response.stop_reason == "end_turn"
    assert response.model == case.reply_model
    assert response.usage == Usage(10, 5, 0)
    [sent] = llm_server.requests
    assert sent.method == "POST"
    assert sent.path == case.path
    for name, value in case.auth_headers(case.api_key).items():
        assert sent.headers[name] == value
    for name in case.absent_headers:
        assert name not in sent.headers
    assert sent.headers["content-type"] == "application/json"
    assert sent.json == case.hello_body


async def test_is_an_llm_provider(provider: Provider) -> None:
    assert isinstance(provider, LlmProvider)


async def test_request_model_and_max_tokens_override_the_defaults(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    llm_server.reply_json(case.reply("ok", model="custom-model-1"))
    llm_server.reply_sse(case.stream(["ok"], model="custom-model-1"))

    response = await provider.complete(
        hello(model="custom-model-1", max_tokens=300, purpose="summary")
    )
    events = await collect(provider, hello(model="custom-model-1"))

    assert response.model == "custom-model-1"
    assert [r.json["model"] for r in llm_server.requests] == ["custom-model-1"] * 2
    assert llm_server.requests[0].json[case.max_tokens_key] == 300
    assert isinstance(events[-1], ResponseComplete)
    assert events[-1].response.model == "custom-model-1"


async def test_tools_and_tool_calls_both_ways(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    calls = [
        ToolUseBlock("call_a", "get_weather", {"city": "Paris"}),
        ToolUseBlock("call_b", "get_weather", {"city": "Zürich"}),
    ]
    llm_server.reply_json(case.tool_reply_wire(case.tool_reply_text, calls))

    history = weather_history("call_1", "call_2")
    response = await provider.complete(LlmRequest(history, tools=[WEATHER]))

    assert response.stop_reason == "tool_use"
    assert response.message.tool_calls == tuple(calls)
    assert response.text == (case.tool_reply_text or "")
    assert llm_server.requests[0].json["tools"] == case.tools_wire


@pytest.mark.parametrize(("case", "refused"), _each("unsupported", SHARED_UNSUPPORTED))
async def test_unsupported_content_is_refused_before_sending(
    llm_server: LlmServer,
    case: ProviderCase,
    provider: Provider,
    refused: tuple[Sequence[Message], str],
) -> None:
    messages, fragment = refused
    with pytest.raises(BadRequestError, match=fragment):
        await provider.complete(LlmRequest(list(messages)))
    assert llm_server.requests == []


async def test_usage_counts_cached_input(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    llm_server.reply_json(case.reply(usage=case.usage_wire))
    response = await provider.complete(hello())
    assert response.usage == case.usage
    assert response.usage.cache_read_tokens == case.usage.cached_input_tokens
    assert response.usage.uncached_input_tokens == case.uncached_input_tokens


@pytest.mark.parametrize(("case", "reasons"), _each("stop_reasons"))
async def test_stop_reasons(
    llm_server: LlmServer, case: ProviderCase, provider: Provider, reasons: tuple[str, str]
) -> None:
    wire, expected = reasons
    llm_server.reply_json(case.reply("x", stop_reason=wire))
    assert (await provider.complete(hello())).stop_reason == expected


async def test_environment_variables(
    llm_server: LlmServer, case: ProviderCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(case.base_url_env, case.url(llm_server))
    monkeypatch.setenv(case.key_env, "sk-from-env")
    llm_server.reply_json(case.reply())
    async with case.cls(case.model) as provider:
        assert provider.base_url == case.url(llm_server)
        await provider.complete(hello())
    for name, value in case.auth_headers("sk-from-env").items():
        assert llm_server.requests[0].headers[name] == value


def test_defaults(case: ProviderCase) -> None:
    provider = case.cls(case.model, api_key="k")
    assert provider.base_url == case.default_base_url
    assert provider.model == case.model
    assert provider.max_retries == 2


@pytest.mark.parametrize(("case", "kwargs"), _each("bad_kwargs", SHARED_BAD_KWARGS))
def test_constructor_validation(case: ProviderCase, kwargs: Mapping[str, Any]) -> None:
    with pytest.raises(ConfigError):
        case.cls(**{"model": "m", "api_key": "k", **kwargs})


# -- stream ------------------------------------------------------------------


async def test_stream_text_in_small_chunks(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    pieces = ["Bon", "jour ", "à ", "Grü", "ß ", "Gott 👋", "!"]
    llm_server.reply_sse(
        case.stream(pieces, usage=case.usage_wire), chunk_size=case.stream_chunk_size
    )

    events = await collect(provider, hello())

    assert [e.text for e in events if isinstance(e, TextDelta)] == pieces
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert sum(isinstance(e, ResponseComplete) for e in events) == 1
    assert final.response.text == "Bonjour à Grüß Gott 👋!"
    assert final.response.usage == case.usage
    assert final.response.stop_reason == "end_turn"
    assert final.response.model == case.reply_model
    body = llm_server.requests[0].json
    assert body["stream"] is True
    for name, value in case.stream_extra_body.items():
        assert body[name] == value
    assert llm_server.requests[0].headers["accept"] == "text/event-stream"


async def test_stream_text_then_tool_calls_from_partial_json(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    calls = [
        ("call_1", "get_weather", ["", '{"city', '": "Par', 'is"}']),
        ("call_2", "get_time", []),
    ]
    llm_server.reply_sse(case.stream(["Let me ", "check."], tool_calls=calls), chunk_size=6)

    events = await collect(provider, LlmRequest([Message.user("?")], tools=[WEATHER]))

    assert [type(e).__name__ for e in events] == [
        "TextDelta",
        "TextDelta",
        "ToolCallDelta",
        "ToolCallDelta",
        "ResponseComplete",
    ]
    streamed = [e.call for e in events if isinstance(e, ToolCallDelta)]
    assert streamed == [
        ToolUseBlock("call_1", "get_weather", {"city": "Paris"}),
        ToolUseBlock("call_2", "get_time", {}),
    ]
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert final.response.stop_reason == "tool_use"
    assert final.response.message.content == (TextBlock("Let me check."), *streamed)
    assert final.response.message.tool_calls == tuple(streamed)


async def test_stream_without_its_end_is_an_error(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    llm_server.reply_sse(case.stream(["partial"], end=False))
    seen: list[str] = []
    with pytest.raises(ServiceUnavailableError, match=case.stream_end_match):
        async for event in provider.stream(hello()):
            seen.append(event.text)
    assert seen == ["partial"]
    assert len(llm_server.requests) == 1  # Text was yielded: no retry.


async def test_connection_dropped_mid_stream(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    events = case.stream(["first ", "second ", "third"])
    cut = encode_sse(events).index(b"third")
    llm_server.reply_sse(events, drop_after_bytes=cut)
    seen: list[str] = []
    with pytest.raises(ServiceUnavailableError):
        async for event in provider.stream(hello()):
            seen.append(event.text)
    assert seen == ["first ", "second "]
    assert len(llm_server.requests) == 1


async def test_stream_invalid_tool_arguments(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    llm_server.reply_sse(case.stream([], tool_calls=[("call_1", "get_weather", ['{"city": '])]))
    with pytest.raises(MalformedResponseError, match="get_weather"):
        await collect(provider, hello())


# -- errors and retries ------------------------------------------------------


async def test_401_is_authentication_error(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    llm_server.reply_json(case.error("auth", "Incorrect API key provided."), status=401)
    with pytest.raises(AuthenticationError, match="Incorrect API key provided") as info:
        await provider.complete(hello())
    assert case.key_env in str(info.value)
    assert len(llm_server.requests) == 1


async def test_400_carries_server_message_and_is_not_retried(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    message = "Invalid 'messages[1].content': string too long."
    llm_server.reply_json(case.error("bad_request", message), status=400)
    with pytest.raises(BadRequestError, match=r"string too long") as info:
        await provider.complete(hello())
    assert "HTTP 400" in str(info.value)
    assert len(llm_server.requests) == 1


async def test_server_error_then_success_is_retried(
    llm_server: LlmServer,
    case: ProviderCase,
    provider: Provider,
    caplog: pytest.LogCaptureFixture,
) -> None:
    llm_server.reply_json(case.error("server", "Overloaded"), status=case.retried_status)
    llm_server.reply_json(case.reply("recovered"))
    with caplog.at_level("WARNING", logger="agentcore.providers"):
        response = await provider.complete(hello())
    assert response.text == "recovered"
    assert len(llm_server.requests) == 2
    [record] = caplog.records
    assert f"HTTP {case.retried_status}" in record.getMessage()
    assert "attempt 1 of 3" in record.getMessage()


@pytest.mark.parametrize(
    ("status", "kind", "retry_after", "waited"),
    [
        (429, "rate_limit", "3", [3.0]),
        (503, "server", "2", [2.0]),
        (429, "rate_limit", "Wed, 21 Oct 2015 07:28:00 GMT", [0.0]),  # in the past: no wait
    ],
)
async def test_retry_after_is_honoured(
    llm_server: LlmServer,
    case: ProviderCase,
    provider: Provider,
    sleeps: list[float],
    status: int,
    kind: str,
    retry_after: str,
    waited: list[float],
) -> None:
    llm_server.reply_json(
        case.error(kind, "slow down"), status=status, headers={"Retry-After": retry_after}
    )
    llm_server.reply_json(case.reply("after waiting"))
    assert (await provider.complete(hello())).text == "after waiting"
    assert sleeps == waited


async def test_429_retry_after_really_waits(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    llm_server.reply_json(
        case.error("rate_limit", "slow down"), status=429, headers={"Retry-After": "0.3"}
    )
    llm_server.reply_json(case.reply())
    started = time.monotonic()
    await provider.complete(hello())
    assert time.monotonic() - started >= 0.28


async def test_stream_error_status_before_first_byte_is_retried(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    llm_server.reply_json(
        case.error("rate_limit", "slow down"), status=429, headers={"Retry-After": "0"}
    )
    llm_server.reply_sse(case.stream(["ok"]))
    events = await collect(provider, hello())
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert final.response.text == "ok"


async def test_429_retry_after_too_long_is_not_waited_for(
    llm_server: LlmServer, case: ProviderCase, provider: Provider, sleeps: list[float]
) -> None:
    llm_server.reply_json(
        case.error("rate_limit", "slow down"), status=429, headers={"retry-after": "3600"}
    )
    with pytest.raises(RateLimitError) as info:
        await provider.complete(hello())
    assert info.value.retry_after == 3600.0
    assert sleeps == []
    assert len(llm_server.requests) == 1


async def test_429_exhausted_carries_retry_after(llm_server: LlmServer, case: ProviderCase) -> None:
    llm_server.reply_json(
        case.error("rate_limit", "quota"), status=429, headers={"Retry-After": "7"}
    )
    async with case.make(llm_server, max_retries=0) as provider:
        with pytest.raises(RateLimitError) as info:
            await provider.complete(hello())
    assert info.value.retry_after == 7.0


async def test_slow_response_is_a_timeout(llm_server: LlmServer, case: ProviderCase) -> None:
    llm_server.reply_json(case.reply(), delay=3.0)
    llm_server.reply_json(case.reply(), delay=3.0)
    async with case.make(llm_server, timeout=0.3) as provider:
        with pytest.raises(LlmTimeoutError):
            await provider.complete(hello())
        assert len(llm_server.requests) == 1  # A read timeout is not retried.
        with pytest.raises(LlmTimeoutError):
            await collect(provider, hello())


async def test_malformed_json(
    llm_server: LlmServer, case: ProviderCase, provider: Provider
) -> None:
    llm_server.reply_raw('{"id": "reply-1", "content": [')
    with pytest.raises(MalformedResponseError, match="invalid JSON"):
        await provider.complete(hello())
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize(("case", "body"), _each("malformed_bodies"))
async def test_missing_or_wrong_fields(
    llm_server: LlmServer, case: ProviderCase, provider: Provider, body: object
) -> None:
    llm_server.reply_json(body)
    with pytest.raises(MalformedResponseError):
        await provider.complete(hello())
