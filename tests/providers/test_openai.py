"""What only ``OpenAIProvider`` does on the wire (the shared tests: test_provider_contract.py)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from agentcore.errors import (
    AuthenticationError,
    BadRequestError,
    MalformedResponseError,
    ServiceUnavailableError,
)
from agentcore.llm import LlmRequest, ResponseComplete, TextDelta, ToolCallDelta
from agentcore.messages import AudioBlock, FileBlock, ImageBlock, Message, TextBlock, ToolUseBlock
from agentcore.providers import OpenAIProvider
from agentcore.usage import Usage

from .loopback import DONE, LlmServer
from .payloads import (
    openai_chunk,
    openai_completion,
    openai_error,
    openai_stream,
    openai_usage,
    openai_usage_chunk,
)
from .provider_cases import WEATHER, collect, hello, weather_history

# -- complete ------------------------------------------------------------------


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


async def test_tool_calls_and_results_on_the_wire(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(openai_completion())
    *earlier, last = weather_history("call_1", "call_2")
    history = [
        Message.system("You help."),
        *earlier,
        Message.assistant(tool_calls=[ToolUseBlock("call_3", "get_weather", {})]),
        Message.tool_result("call_3", "missing city"),
        last,
    ]

    await openai_provider.complete(LlmRequest(history, tools=[WEATHER]))

    messages = llm_server.requests[0].json["messages"]
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


async def test_local_server_without_key(llm_server: LlmServer) -> None:
    llm_server.reply_json(openai_completion("local"))
    async with OpenAIProvider("llama3.1:8b", base_url=llm_server.openai_url) as provider:
        assert (await provider.complete(hello())).text == "local"
        assert "api_key=None" in repr(provider)
    assert "authorization" not in llm_server.requests[0].headers


# -- stream ------------------------------------------------------------------


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


async def test_drop_before_anything_was_yielded_is_retried(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_sse(openai_stream(["never"]), drop_after_bytes=30)
    llm_server.reply_sse(openai_stream(["fine"]))
    events = await collect(openai_provider, hello())
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["fine"]
    assert len(llm_server.requests) == 2


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


async def test_stream_answered_with_json_is_malformed(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(openai_completion())
    with pytest.raises(MalformedResponseError, match="event stream"):
        await collect(openai_provider, hello())


# -- errors and retries ------------------------------------------------------


async def test_403_is_authentication_error(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(openai_error("Country not supported", "request_forbidden"), status=403)
    with pytest.raises(AuthenticationError):
        await openai_provider.complete(hello())


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


async def test_408_is_retried(llm_server: LlmServer, openai_provider: OpenAIProvider) -> None:
    llm_server.reply_json({"error": {"message": "request timeout"}}, status=408)
    llm_server.reply_json(openai_completion("ok"))
    assert (await openai_provider.complete(hello())).text == "ok"
    assert len(llm_server.requests) == 2


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
