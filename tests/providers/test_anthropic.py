"""What only ``AnthropicProvider`` does on the wire (shared tests: test_provider_contract.py)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from agentcore import ReasoningBlock
from agentcore.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    MalformedResponseError,
    RateLimitError,
    ServiceUnavailableError,
)
from agentcore.llm import LlmRequest, TextDelta
from agentcore.messages import FileBlock, ImageBlock, Message, TextBlock, ToolUseBlock
from agentcore.providers import AnthropicProvider

from .loopback import LlmServer
from .payloads import anthropic_error, anthropic_message, anthropic_stream
from .provider_cases import WEATHER, collect, hello, weather_history

# -- complete ------------------------------------------------------------------


async def _sent_body(
    llm_server: LlmServer, provider: AnthropicProvider, messages: list[Message]
) -> Any:
    """The JSON body a request with ``messages`` is sent as."""
    llm_server.reply_json(anthropic_message())
    await provider.complete(LlmRequest(messages))
    return llm_server.requests[0].json


async def test_system_messages_anywhere_keep_order_and_text(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    messages = [
        Message.system("You are a helpful agent."),
        Message.system("Summary of earlier turns:\n- the user likes tea"),
        Message.user("Hello"),
        Message.assistant("Hi!"),
        Message.system("Summary injected mid-list."),
        Message.user("What do I like?"),
        Message.system("  Final system note, with its spaces  "),
    ]

    body = await _sent_body(llm_server, anthropic_provider, messages)

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


def _tool_use(call_id: str, city: str) -> dict[str, object]:
    return {"type": "tool_use", "id": call_id, "name": "get_weather", "input": {"city": city}}


async def test_tool_calls_and_results_on_the_wire(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_message())

    await anthropic_provider.complete(
        LlmRequest(weather_history("toolu_1", "toolu_2"), tools=[WEATHER])
    )

    assert llm_server.requests[0].json["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo and Rome?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                _tool_use("toolu_1", "Oslo"),
                _tool_use("toolu_2", "Rome"),
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
    history = [
        Message.user("one"),
        Message.user("two"),
        Message.assistant("a"),
        Message.assistant(""),
        Message.assistant("b"),
        Message.user([TextBlock(""), TextBlock("three")]),
    ]
    body = await _sent_body(llm_server, anthropic_provider, history)
    assert body["messages"] == [
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


async def test_empty_tool_result_has_no_content(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    history = [
        Message.assistant(tool_calls=[ToolUseBlock("toolu_1", "ping")]),
        Message.tool_result("toolu_1", ""),
    ]
    body = await _sent_body(llm_server, anthropic_provider, history)
    assert body["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_1"}]
