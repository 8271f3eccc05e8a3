from __future__ import annotations

import base64
import json
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
from agentcore.llm import (
    LlmProvider,
    LlmRequest,
    ResponseComplete,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from agentcore.messages import AudioBlock, FileBlock, ImageBlock, Message, TextBlock, ToolUseBlock
from agentcore.providers import OpenAIProvider
from agentcore.usage import Usage

from .conftest import OPENAI_KEY
from .loopback import DONE, LlmServer
from .payloads import (
    openai_chunk,
    openai_completion,
    openai_error,
    openai_stream,
    openai_tool_call,
    openai_usage,
    openai_usage_chunk,
)

WEATHER = ToolSpec(
    name="get_weather",
    description="The weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


def hello(
    model: str | None = None, max_tokens: int | None = None, purpose: str = "turn"
) -> LlmRequest:
    messages = [Message.system("Be brief."), Message.user("Hi")]
    return LlmRequest(messages, model=model, max_tokens=max_tokens, purpose=purpose)


async def collect(provider: OpenAIProvider, request: LlmRequest) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


# -- complete ------------------------------------------------------------------


async def test_complete_text_and_wire_format(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(openai_completion("Hello there!"))

    response = await openai_provider.complete(hello())

    assert response.text == "Hello there!"
    assert response.message.role == "assistant"
    assert response.stop_reason == "end_turn"
    assert response.model == "gpt-4o-mini-2024-07-18"
    assert response.usage == Usage(10, 5, 0)
    [sent] = llm_server.requests
    assert sent.method == "POST"
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.json == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
        ],
    }


async def test_is_an_llm_provider(openai_provider: OpenAIProvider) -> None:
    assert isinstance(openai_provider, LlmProvider)


async def test_request_model_overrides_default(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(openai_completion("ok", model="gpt-4.1-nano"))
    llm_server.reply_sse(openai_stream(["ok"], model="gpt-4.1-nano"))

    response = await openai_provider.complete(hello(model="gpt-4.1-nano", purpose="summary"))
    events = await collect(openai_provider, hello(model="gpt-4.1-nano"))

    assert response.model == "gpt-4.1-nano"
    assert [r.json["model"] for r in llm_server.requests] == ["gpt-4.1-nano", "gpt-4.1-nano"]
    assert isinstance(events[-1], ResponseComplete)
    assert events[-1].response.model == "gpt-4.1-nano"


async def test_max_tokens_field(llm_server: LlmServer) -> None:
    llm_server.reply_json(openai_completion())
    llm_server.reply_json(openai_completion())
    async with OpenAIProvider("m", base_url=llm_server.openai_url) as default:
        await default.complete(hello(max_tokens=50))
    async with OpenAIProvider(
        "m", base_url=llm_server.openai_url, max_tokens_field="max_completion_tokens"
    ) as reasoning:
        await reasoning.complete(hello(max_tokens=60))
    assert llm_server.requests[0].json["max_tokens"] == 50
    assert llm_server.requests[1].json["max_completion_tokens"] == 60
    assert "max_tokens" not in llm_server.requests[1].json


async def test_extra_body_and_headers(llm_server: LlmServer) -> None:
    llm_server.reply_json(openai_completion())
    async with OpenAIProvider(
        "m",
        base_url=llm_server.openai_url,
        extra_body={"temperature": 0},
        headers={"X-Title": "agentcore tests"},
    ) as provider:
        await provider.complete(hello())
    [sent] = llm_server.requests
    assert sent.json["temperature"] == 0
    assert sent.headers["x-title"] == "agentcore tests"


async def test_tools_and_tool_calls_both_ways(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(
        openai_completion(
            None,
            tool_calls=[
                openai_tool_call("call_a", "get_weather", {"city": "Paris"}),
                openai_tool_call("call_b", "get_weather", {"city": "Zürich"}),
            ],
        )
    )
    history = [
        Message.system("You help."),
        Message.user("Weather in Oslo and Rome?"),
        Message.assistant(
            "Checking.",
            tool_calls=[
                ToolUseBlock("call_1", "get_weather", {"city": "Oslo"}),
                ToolUseBlock("call_2", "get_weather", {"city": "Rome"}),
            ],
        ),
        Message.tool_result("call_1", "3°C, snow"),
        Message.tool_result("call_2", "city not found", is_error=True),
        Message.assistant(tool_calls=[ToolUseBlock("call_3", "get_weather", {})]),
        Message.tool_result("call_3", "missing city"),
        Message.user("And Paris, Zürich?"),
    ]

    response = await openai_provider.complete(LlmRequest(history, tools=[WEATHER]))

    assert response.stop_reason == "tool_use"
    assert response.message.tool_calls == (
        ToolUseBlock("call_a", "get_weather", {"city": "Paris"}),
        ToolUseBlock("call_b", "get_weather", {"city": "Zürich"}),
    )
    assert response.text == ""
    body = llm_server.requests[0].json
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": dict(WEATHER.parameters),
            },
        }
    ]
    messages = body["messages"]
    assert messages[2] == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
            },
        ],
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "3°C, snow"}
    assert messages[4] == {
        "role": "tool",
        "tool_call_id": "call_2",
        "content": "Error: city not found",
    }
    assert messages[5]["content"] == ""  # not null: llama.cpp servers refuse null
    assert json.loads(messages[5]["tool_calls"][0]["function"]["arguments"]) == {}
    assert messages[7] == {"role": "user", "content": "And Paris, Zürich?"}


async def test_images_audio_and_files(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(openai_completion("A cat."))
    pdf = base64.b64encode(b"%PDF-1.4").decode()
    message = Message.user(
        [
            TextBlock("What is this?"),
            ImageBlock(media_type="image/jpeg", data="QUJD"),
            ImageBlock(url="https://example.com/cat.png"),
            AudioBlock(data="UklGRg==", media_type="audio/wav"),
            AudioBlock(data="SUQz", media_type="audio/mpeg"),
            FileBlock(name="a.pdf", media_type="application/pdf", data=pdf),
        ]
    )

    await openai_provider.complete(LlmRequest([message]))

    assert llm_server.requests[0].json["messages"][0] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QUJD"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}},
            {
                "type": "file",
                "file": {"filename": "a.pdf", "file_data": f"data:application/pdf;base64,{pdf}"},
            },
        ],
    }


@pytest.mark.parametrize(
    ("messages", "fragment"),
    [
        ([Message.user([FileBlock(name="a.pdf", url="https://x/a.pdf")])], "inline"),
        ([Message("system", [ImageBlock(url="https://x/a.png")])], "system message"),
        (
            [
                Message.assistant(tool_calls=[ToolUseBlock("c", "t")]),
                Message("tool", [ImageBlock(url="https://x/a.png")], tool_call_id="c"),
            ],
            "tool result",
        ),
        ([Message.user([ToolUseBlock("c", "t")])], "assistant message"),
    ],
)
async def test_unsupported_content_is_refused_before_sending(
    llm_server: LlmServer,
    openai_provider: OpenAIProvider,
    messages: list[Message],
    fragment: str,
) -> None:
    with pytest.raises(BadRequestError, match=fragment):
        await openai_provider.complete(LlmRequest(messages))
    assert llm_server.requests == []


async def test_usage_keeps_cached_tokens(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(openai_completion(usage=openai_usage(1200, 30, cached=1024)))
    response = await openai_provider.complete(hello())
    assert response.usage == Usage(input_tokens=1200, output_tokens=30, cached_input_tokens=1024)


async def test_usage_absent_or_without_details(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    no_usage = openai_completion()
    del no_usage["usage"]
    llm_server.reply_json(no_usage)
    llm_server.reply_json(
        openai_completion(usage={"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9})
    )
    assert (await openai_provider.complete(hello())).usage is None
    assert (await openai_provider.complete(hello())).usage == Usage(7, 2, 0)


@pytest.mark.parametrize(
    ("finish", "expected"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "other")],
)
async def test_finish_reasons(
    llm_server: LlmServer, openai_provider: OpenAIProvider, finish: str, expected: str
) -> None:
    llm_server.reply_json(openai_completion("x", finish_reason=finish))
    assert (await openai_provider.complete(hello())).stop_reason == expected


async def test_local_server_without_key(llm_server: LlmServer) -> None:
    llm_server.reply_json(openai_completion("local"))
    async with OpenAIProvider("llama3.1:8b", base_url=llm_server.openai_url) as provider:
        assert (await provider.complete(hello())).text == "local"
        assert "api_key=None" in repr(provider)
    assert "authorization" not in llm_server.requests[0].headers


async def test_environment_variables(
    llm_server: LlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    llm_server.reply_json(openai_completion())
    async with OpenAIProvider("gpt-4o-mini") as provider:
        assert provider.base_url == llm_server.openai_url
        await provider.complete(hello())
    assert llm_server.requests[0].headers["authorization"] == "Bearer sk-from-env"


def test_default_base_url() -> None:
    provider = OpenAIProvider("gpt-4o-mini")
    assert provider.base_url == "https://api.openai.com/v1"
    assert provider.model == "gpt-4o-mini"
    assert provider.max_retries == 2


@pytest.mark.parametrize(
    "kwargs",
    [
        {"model": ""},
        {"model": "m", "base_url": "localhost:11434"},
        {"model": "m", "timeout": 0},
        {"model": "m", "timeout": "10"},
        {"model": "m", "max_retries": -1},
        {"model": "m", "max_retries": 1.5},
        {"model": "m", "backoff_base": -1},
        {"model": "m", "backoff_base": 2, "backoff_max": 1},
        {"model": "m", "http_client": object()},
        {"model": "m", "max_tokens_field": "tokens"},
        {"model": "m", "extra_body": [1]},
    ],
)
def test_constructor_validation(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        OpenAIProvider(**kwargs)  # type: ignore[arg-type]


# -- stream ------------------------------------------------------------------


async def test_stream_text_in_small_chunks(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    pieces = ["Bon", "jour ", "à ", "tous 👋", "!"]
    llm_server.reply_sse(openai_stream(pieces, usage=openai_usage(20, 6, cached=16)), chunk_size=3)

    events = await collect(openai_provider, hello())

    assert [e.text for e in events if isinstance(e, TextDelta)] == pieces
    assert isinstance(events[-1], ResponseComplete)
    assert sum(isinstance(e, ResponseComplete) for e in events) == 1
    response = events[-1].response
    assert response.text == "Bonjour à tous 👋!"
    assert response.usage == Usage(20, 6, 16)
    assert response.stop_reason == "end_turn"
    body = llm_server.requests[0].json
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert llm_server.requests[0].headers["accept"] == "text/event-stream"


async def test_stream_parallel_tool_calls_by_index(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    def fragment(index: int, **fields: object) -> dict[str, Any]:
        return openai_chunk({"tool_calls": [{"index": index, **fields}]})

    llm_server.reply_sse(
        [
            openai_chunk({"role": "assistant", "content": None}),
            fragment(
                0, id="call_a", type="function", function={"name": "get_weather", "arguments": ""}
            ),
            fragment(0, function={"arguments": '{"ci'}),
            fragment(
                1, id="call_b", type="function", function={"name": "get_time", "arguments": ""}
            ),
            fragment(1, function={"arguments": '{"zone": "CET"}'}),
            fragment(0, function={"arguments": 'ty": "Oslo"}'}),
            openai_chunk({}, finish_reason="tool_calls"),
            openai_usage_chunk(openai_usage()),
            DONE,
        ],
        chunk_size=5,
    )

    events = await collect(openai_provider, LlmRequest([Message.user("?")], tools=[WEATHER]))

    calls = [e.call for e in events if isinstance(e, ToolCallDelta)]
    assert calls == [
        ToolUseBlock("call_a", "get_weather", {"city": "Oslo"}),
        ToolUseBlock("call_b", "get_time", {"zone": "CET"}),
    ]
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert final.response.message.tool_calls == tuple(calls)
    assert final.response.stop_reason == "tool_use"
    # Tool calls come before the final event, and only once each.
    assert [type(e).__name__ for e in events] == [
        "ToolCallDelta",
        "ToolCallDelta",
        "ResponseComplete",
    ]


async def test_stream_text_then_tool_call(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_sse(
        openai_stream(
            ["Let me check."], tool_calls=[("call_1", "get_weather", ['{"city"', ': "Rome"}'])]
        )
    )
    events = await collect(openai_provider, hello())
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert final.response.message.content == (
        TextBlock("Let me check."),
        ToolUseBlock("call_1", "get_weather", {"city": "Rome"}),
    )


async def test_stream_consumer_may_stop_early(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_sse(openai_stream(["a", "b", "c"]))
    llm_server.reply_json(openai_completion("next"))
    stream = openai_provider.stream(hello())
    async for event in stream:
        assert event.text == "a"
        break
    await stream.aclose()  # type: ignore[attr-defined]
    assert (await openai_provider.complete(hello())).text == "next"


async def test_stream_without_done_is_an_error(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_sse(openai_stream(["partial"], done=False))
    seen: list[StreamEvent] = []
    with pytest.raises(ServiceUnavailableError, match=r"\[DONE\]"):
        async for event in openai_provider.stream(hello()):
            seen.append(event)
    assert [e.text for e in seen] == ["partial"]
    assert len(llm_server.requests) == 1  # Text was yielded: no retry.


async def test_connection_dropped_mid_stream(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    events = openai_stream(["first ", "second ", "third"])
    from .loopback import encode_sse

    cut = encode_sse(events).index(b"third")
    llm_server.reply_sse(events, drop_after_bytes=cut)
    seen: list[str] = []
    with pytest.raises(ServiceUnavailableError):
        async for event in openai_provider.stream(hello()):
            seen.append(event.text)
    assert seen == ["first ", "second "]
    assert len(llm_server.requests) == 1


async def test_drop_before_anything_was_yielded_is_retried(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_sse(openai_stream(["never"]), drop_after_bytes=30)
    llm_server.reply_sse(openai_stream(["fine"]))
    events = await collect(openai_provider, hello())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["fine"]
    assert len(llm_server.requests) == 2


async def test_stream_error_status_before_first_byte_is_retried(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(
        openai_error("slow down", "requests"), status=429, headers={"Retry-After": "0"}
    )
    llm_server.reply_sse(openai_stream(["ok"]))
    events = await collect(openai_provider, hello())
    assert events[-1].response.text == "ok"  # type: ignore[union-attr]


async def test_stream_error_event(llm_server: LlmServer, openai_provider: OpenAIProvider) -> None:
    llm_server.reply_sse(
        [
            openai_chunk({"content": "Hi"}),
            {
                "error": {
                    "message": "context too long",
                    "type": "invalid_request_error",
                    "code": None,
                }
            },
        ]
    )
    with pytest.raises(BadRequestError, match="context too long"):
        await collect(openai_provider, hello())


async def test_stream_malformed_chunk(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_sse([openai_chunk({"content": "Hi"}), "data: {not json\n\n", DONE])
    with pytest.raises(MalformedResponseError, match="not valid JSON"):
        await collect(openai_provider, hello())


async def test_stream_invalid_tool_arguments(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_sse(openai_stream([], tool_calls=[("call_1", "get_weather", ['{"city": '])]))
    with pytest.raises(MalformedResponseError, match="get_weather"):
        await collect(openai_provider, hello())


async def test_stream_answered_with_json_is_malformed(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(openai_completion())
    with pytest.raises(MalformedResponseError, match="event stream"):
        await collect(openai_provider, hello())


# -- errors and retries ------------------------------------------------------


async def test_401_is_authentication_error(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(
        openai_error("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
        status=401,
    )
    with pytest.raises(AuthenticationError, match="Incorrect API key provided") as info:
        await openai_provider.complete(hello())
    assert "OPENAI_API_KEY" in str(info.value)
    assert len(llm_server.requests) == 1


async def test_403_is_authentication_error(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(openai_error("Country not supported", "request_forbidden"), status=403)
    with pytest.raises(AuthenticationError):
        await openai_provider.complete(hello())


async def test_400_carries_server_message_and_is_not_retried(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(
        openai_error("Invalid 'messages[1].content': string too long.", "invalid_request_error"),
        status=400,
    )
    with pytest.raises(BadRequestError, match=r"string too long") as info:
        await openai_provider.complete(hello())
    assert "HTTP 400" in str(info.value)
    assert len(llm_server.requests) == 1


async def test_500_then_success_is_retried(
    llm_server: LlmServer, openai_provider: OpenAIProvider, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.reply_json(openai_error("The server had an error", "server_error"), status=500)
    llm_server.reply_json(openai_completion("recovered"))
    with caplog.at_level("WARNING", logger="agentcore.providers"):
        response = await openai_provider.complete(hello())
    assert response.text == "recovered"
    assert len(llm_server.requests) == 2
    [record] = caplog.records
    assert "HTTP 500" in record.getMessage()
    assert "attempt 1 of 3" in record.getMessage()


async def test_max_retries_bounds_the_attempts(llm_server: LlmServer) -> None:
    for _ in range(5):
        llm_server.reply_json(openai_error("overloaded", "server_error"), status=503)
    async with OpenAIProvider(
        "m", base_url=llm_server.openai_url, max_retries=2, backoff_base=0.001, backoff_max=0.002
    ) as provider:
        with pytest.raises(ServiceUnavailableError, match="HTTP 503"):
            await provider.complete(hello())
    assert len(llm_server.requests) == 3


async def test_no_retries_when_max_retries_is_zero(llm_server: LlmServer) -> None:
    llm_server.reply_json(openai_error("busy", "server_error"), status=502)
    llm_server.reply_json(openai_completion())
    async with OpenAIProvider("m", base_url=llm_server.openai_url, max_retries=0) as provider:
        with pytest.raises(ServiceUnavailableError):
            await provider.complete(hello())
    assert len(llm_server.requests) == 1


async def test_429_honours_retry_after(
    llm_server: LlmServer, openai_provider: OpenAIProvider, sleeps: list[float]
) -> None:
    llm_server.reply_json(
        openai_error("Rate limit reached", "requests", "rate_limit_exceeded"),
        status=429,
        headers={"Retry-After": "3"},
    )
    llm_server.reply_json(openai_completion("after waiting"))
    response = await openai_provider.complete(hello())
    assert response.text == "after waiting"
    assert sleeps == [3.0]


async def test_429_retry_after_really_waits(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    import time

    llm_server.reply_json(
        openai_error("slow down", "requests"), status=429, headers={"Retry-After": "0.3"}
    )
    llm_server.reply_json(openai_completion())
    started = time.monotonic()
    await openai_provider.complete(hello())
    assert time.monotonic() - started >= 0.28


async def test_429_exhausted_carries_retry_after(llm_server: LlmServer) -> None:
    llm_server.reply_json(
        openai_error("quota", "insufficient_quota"), status=429, headers={"Retry-After": "7"}
    )
    async with OpenAIProvider("m", base_url=llm_server.openai_url, max_retries=0) as provider:
        with pytest.raises(RateLimitError) as info:
            await provider.complete(hello())
    assert info.value.retry_after == 7.0


async def test_408_is_retried(llm_server: LlmServer, openai_provider: OpenAIProvider) -> None:
    llm_server.reply_json({"error": {"message": "request timeout"}}, status=408)
    llm_server.reply_json(openai_completion("ok"))
    assert (await openai_provider.complete(hello())).text == "ok"
    assert len(llm_server.requests) == 2


async def test_slow_response_is_a_timeout(llm_server: LlmServer) -> None:
    llm_server.reply_json(openai_completion(), delay=3.0)
    async with OpenAIProvider("m", base_url=llm_server.openai_url, timeout=0.3) as provider:
        with pytest.raises(LlmTimeoutError):
            await provider.complete(hello())
    assert len(llm_server.requests) == 1  # A read timeout is not retried.


async def test_malformed_json(llm_server: LlmServer, openai_provider: OpenAIProvider) -> None:
    llm_server.reply_raw('{"id": "chatcmpl-1", "choices": [')
    with pytest.raises(MalformedResponseError, match="invalid JSON"):
        await openai_provider.complete(hello())
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize(
    "body",
    [
        {"id": "x"},
        {"choices": []},
        {"choices": [{"index": 0}]},
        {"choices": [{"message": {"content": 5}}]},
        {"choices": [{"message": {"tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}}]},
        {
            "choices": [
                {
                    "message": {
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}]
                    }
                }
            ]
        },
        {"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -1}},
        [1, 2],
    ],
)
async def test_missing_or_wrong_fields(
    llm_server: LlmServer, openai_provider: OpenAIProvider, body: object
) -> None:
    llm_server.reply_json(body)
    with pytest.raises(MalformedResponseError):
        await openai_provider.complete(hello())


async def test_connection_refused_is_retried_then_unavailable(unused_port: int) -> None:
    async with OpenAIProvider(
        "m", base_url=f"http://127.0.0.1:{unused_port}/v1", backoff_base=0.001, backoff_max=0.002
    ) as provider:
        with pytest.raises(ServiceUnavailableError, match="ConnectError"):
            await provider.complete(hello())
        with pytest.raises(ServiceUnavailableError):
            await collect(provider, hello())


async def test_closed_provider_refuses_calls(llm_server: LlmServer) -> None:
    provider = OpenAIProvider("m", base_url=llm_server.openai_url)
    await provider.aclose()
    with pytest.raises(Exception, match="closed"):
        await provider.complete(hello())


async def test_503_honours_retry_after(
    llm_server: LlmServer, openai_provider: OpenAIProvider, sleeps: list[float]
) -> None:
    llm_server.reply_json(
        openai_error("maintenance", "server_error"), status=503, headers={"Retry-After": "2"}
    )
    llm_server.reply_json(openai_completion("up again"))
    assert (await openai_provider.complete(hello())).text == "up again"
    assert sleeps == [2.0]


async def test_backoff_without_retry_after_is_bounded(
    llm_server: LlmServer, openai_provider: OpenAIProvider, sleeps: list[float]
) -> None:
    for _ in range(3):
        llm_server.reply_json(openai_error("boom", "server_error"), status=500)
    with pytest.raises(ServiceUnavailableError):
        await openai_provider.complete(hello())
    # backoff_base=0.01, backoff_max=0.05 in the fixture: jittered 0.005-0.01, then 0.01-0.02.
    assert len(sleeps) == 2
    assert 0.005 <= sleeps[0] <= 0.01
    assert 0.01 <= sleeps[1] <= 0.02
