"""What only ``OpenAIResponsesProvider`` does on the wire.

The shared tests are in test_provider_contract.py, its streams in
test_openai_responses_stream.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentcore.errors import (
    BadRequestError,
    ConfigError,
    ContextWindowExceededError,
    ServiceUnavailableError,
)
from agentcore.llm import LlmRequest
from agentcore.messages import (
    AudioBlock,
    FileBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolUseBlock,
)
from agentcore.output import OutputSpec
from agentcore.providers import OpenAIResponsesProvider, available_providers, get_provider
from agentcore.providers._anthropic_codec import encode_request as anthropic_request
from agentcore.providers._openai_codec import encode_request as chat_request
from agentcore.providers.openai_responses import may_reason
from agentcore.providers.windows import discover_context_window
from agentcore.serialization import message_from_json, message_to_json
from agentcore.usage import Usage

from .conftest import OPENAI_KEY
from .loopback import LlmServer
from .payloads import openai_error
from .provider_cases import WEATHER, hello, weather_history
from .responses_payloads import (
    ENCRYPTED,
    call_item,
    message_item,
    reasoning_item,
    responses_reply,
    responses_response,
    responses_stream,
    responses_usage,
)


@pytest.fixture
async def provider(llm_server: LlmServer) -> AsyncIterator[OpenAIResponsesProvider]:
    """A Responses provider for a reasoning model on ``llm_server``, with fast backoff."""
    async with OpenAIResponsesProvider(
        "gpt-5-mini",
        base_url=llm_server.openai_url,
        api_key=OPENAI_KEY,
        backoff_base=0.01,
        backoff_max=0.05,
    ) as made:
        yield made


def _message(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": list(parts)}


def _text(text: str, kind: str = "input_text") -> dict[str, Any]:
    return {"type": kind, "text": text}


# -- the request ---------------------------------------------------------------


async def test_the_request_body(llm_server: LlmServer, provider: OpenAIResponsesProvider) -> None:
    llm_server.reply_json(responses_reply("Sunny."))
    *earlier, last = weather_history("call_1", "call_2")
    history = [
        Message.system("You help."),
        *earlier,
        Message.assistant(tool_calls=[ToolUseBlock("call_3", "get_weather", {})]),
        Message.tool_result("call_3", "missing city"),
        Message.system("Answer in French."),
        last,
    ]
    request = LlmRequest(
        history, tools=[WEATHER], max_tokens=200, temperature=0.2, tool_choice="get_weather"
    )

    await provider.complete(request)

    body = llm_server.requests[0].json
    assert body["input"] == [
        _message("system", _text("You help.")),
        _message("user", _text("Weather in Oslo and Rome?")),
        _message("assistant", _text("Checking.", "output_text")),
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Oslo"}',
        },
        {
            "type": "function_call",
            "call_id": "call_2",
            "name": "get_weather",
            "arguments": '{"city": "Rome"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "3°C, snow"},
        {"type": "function_call_output", "call_id": "call_2", "output": "Error: city not found"},
        {"type": "function_call", "call_id": "call_3", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_3", "output": "missing city"},
        _message("system", _text("Answer in French.")),
        _message("user", _text("And Paris, Zürich?")),
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": dict(WEATHER.parameters),
        }
    ]
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert body["max_output_tokens"] == 200
    assert body["temperature"] == 0.2
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert "instructions" not in body and "max_tokens" not in body and "messages" not in body
    assert "prompt_cache_key" not in body  # "auto": OpenAI's own endpoint only


async def test_images_audio_and_files(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    llm_server.reply_json(responses_reply("A cat."))
    pdf = base64.b64encode(b"%PDF-1.4").decode()
    message = Message.user(
        [
            TextBlock("What is this?"),
            ImageBlock(media_type="image/jpeg", data="QUJD"),
            ImageBlock(url="https://example.com/cat.png"),
            AudioBlock(data="UklGRg==", media_type="audio/wav"),
            AudioBlock(data="SUQz", media_type="audio/mpeg"),
            FileBlock(name="a.pdf", media_type="application/pdf", data=pdf),
            FileBlock(name="b.pdf", url="https://example.com/b.pdf"),
        ]
    )
    await provider.complete(LlmRequest([message]))
    [item] = llm_server.requests[0].json["input"]
    assert item["content"] == [
        _text("What is this?"),
        {"type": "input_image", "image_url": "data:image/jpeg;base64,QUJD", "detail": "auto"},
        {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "auto"},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
        {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}},
        {
            "type": "input_file",
            "filename": "a.pdf",
            "file_data": f"data:application/pdf;base64,{pdf}",
        },
        {"type": "input_file", "file_url": "https://example.com/b.pdf"},
    ]


async def test_a_tool_result_with_an_image_is_sent_as_parts(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    llm_server.reply_json(responses_reply("A chart."))
    messages = [
        Message.user("Plot it."),
        Message.assistant(tool_calls=[ToolUseBlock("c1", "plot")]),
        Message("tool", [TextBlock("done"), ImageBlock(data="QUJD")], tool_call_id="c1"),
    ]
    await provider.complete(LlmRequest(messages))
    assert llm_server.requests[0].json["input"][2] == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": [
            _text("done"),
            {"type": "input_image", "image_url": "data:image/png;base64,QUJD", "detail": "auto"},
        ],
    }


async def test_structured_output_goes_in_text_format(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    llm_server.reply_json(responses_reply('{"n": 3}'))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    output = OutputSpec.of(schema, name="count", description="A count.")
    await provider.complete(LlmRequest([Message.user("Count.")], output=output))
    fmt = llm_server.requests[0].json["text"]["format"]
    assert fmt["type"] == "json_schema"
    assert (fmt["name"], fmt["description"], fmt["schema"]) == ("count", "A count.", schema)
    assert "response_format" not in llm_server.requests[0].json


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_stop_sequences_are_refused_not_dropped(
    llm_server: LlmServer, provider: OpenAIResponsesProvider, stream: bool
) -> None:
    request = LlmRequest([Message.user("Count to ten.")], stop=["5"])
    with pytest.raises(ConfigError, match=r"takes no stop sequences.*stop=\('5',\)"):
        if stream:
            [event async for event in provider.stream(request)]
        else:
            await provider.complete(request)
    assert llm_server.requests == []


@pytest.mark.parametrize(
    ("options", "sent"),
    [
        ({"cache": "on"}, "session-7"),
        ({"cache": "on", "prompt_cache_key": "mine"}, "mine"),
        ({"cache": "off"}, None),
        ({}, None),
    ],
)
async def test_prompt_cache_key(
    llm_server: LlmServer, options: dict[str, Any], sent: str | None
) -> None:
    llm_server.reply_json(responses_reply())
    async with OpenAIResponsesProvider(
        "gpt-5-mini", base_url=llm_server.openai_url, **options
    ) as provider:
        await provider.complete(LlmRequest([Message.user("Hi")], cache_key="session-7"))
    assert llm_server.requests[0].json.get("prompt_cache_key") == sent


# -- asking for the encrypted reasoning ------------------------------------------


@pytest.mark.parametrize(
    ("model", "mode", "asks"),
    [
        ("gpt-5-mini", "auto", True),
        ("o4-mini", "auto", True),
        ("gpt-4.1-mini", "auto", False),
        ("gpt-4o-2024-08-06", "auto", False),
        ("openai/gpt-5-chat-latest", "auto", False),
        ("gpt-4.1-mini", "on", True),
        ("gpt-5-mini", "off", False),
    ],
)
async def test_which_requests_ask_for_encrypted_reasoning(
    llm_server: LlmServer, model: str, mode: Any, asks: bool
) -> None:
    llm_server.reply_json(responses_reply())
    async with OpenAIResponsesProvider(
        model, base_url=llm_server.openai_url, encrypted_reasoning=mode
    ) as provider:
        await provider.complete(hello())
    assert ("include" in llm_server.requests[0].json) is asks
    assert may_reason(model) is (model in ("gpt-5-mini", "o4-mini"))


@pytest.mark.parametrize("stream", [False, True], ids=["complete", "stream"])
async def test_a_refused_encrypted_reasoning_is_sent_again_without_it_and_remembered(
    llm_server: LlmServer, stream: bool
) -> None:
    refusal = openai_error(
        "Encrypted content is not supported with this model.", "invalid_request_error"
    )
    llm_server.reply_json(refusal, status=400)
    async with OpenAIResponsesProvider("my-model", base_url=llm_server.openai_url) as provider:
        for _ in range(2):
            if stream:
                llm_server.reply_sse(responses_stream(["ok"]))
                events = [event async for event in provider.stream(hello())]
                assert events[-1].text == "" and events[0].text == "ok"
            else:
                llm_server.reply_json(responses_reply("ok"))
                assert (await provider.complete(hello())).text == "ok"
        assert not provider.asks_encrypted_reasoning("my-model")
        assert provider.asks_encrypted_reasoning("other-model")
    assert ["include" in sent.json for sent in llm_server.requests] == [True, False, False]


async def test_a_refusal_under_on_is_raised(llm_server: LlmServer) -> None:
    refusal = openai_error(
        "Encrypted content is not supported with this model.", "invalid_request_error"
    )
    llm_server.reply_json(refusal, status=400)
    async with OpenAIResponsesProvider(
        "gpt-4o", base_url=llm_server.openai_url, encrypted_reasoning="on"
    ) as provider:
        with pytest.raises(BadRequestError, match="Encrypted content"):
            await provider.complete(hello())
    assert len(llm_server.requests) == 1


# -- reasoning carried across turns ---------------------------------------------


async def test_reasoning_is_kept_and_sent_back_in_its_place(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    reasoning = reasoning_item("rs_1", ["**Planning**", "Look it up."])
    llm_server.reply_json(
        responses_response([reasoning, call_item("call_1", "get_weather", {"city": "Oslo"})])
    )
    llm_server.reply_json(responses_reply("3°C in Oslo."))
    question = Message.user("Weather in Oslo?")

    first = await provider.complete(LlmRequest([question], tools=[WEATHER]))

    thought = ReasoningBlock("**Planning**\n\nLook it up.", data=ENCRYPTED, id="rs_1")
    call = ToolUseBlock("call_1", "get_weather", {"city": "Oslo"})
    assert first.message.content == (thought, call)
    assert first.stop_reason == "tool_use"
    assert first.message.reasoning == "**Planning**\n\nLook it up."
    stored = message_from_json(message_to_json(first.message))  # as a store keeps it
    assert stored == first.message
    history = [question, stored, Message.tool_result("call_1", "3°C")]

    await provider.complete(LlmRequest(history, tools=[WEATHER]))

    assert llm_server.requests[1].json["input"][1:3] == [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "**Planning**\n\nLook it up."}],
            "encrypted_content": ENCRYPTED,
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city": "Oslo"}',
        },
    ]


def test_stored_json_without_an_id_still_loads_and_omits_it() -> None:
    old = '{"role":"assistant","content":[{"type":"reasoning","text":"hm","signature":"s"}]}'
    message = message_from_json(old)
    assert message.content == (ReasoningBlock("hm", signature="s"),)
    assert json.loads(message_to_json(message)) == json.loads(old)  # no "id": null


@pytest.mark.parametrize(
    ("block", "after", "store", "sent"),
    [
        (ReasoningBlock("t", data="enc", id="rs_1"), [TextBlock("Hi")], False, True),
        (ReasoningBlock("t", id="rs_1"), [TextBlock("Hi")], False, False),  # nothing to read
        (ReasoningBlock("t", id="rs_1"), [TextBlock("Hi")], True, True),  # stored: by its id
        (ReasoningBlock("t", data="enc", id="rs_1"), [], False, False),  # nothing follows
        (ReasoningBlock("t", data="enc", id="rs_1"), [TextBlock("")], False, False),
        (ReasoningBlock("t", signature="sig"), [TextBlock("Hi")], False, False),  # Anthropic's
        (ReasoningBlock("t"), [TextBlock("Hi")], False, False),  # Chat Completions'
    ],
)
async def test_which_reasoning_is_sent_back(
    llm_server: LlmServer,
    block: ReasoningBlock,
    after: list[TextBlock],
    store: bool,
    sent: bool,
) -> None:
    llm_server.reply_json(responses_reply())
    history = [Message.user("Hi"), Message("assistant", [block, *after]), Message.user("Again")]
    async with OpenAIResponsesProvider(
        "gpt-5-mini", base_url=llm_server.openai_url, store=store
    ) as provider:
        await provider.complete(LlmRequest(history))
    body = llm_server.requests[0].json
    kinds = [item["type"] for item in body["input"]]
    assert ("reasoning" in kinds) is sent
    assert body["store"] is store
    if sent and store and block.data is None:
        assert body["input"][1] == {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "t"}],
        }


def test_the_other_codecs_leave_a_responses_reasoning_item_out() -> None:
    thought = ReasoningBlock("t", data="enc", id="rs_1")
    history = [Message.user("Hi"), Message("assistant", [thought, TextBlock("Hello")])]
    request = LlmRequest([*history, Message.user("Again")])
    anthropic = anthropic_request(request, model="m", stream=False, default_max_tokens=10)
    assert anthropic["messages"][1]["content"] == [{"type": "text", "text": "Hello"}]
    chat = chat_request(request, model="m", stream=False, max_tokens_field="max_tokens")
    assert chat["messages"][1] == {"role": "assistant", "content": "Hello"}


# -- the reply -----------------------------------------------------------------


async def test_usage_with_cached_and_reasoning_tokens(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    usage = responses_usage(2000, 300, cached=1536, reasoning=256)
    llm_server.reply_json(responses_reply("ok", usage=usage))
    without = responses_reply("ok")
    del without["usage"]
    llm_server.reply_json(without)
    bare = responses_reply("ok", usage={"input_tokens": 7, "output_tokens": 2})
    llm_server.reply_json(bare)

    first = await provider.complete(hello())
    second = await provider.complete(hello())
    third = await provider.complete(hello())

    assert first.usage == Usage(2000, 300, cached_input_tokens=1536, reasoning_tokens=256)
    assert first.usage.uncached_input_tokens == 464
    assert second.usage is None
    assert third.usage == Usage(7, 2)


@pytest.mark.parametrize(
    ("output", "status", "reason", "expected"),
    [
        ([message_item("Cut")], "incomplete", "max_output_tokens", "max_tokens"),
        ([call_item("c", "f", '{"a": 1}')], "incomplete", "max_output_tokens", "max_tokens"),
        ([message_item("Cut")], "incomplete", "content_filter", "other"),
        ([call_item("c", "f", {})], "completed", None, "tool_use"),
        ([message_item("Hi")], "cancelled", None, "other"),
    ],
)
async def test_status_gives_the_stop_reason(
    llm_server: LlmServer,
    provider: OpenAIResponsesProvider,
    output: list[dict[str, Any]],
    status: str,
    reason: str | None,
    expected: str,
) -> None:
    llm_server.reply_json(responses_response(output, status=status, incomplete=reason))
    assert (await provider.complete(hello())).stop_reason == expected


async def test_refusals_are_text_and_other_items_are_skipped(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    refusal = message_item("")
    refusal["content"] = [{"type": "refusal", "refusal": "I can't help with that."}]
    search = {"id": "ws_1", "type": "web_search_call", "status": "completed"}
    llm_server.reply_json(responses_response([search, refusal]))
    response = await provider.complete(hello())
    assert response.message.content == (TextBlock("I can't help with that."),)


async def test_a_failed_response_is_its_error(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    failed = responses_response([], status="failed")
    failed["error"] = {"code": "server_error", "message": "The model crashed."}
    llm_server.reply_json(failed)
    with pytest.raises(ServiceUnavailableError, match="The model crashed") as info:
        await provider.complete(hello())
    assert info.value.status_code is None and info.value.code == "server_error"


async def test_an_overflow_is_a_context_window_error(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    message = (
        "Your input exceeds the context window of this model. This model's maximum context "
        "length is 400000 tokens. However, your messages resulted in 401234 tokens."
    )
    body = openai_error(message, "invalid_request_error", "context_length_exceeded")
    llm_server.reply_json(body, status=400)
    with pytest.raises(ContextWindowExceededError) as info:
        await provider.complete(hello())
    assert (info.value.limit_tokens, info.value.prompt_tokens) == (400_000, 401_234)
    assert len(llm_server.requests) == 1


# -- by name, and its window ---------------------------------------------------


def test_the_openai_responses_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    assert available_providers()["openai-responses"] is OpenAIResponsesProvider
    provider = get_provider("openai-responses:gpt-4.1-mini", store=True)
    assert isinstance(provider, OpenAIResponsesProvider)
    assert (provider.model, provider.store) == ("gpt-4.1-mini", True)
    assert provider.base_url == "https://api.openai.com/v1"
    with pytest.raises(ConfigError, match="max_tokens_field"):
        get_provider("openai-responses:gpt-4.1-mini", max_tokens_field="max_tokens")


async def test_the_window_from_the_table_then_the_server(llm_server: LlmServer) -> None:
    llm_server.reply_json({"default_generation_settings": {"n_ctx": 8192}})
    async with OpenAIResponsesProvider("gpt-4.1-mini", base_url=llm_server.openai_url) as known:
        assert await discover_context_window(known, "gpt-4.1-mini") == 1_047_576
        assert await discover_context_window(known, "gpt-5-mini-2025-08-07") == 400_000
        assert llm_server.requests == []
        assert await discover_context_window(known, "gpt-oss-20b") == 8192
    assert llm_server.requests[0].path == "/props"
