"""``OpenAIResponsesProvider``'s streams: each event type, failures, and cancellation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentcore.errors import (
    ContextWindowExceededError,
    MalformedResponseError,
    RateLimitError,
    ServiceUnavailableError,
)
from agentcore.llm import LlmRequest, ResponseComplete, StreamEvent, TextDelta, ToolCallDelta
from agentcore.messages import Message, ReasoningBlock, TextBlock, ToolUseBlock
from agentcore.providers import OpenAIResponsesProvider
from agentcore.usage import Usage

from .conftest import OPENAI_KEY
from .loopback import LlmServer, Reply, encode_sse
from .provider_cases import WEATHER, hello
from .responses_payloads import (
    ENCRYPTED,
    call_item,
    message_item,
    reasoning_item,
    responses_error_event,
    responses_events,
    responses_failed_event,
    responses_reply,
    responses_response,
    responses_stream,
    responses_usage,
)


@pytest.fixture
async def provider(llm_server: LlmServer) -> AsyncIterator[OpenAIResponsesProvider]:
    """A Responses provider on ``llm_server``, with fast backoff."""
    async with OpenAIResponsesProvider(
        "gpt-5-mini",
        base_url=llm_server.openai_url,
        api_key=OPENAI_KEY,
        backoff_base=0.01,
        backoff_max=0.05,
    ) as made:
        yield made


async def collect(provider: OpenAIResponsesProvider, request: LlmRequest) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


def final(events: list[StreamEvent]) -> ResponseComplete:
    last = events[-1]
    assert isinstance(last, ResponseComplete)
    assert sum(isinstance(event, ResponseComplete) for event in events) == 1
    return last


async def test_reasoning_text_and_a_call_in_one_stream(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    usage = responses_usage(900, 120, cached=512, reasoning=64)
    events = responses_stream(
        ["Let me ", "look."],
        tool_calls=[("call_1", "get_weather", ['{"city"', ': "Oslo"}'])],
        reasoning=reasoning_item("rs_9", ["Weather question."]),
        usage=usage,
    )
    llm_server.reply_sse(events, chunk_size=11)

    got = await collect(provider, LlmRequest([Message.user("Oslo?")], tools=[WEATHER]))

    call = ToolUseBlock("call_1", "get_weather", {"city": "Oslo"})
    assert got[:-1] == [TextDelta("Let me "), TextDelta("look."), ToolCallDelta(call)]
    response = final(got).response
    # The encrypted content is the done item's: the added one carries none.
    thought = ReasoningBlock("Weather question.", data=ENCRYPTED, id="rs_9")
    assert response.message.content == (thought, TextBlock("Let me look."), call)
    assert response.stop_reason == "tool_use"
    assert response.usage == Usage(900, 120, cached_input_tokens=512, reasoning_tokens=64)
    assert response.model == "gpt-5-mini-2025-08-07"
    body = llm_server.requests[0].json
    assert body["stream"] is True and body["store"] is False
    assert "stream_options" not in body


async def test_refusal_deltas_are_text(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    events = responses_events(["I can't ", "help."])
    for _, data in events:
        if data["type"] == "response.output_text.delta":
            data["type"] = "response.refusal.delta"
    llm_server.reply_sse(events)
    got = await collect(provider, hello())
    assert final(got).response.text == "I can't help."
    assert [event.text for event in got[:-1]] == ["I can't ", "help."]


async def test_incomplete_is_max_tokens(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    llm_server.reply_sse(responses_stream(["Once upon"], incomplete="max_output_tokens"))
    response = final(await collect(provider, hello(max_tokens=3))).response
    assert (response.text, response.stop_reason) == ("Once upon", "max_tokens")
    assert llm_server.requests[0].json["max_output_tokens"] == 3


async def test_a_call_is_yielded_once_whatever_announces_its_end(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    # No arguments.done event: the item's done event ends the call, with its arguments.
    events = [
        event
        for event in responses_events([], tool_calls=[("c1", "f", ['{"a": ', "1}"])])
        if event[0] != "response.function_call_arguments.done"
    ]
    llm_server.reply_sse(events)
    got = await collect(provider, hello())
    assert got[:-1] == [ToolCallDelta(ToolUseBlock("c1", "f", {"a": 1}))]


async def test_a_stream_of_the_final_response_alone(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    # A server that announces no item: what the final response holds is taken from it.
    output = [reasoning_item("rs_1"), message_item("Hi there."), call_item("c1", "f", {})]
    created = responses_stream([])[0]
    completed = {"type": "response.completed", "response": responses_response(output)}
    llm_server.reply_sse([created, ("response.completed", completed)])
    got = await collect(provider, hello())
    assert got[:-1] == [TextDelta("Hi there."), ToolCallDelta(ToolUseBlock("c1", "f", {}))]
    kinds = [type(block).__name__ for block in final(got).response.message.content]
    assert kinds == ["ReasoningBlock", "TextBlock", "ToolUseBlock"]


async def test_a_failed_response_after_text_raises(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    events = [*responses_stream(["partial"], end=False), responses_failed_event("It broke.")]
    llm_server.reply_sse(events)
    seen: list[str] = []
    with pytest.raises(ServiceUnavailableError, match="It broke") as info:
        async for event in provider.stream(hello()):
            seen.append(event.text)
    assert seen == ["partial"]
    assert info.value.code == "server_error" and info.value.status_code is None
    assert len(llm_server.requests) == 1  # text was yielded: no retry


async def test_a_failure_before_any_text_is_retried(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    llm_server.reply_sse([responses_stream()[0], responses_error_event("Overloaded.")])
    llm_server.reply_sse(responses_stream(["ok"]))
    assert final(await collect(provider, hello())).response.text == "ok"
    assert len(llm_server.requests) == 2


async def test_terminal_events_that_leave_out_their_status_or_error(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    cut = responses_events(["Once"], incomplete="max_output_tokens")
    del cut[-1][1]["response"]["status"]
    llm_server.reply_sse(cut)
    assert final(await collect(provider, hello())).response.stop_reason == "max_tokens"
    failed = responses_response([], status="failed")
    llm_server.reply_sse(
        [
            *responses_stream(["x"], end=False),
            ("response.failed", {"type": "response.failed", "response": failed}),
        ]
    )
    with pytest.raises(ServiceUnavailableError, match="no error given"):
        await collect(provider, hello())


@pytest.mark.parametrize(
    ("event", "error"),
    [
        (
            responses_error_event(
                "This model's maximum context length is 8192 tokens. However, your messages "
                "resulted in 9000 tokens.",
                "context_length_exceeded",
            ),
            ContextWindowExceededError,
        ),
        (
            (
                "error",
                {
                    "type": "error",
                    "error": {"type": "rate_limit_exceeded", "message": "Slow down."},
                },
            ),
            RateLimitError,
        ),
        (responses_failed_event("Too many tokens.", "rate_limit_exceeded"), RateLimitError),
    ],
)
async def test_error_events_become_their_errors(
    llm_server: LlmServer, event: Any, error: type[Exception]
) -> None:
    llm_server.reply_sse([*responses_stream(["x"], end=False)[:2], event])
    async with OpenAIResponsesProvider(
        "gpt-5-mini", base_url=llm_server.openai_url, max_retries=0
    ) as provider:
        with pytest.raises(error, match="error event in the stream"):
            await collect(provider, hello())


@pytest.mark.parametrize(
    "event",
    [
        (
            "response.output_text.delta",
            {"type": "response.output_text.delta", "output_index": 4, "delta": "x"},
        ),
        (
            "response.function_call_arguments.delta",
            {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{"},
        ),
        ("response.output_item.added", {"type": "response.output_item.added", "item": {}}),
        "event: response.completed\ndata: {not json\n\n",
    ],
    ids=["unknown item", "wrong kind of item", "no output_index", "invalid JSON"],
)
async def test_malformed_events(
    llm_server: LlmServer, provider: OpenAIResponsesProvider, event: Any
) -> None:
    llm_server.reply_sse([*responses_stream(["x"], end=False)[:4], event])
    with pytest.raises(MalformedResponseError):
        await collect(provider, hello())
    assert len(llm_server.requests) == 1


async def test_a_cancelled_stream_propagates_and_the_provider_stays_usable(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    events = responses_stream(["first ", "second"])
    head, tail = encode_sse(events[:5]), encode_sse(events[5:])  # up to the first delta
    llm_server.reply(
        Reply(200, content_type="text/event-stream", chunks=[head, tail], chunk_delay=60.0)
    )
    first_text = asyncio.Event()
    seen: list[str] = []

    async def consume() -> None:
        async for event in provider.stream(hello()):
            seen.append(event.text)
            first_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_text.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["first "]
    assert len(llm_server.requests) == 1  # a cancel is the caller's: never retried

    llm_server.reply_json(responses_reply("still here"))
    assert (await provider.complete(hello())).text == "still here"


async def test_the_consumer_may_stop_early(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    llm_server.reply_sse(responses_stream(["a", "b", "c"]))
    stream = provider.stream(hello())
    async for event in stream:
        assert event.text == "a"
        break
    await stream.aclose()  # type: ignore[attr-defined]
    llm_server.reply_sse(responses_stream(["again"]))
    assert final(await collect(provider, hello())).response.text == "again"
