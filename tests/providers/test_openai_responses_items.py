"""Encrypted items the Responses API returns and wants back: kept whole, sent back in place."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentcore.llm import LlmRequest, ResponseComplete
from agentcore.messages import Message, OpaqueBlock, TextBlock
from agentcore.providers import OpenAIProvider, OpenAIResponsesProvider
from agentcore.serialization import message_from_json, message_to_json

from .conftest import OPENAI_KEY
from .loopback import LlmServer
from .payloads import openai_completion
from .provider_cases import hello
from .responses_payloads import message_item, responses_reply, responses_response, responses_stream

ITEM: dict[str, Any] = {
    "type": "compaction",
    "id": "cmp_68b1a2",
    "encrypted_content": "gAAAAABo" + "Q" * 120,
}


@pytest.fixture
async def provider(llm_server: LlmServer) -> AsyncIterator[OpenAIResponsesProvider]:
    async with OpenAIResponsesProvider(
        "gpt-5-mini", base_url=llm_server.openai_url, api_key=OPENAI_KEY
    ) as made:
        yield made


async def test_an_encrypted_item_is_kept_and_sent_back_where_it_stood(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    llm_server.reply_json(responses_response([ITEM, message_item("Done.")]))
    llm_server.reply_json(responses_reply("Next."))
    question = Message.user("Go on.")

    first = await provider.complete(LlmRequest([question]))

    assert first.message.content == (OpaqueBlock("openai-responses", ITEM), TextBlock("Done."))
    assert first.text == "Done."
    stored = message_from_json(message_to_json(first.message))  # as a store keeps it
    await provider.complete(LlmRequest([question, stored, Message.user("And then?")]))
    sent = llm_server.requests[1].json["input"]
    assert sent[1] == ITEM
    assert sent[2]["role"] == "assistant" and sent[2]["content"][0]["text"] == "Done."


async def test_a_streamed_reply_keeps_the_item(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    created = responses_stream([])[0]
    output = [ITEM, message_item("Streamed.")]
    completed = {"type": "response.completed", "response": responses_response(output)}
    llm_server.reply_sse([created, ("response.completed", completed)])
    events = [event async for event in provider.stream(hello())]
    last = events[-1]
    assert isinstance(last, ResponseComplete)
    assert last.response.message.content[0] == OpaqueBlock("openai-responses", ITEM)


async def test_an_item_without_encrypted_content_is_left_out(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    plain = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    llm_server.reply_json(responses_response([plain, message_item("Found it.")]))
    response = await provider.complete(hello())
    assert response.message.content == (TextBlock("Found it."),)


async def test_chat_completions_and_another_apis_items_are_left_out(
    llm_server: LlmServer, provider: OpenAIResponsesProvider
) -> None:
    foreign = OpaqueBlock("another-api", {"type": "state", "encrypted_content": "xyz"})
    reply = Message("assistant", [foreign, OpaqueBlock("openai-responses", ITEM), TextBlock("Ok.")])
    history = [Message.user("Hi"), reply, Message.user("More?")]
    llm_server.reply_json(responses_reply("Sure."))
    await provider.complete(LlmRequest(history))
    sent = llm_server.requests[0].json["input"]
    assert ITEM in sent and not any(item.get("type") == "state" for item in sent)

    llm_server.reply_json(openai_completion())
    async with OpenAIProvider("m", base_url=llm_server.openai_url) as chat:
        await chat.complete(LlmRequest(history))
    messages = llm_server.requests[1].json["messages"]
    assert messages[1] == {"role": "assistant", "content": "Ok."}
