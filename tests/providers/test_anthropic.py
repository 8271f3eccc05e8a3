from __future__ import annotations

import base64

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
from agentcore.messages import (
    AudioBlock,
    FileBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolUseBlock,
)
from agentcore.providers import AnthropicProvider
from agentcore.usage import Usage

from .conftest import ANTHROPIC_KEY
from .loopback import LlmServer, encode_sse
from .payloads import (
    anthropic_error,
    anthropic_message,
    anthropic_stream,
    anthropic_usage,
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


async def collect(provider: AnthropicProvider, request: LlmRequest) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


# -- complete ------------------------------------------------------------------


async def test_complete_text_and_wire_format(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_message("Hello there!"))

    response = await anthropic_provider.complete(hello())

    assert response.text == "Hello there!"
    assert response.stop_reason == "end_turn"
    assert response.model == "claude-sonnet-4-5-20250929"
    assert response.usage == Usage(10, 5, 0)
    [sent] = llm_server.requests
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == ANTHROPIC_KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    assert sent.json == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "system": "Be brief.",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
    }


async def test_is_an_llm_provider(anthropic_provider: AnthropicProvider) -> None:
    assert isinstance(anthropic_provider, LlmProvider)


async def test_request_model_and_max_tokens(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_message(model="claude-haiku-4-5"))
    response = await anthropic_provider.complete(
        hello(model="claude-haiku-4-5", max_tokens=300, purpose="summary")
    )
    assert response.model == "claude-haiku-4-5"
    body = llm_server.requests[0].json
    assert body["model"] == "claude-haiku-4-5"
    assert body["max_tokens"] == 300


async def test_system_messages_anywhere_keep_order_and_text(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_message())
    messages = [
        Message.system("You are a helpful agent."),
        Message.system("Summary of earlier turns:\n- the user likes tea"),
        Message.user("Hello"),
        Message.assistant("Hi!"),
        Message.system("Summary injected mid-list."),
        Message.user("What do I like?"),
        Message.system("  Final system note, with its spaces  "),
    ]

    await anthropic_provider.complete(LlmRequest(messages))

    body = llm_server.requests[0].json
    assert body["system"] == [
        {"type": "text", "text": "You are a helpful agent."},
        {"type": "text", "text": "Summary of earlier turns:\n- the user likes tea"},
        {"type": "text", "text": "Summary injected mid-list."},
        {"type": "text", "text": "  Final system note, with its spaces  "},
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Hello"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hi!"}]},
        {"role": "user", "content": [{"type": "text", "text": "What do I like?"}]},
    ]


async def test_tools_and_tool_calls_both_ways(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(
        anthropic_message(
            [
                {"type": "text", "text": "I'll check both."},
                {
                    "type": "tool_use",
                    "id": "toolu_01A",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_01B",
                    "name": "get_weather",
                    "input": {"city": "Zürich"},
                },
            ]
        )
    )
    history = [
        Message.user("Weather in Oslo and Rome?"),
        Message.assistant(
            "Checking.",
            tool_calls=[
                ToolUseBlock("toolu_1", "get_weather", {"city": "Oslo"}),
                ToolUseBlock("toolu_2", "get_weather", {"city": "Rome"}),
            ],
        ),
        Message.tool_result("toolu_1", "3°C, snow"),
        Message.tool_result("toolu_2", "city not found", is_error=True),
        Message.user("And Paris, Zürich?"),
    ]

    response = await anthropic_provider.complete(LlmRequest(history, tools=[WEATHER]))

    assert response.stop_reason == "tool_use"
    assert response.text == "I'll check both."
    assert response.message.tool_calls == (
        ToolUseBlock("toolu_01A", "get_weather", {"city": "Paris"}),
        ToolUseBlock("toolu_01B", "get_weather", {"city": "Zürich"}),
    )
    body = llm_server.requests[0].json
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "The weather in a city.",
            "input_schema": dict(WEATHER.parameters),
        }
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo and Rome?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "get_weather",
                    "input": {"city": "Rome"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3°C, snow"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": "city not found",
                    "is_error": True,
                },
                {"type": "text", "text": "And Paris, Zürich?"},
            ],
        },
    ]


async def test_consecutive_messages_of_one_role_are_merged(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_message())
    await anthropic_provider.complete(
        LlmRequest(
            [
                Message.user("one"),
                Message.user("two"),
                Message.assistant("a"),
                Message.assistant(""),
                Message.assistant("b"),
                Message.user([TextBlock(""), TextBlock("three")]),
            ]
        )
    )
    assert llm_server.requests[0].json["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
        {"role": "user", "content": [{"type": "text", "text": "three"}]},
    ]


async def test_images_and_documents(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_message("A cat."))
    notes = base64.b64encode("Notizen: Grüße".encode()).decode()
    message = Message.user(
        [
            ImageBlock(media_type="image/jpeg", data="QUJD"),
            ImageBlock(url="https://example.com/cat.png"),
            FileBlock(name="paper.pdf", media_type="application/pdf", data="JVBERi0="),
            FileBlock(name="remote.pdf", media_type="application/pdf", url="https://x/r.pdf"),
            FileBlock(name="notes.txt", media_type="text/plain", data=notes),
            TextBlock("What is this?"),
        ]
    )
    await anthropic_provider.complete(LlmRequest([message]))
    assert llm_server.requests[0].json["messages"][0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "QUJD"}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
        {
            "type": "document",
            "title": "paper.pdf",
            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0="},
        },
        {
            "type": "document",
            "title": "remote.pdf",
            "source": {"type": "url", "url": "https://x/r.pdf"},
        },
        {
            "type": "document",
            "title": "notes.txt",
            "source": {"type": "text", "media_type": "text/plain", "data": "Notizen: Grüße"},
        },
        {"type": "text", "text": "What is this?"},
    ]


async def test_tool_result_with_an_image(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_message())
    result = Message(
        "tool", [TextBlock("the chart:"), ImageBlock(data="QUJD")], tool_call_id="toolu_9"
    )
    await anthropic_provider.complete(
        LlmRequest([Message.assistant(tool_calls=[ToolUseBlock("toolu_9", "chart")]), result])
    )
    assert llm_server.requests[0].json["messages"][2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_9",
            "content": [
                {"type": "text", "text": "the chart:"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"},
                },
            ],
        }
    ]


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        (Message.user([AudioBlock(data="UklGRg==")]), "no audio"),
        (Message("system", [ImageBlock(url="https://x/a.png")]), "system message"),
        (Message.user([ToolUseBlock("c", "t")]), "assistant message"),
        (Message.user([FileBlock(name="a.txt", media_type="text/plain", data="!!")]), "base64"),
    ],
)
async def test_unsupported_content_is_refused_before_sending(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider, message: Message, fragment: str
) -> None:
    with pytest.raises(BadRequestError, match=fragment):
        await anthropic_provider.complete(LlmRequest([message]))
    assert llm_server.requests == []


async def test_usage_counts_cache_reads_and_writes_as_input(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(
        anthropic_message(usage=anthropic_usage(50, 20, cache_read=1000, cache_creation=200))
    )
    response = await anthropic_provider.complete(hello())
    assert response.usage == Usage(
        input_tokens=1250, output_tokens=20, cached_input_tokens=1000, cache_write_tokens=200
    )
    assert response.usage.cache_read_tokens == 1000
    assert response.usage.uncached_input_tokens == 50


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        ("end_turn", "end_turn"),
        ("stop_sequence", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("tool_use", "tool_use"),
        ("refusal", "other"),
        ("pause_turn", "other"),
    ],
)
async def test_stop_reasons(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider, stop: str, expected: str
) -> None:
    llm_server.reply_json(anthropic_message("x", stop_reason=stop))
    assert (await anthropic_provider.complete(hello())).stop_reason == expected


async def test_thinking_blocks_are_kept_as_reasoning_and_unknown_blocks_skipped(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(
        anthropic_message(
            [
                {"type": "thinking", "thinking": "hmm", "signature": "abc"},
                {"type": "redacted_thinking", "data": "ENC"},
                {"type": "future_block", "x": 1},
                {"type": "text", "text": "Answer."},
            ]
        )
    )
    response = await anthropic_provider.complete(hello())
    assert response.message.content == (
        ReasoningBlock("hmm", signature="abc"),
        ReasoningBlock("", data="ENC"),
        TextBlock("Answer."),
    )
    assert (response.text, response.message.reasoning) == ("Answer.", "hmm")


def test_api_key_is_required() -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicProvider("claude-sonnet-4-5")


async def test_environment_variables(
    llm_server: LlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", llm_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    llm_server.reply_json(anthropic_message())
    async with AnthropicProvider("claude-sonnet-4-5") as provider:
        await provider.complete(hello())
    assert llm_server.requests[0].headers["x-api-key"] == "sk-ant-from-env"


def test_defaults_and_validation() -> None:
    provider = AnthropicProvider("claude-sonnet-4-5", api_key="k")
    assert provider.base_url == "https://api.anthropic.com"
    with pytest.raises(ConfigError):
        AnthropicProvider("m", api_key="k", default_max_tokens=0)
    with pytest.raises(ConfigError):
        AnthropicProvider("m", api_key="k", api_version="")


async def test_api_version_and_beta_headers(llm_server: LlmServer) -> None:
    llm_server.reply_json(anthropic_message())
    async with AnthropicProvider(
        "m",
        base_url=llm_server.url,
        api_key="k",
        api_version="2024-01-01",
        headers={"anthropic-beta": "some-feature"},
    ) as provider:
        await provider.complete(hello())
    headers = llm_server.requests[0].headers
    assert headers["anthropic-version"] == "2024-01-01"
    assert headers["anthropic-beta"] == "some-feature"


# -- stream ------------------------------------------------------------------


async def test_stream_text_in_small_chunks(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    pieces = ["Grü", "ß ", "Gott 👋", "!"]
    llm_server.reply_sse(
        anthropic_stream([("text", pieces)], usage=anthropic_usage(30, 9, cache_read=20)),
        chunk_size=4,
    )

    events = await collect(anthropic_provider, hello())

    assert [e.text for e in events if isinstance(e, TextDelta)] == pieces
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert sum(isinstance(e, ResponseComplete) for e in events) == 1
    assert final.response.text == "Grüß Gott 👋!"
    assert final.response.usage == Usage(50, 9, 20)
    assert final.response.stop_reason == "end_turn"
    assert final.response.model == "claude-sonnet-4-5-20250929"
    assert llm_server.requests[0].json["stream"] is True


async def test_stream_tool_use_assembled_from_partial_json(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_sse(
        anthropic_stream(
            [
                ("text", ["Let me ", "check."]),
                ("tool_use", ("toolu_01T1", "get_weather", ["", '{"city', '": "Par', 'is"}'])),
                ("tool_use", ("toolu_01T2", "get_time", [])),
            ]
        ),
        chunk_size=6,
    )

    events = await collect(anthropic_provider, LlmRequest([Message.user("?")], tools=[WEATHER]))

    assert [type(e).__name__ for e in events] == [
        "TextDelta",
        "TextDelta",
        "ToolCallDelta",
        "ToolCallDelta",
        "ResponseComplete",
    ]
    calls = [e.call for e in events if isinstance(e, ToolCallDelta)]
    assert calls == [
        ToolUseBlock("toolu_01T1", "get_weather", {"city": "Paris"}),
        ToolUseBlock("toolu_01T2", "get_time", {}),
    ]
    final = events[-1]
    assert isinstance(final, ResponseComplete)
    assert final.response.stop_reason == "tool_use"
    assert final.response.message.content == (TextBlock("Let me check."), *calls)


async def test_stream_error_event_before_output_is_retried(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_sse([("error", anthropic_error("overloaded_error", "Overloaded"))])
    llm_server.reply_sse(anthropic_stream())
    events = await collect(anthropic_provider, hello())
    assert events[-1].response.text == "Hello!"  # type: ignore[union-attr]
    assert len(llm_server.requests) == 2


async def test_stream_error_event_after_output_raises(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    events = anthropic_stream(stop=False)[:4]  # message_start, block start, ping, first delta
    llm_server.reply_sse([*events, ("error", anthropic_error("overloaded_error", "Overloaded"))])
    seen: list[str] = []
    with pytest.raises(ServiceUnavailableError, match="Overloaded"):
        async for event in anthropic_provider.stream(hello()):
            seen.append(event.text)
    assert seen == ["Hel"]
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize(
    ("error_type", "error_class"),
    [
        ("invalid_request_error", BadRequestError),
        ("authentication_error", AuthenticationError),
        ("rate_limit_error", RateLimitError),
        ("api_error", ServiceUnavailableError),
    ],
)
async def test_stream_error_event_classes(
    llm_server: LlmServer, error_type: str, error_class: type[Exception]
) -> None:
    llm_server.reply_sse([("error", anthropic_error(error_type, "nope"))])
    async with AnthropicProvider("m", base_url=llm_server.url, api_key="k", max_retries=0) as p:
        with pytest.raises(error_class, match="nope"):
            await collect(p, hello())


async def test_stream_skips_ping_and_unknown_events(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    events = anthropic_stream([("text", ["ok"])])
    events.insert(2, ("future_event", {"type": "future_event", "x": 1}))
    events.insert(3, ": a comment line\n\n")
    llm_server.reply_sse(events)
    result = await collect(anthropic_provider, hello())
    assert [e.text for e in result if isinstance(e, TextDelta)] == ["ok"]


async def test_stream_thinking_blocks_are_kept_as_reasoning(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    events = anthropic_stream([("text", ["Answer."])])
    thinking = [
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 5,
                "content_block": {"type": "thinking", "thinking": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 5,
                "delta": {"type": "thinking_delta", "thinking": "hmm"},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 5,
                "delta": {"type": "signature_delta", "signature": "EqQB"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 5}),
    ]
    llm_server.reply_sse([events[0], *thinking, *events[1:]])
    result = await collect(anthropic_provider, hello())
    message = result[-1].response.message  # type: ignore[union-attr]
    assert message.content == (TextBlock("Answer."), ReasoningBlock("hmm", signature="EqQB"))
    assert [e.text for e in result if isinstance(e, TextDelta)] == ["Answer."]


async def test_stream_without_message_stop_is_an_error(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_sse(anthropic_stream(stop=False))
    with pytest.raises(ServiceUnavailableError, match="message_stop"):
        await collect(anthropic_provider, hello())
    assert len(llm_server.requests) == 1


async def test_connection_dropped_mid_stream(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    events = anthropic_stream([("text", ["first ", "second ", "third"])])
    cut = encode_sse(events).index(b"third")
    llm_server.reply_sse(events, drop_after_bytes=cut)
    seen: list[str] = []
    with pytest.raises(ServiceUnavailableError):
        async for event in anthropic_provider.stream(hello()):
            seen.append(event.text)
    assert seen == ["first ", "second "]


async def test_stream_invalid_tool_json(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_sse(
        anthropic_stream([("tool_use", ("toolu_1", "get_weather", ['{"city": ']))])
    )
    with pytest.raises(MalformedResponseError, match="get_weather"):
        await collect(anthropic_provider, hello())


async def test_stream_delta_for_unknown_block(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    events = anthropic_stream()
    delta = (
        "content_block_delta",
        {"type": "content_block_delta", "index": 7, "delta": {"type": "text_delta", "text": "x"}},
    )
    llm_server.reply_sse([events[0], delta, *events[1:]])
    with pytest.raises(MalformedResponseError, match="never started"):
        await collect(anthropic_provider, hello())


# -- errors and retries ------------------------------------------------------


async def test_401_is_authentication_error(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_error("authentication_error", "invalid x-api-key"), status=401)
    with pytest.raises(AuthenticationError, match="invalid x-api-key") as info:
        await anthropic_provider.complete(hello())
    assert "ANTHROPIC_API_KEY" in str(info.value)


async def test_400_carries_server_message_and_is_not_retried(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(
        anthropic_error("invalid_request_error", "messages: roles must alternate"), status=400
    )
    with pytest.raises(BadRequestError, match="roles must alternate"):
        await anthropic_provider.complete(hello())
    assert len(llm_server.requests) == 1


async def test_529_overloaded_then_success(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_error("overloaded_error", "Overloaded"), status=529)
    llm_server.reply_json(anthropic_message("back"))
    assert (await anthropic_provider.complete(hello())).text == "back"
    assert len(llm_server.requests) == 2


async def test_429_with_http_date_retry_after(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider, sleeps: list[float]
) -> None:
    llm_server.reply_json(
        anthropic_error("rate_limit_error", "Number of requests has exceeded your rate limit"),
        status=429,
        headers={"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"},  # in the past: no wait
    )
    llm_server.reply_json(anthropic_message("ok"))
    assert (await anthropic_provider.complete(hello())).text == "ok"
    assert sleeps == [0.0]


async def test_429_retry_after_too_long_is_not_waited_for(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider, sleeps: list[float]
) -> None:
    llm_server.reply_json(
        anthropic_error("rate_limit_error", "slow down"),
        status=429,
        headers={"retry-after": "3600"},
    )
    with pytest.raises(RateLimitError) as info:
        await anthropic_provider.complete(hello())
    assert info.value.retry_after == 3600.0
    assert sleeps == []
    assert len(llm_server.requests) == 1


async def test_slow_stream_is_a_timeout(llm_server: LlmServer) -> None:
    llm_server.reply_json(anthropic_message(), delay=3.0)
    async with AnthropicProvider("m", base_url=llm_server.url, api_key="k", timeout=0.3) as p:
        with pytest.raises(LlmTimeoutError):
            await collect(p, hello())


async def test_malformed_json(llm_server: LlmServer, anthropic_provider: AnthropicProvider) -> None:
    llm_server.reply_raw('{"type": "message", "content": [')
    with pytest.raises(MalformedResponseError, match="invalid JSON"):
        await anthropic_provider.complete(hello())


@pytest.mark.parametrize(
    "body",
    [
        {"type": "message"},
        {"content": "text"},
        {"content": [{"type": "text"}]},
        {"content": [{"type": "tool_use", "name": "f", "input": {}}]},
        {"content": [{"type": "tool_use", "id": "", "name": "f", "input": {}}]},
        {"content": [{"type": "tool_use", "id": "t", "name": "f", "input": [1]}]},
        {"content": [], "usage": {"input_tokens": "many"}},
    ],
)
async def test_missing_or_wrong_fields(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider, body: object
) -> None:
    llm_server.reply_json(body)
    with pytest.raises(MalformedResponseError):
        await anthropic_provider.complete(hello())


async def test_empty_tool_result_has_no_content(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_message())
    await anthropic_provider.complete(
        LlmRequest(
            [
                Message.assistant(tool_calls=[ToolUseBlock("toolu_1", "ping")]),
                Message.tool_result("toolu_1", ""),
            ]
        )
    )
    assert llm_server.requests[0].json["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1"}
    ]
