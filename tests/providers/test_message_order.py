"""Every request begins as its API requires, whatever part of a conversation it holds.

After a summary or a cut, a request can begin with an assistant message, hold
a tool result whose call was left out, or a call whose result was. The
payloads are read from the wire (an ``httpx.MockTransport`` records each
request body) and checked against the rules the APIs document: Anthropic's
Messages API (first message user, user and assistant alternating, a
``tool_result`` only in the user turn right after its ``tool_use``, results
first in that turn, no blank text), OpenAI's Chat Completions (a ``tool``
message right after the assistant message whose ``tool_calls`` it answers,
every call answered), OpenAI's Responses API (a ``function_call_output``
after its ``function_call``, every call answered, a reasoning item followed
by the assistant item it led to). No text of the request may be lost.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcore.llm import LlmRequest
from agentcore.messages import ContentBlock, Message, ReasoningBlock, TextBlock, ToolUseBlock
from agentcore.providers import AnthropicProvider, OpenAIProvider, OpenAIResponsesProvider

from .payloads import anthropic_message, openai_completion
from .responses_payloads import responses_reply


def _capture(reply: dict[str, Any]) -> tuple[httpx.AsyncClient, list[dict[str, Any]]]:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=reply)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler)), bodies


async def _anthropic_body(messages: list[Message], cache: str = "off") -> dict[str, Any]:
    client, bodies = _capture(anthropic_message())
    provider = AnthropicProvider(
        "claude-haiku-4-5",
        api_key="k",
        http_client=client,
        cache=cache,  # type: ignore[arg-type]
    )
    async with client, provider as p:
        await p.complete(LlmRequest(messages))
    return bodies[0]


async def _openai_body(messages: list[Message]) -> dict[str, Any]:
    client, bodies = _capture(openai_completion())
    async with client, OpenAIProvider("gpt-5-mini", api_key="k", http_client=client) as p:
        await p.complete(LlmRequest(messages))
    return bodies[0]


async def _responses_body(messages: list[Message]) -> dict[str, Any]:
    client, bodies = _capture(responses_reply())
    async with client, OpenAIResponsesProvider("gpt-5-mini", http_client=client) as p:
        await p.complete(LlmRequest(messages))
    return bodies[0]


def assert_anthropic_rules(body: dict[str, Any]) -> None:
    """The rules of Anthropic's Messages API on ``body["messages"]``."""
    turns = body["messages"]
    assert turns, "at least one message"
    assert turns[0]["role"] == "user", "the first message must use the user role"
    for before, after in itertools.pairwise(turns):
        assert before["role"] != after["role"], "user and assistant alternate"
    for index, turn in enumerate(turns):
        assert turn["role"] in ("user", "assistant")
        assert turn["content"], "no empty content"
        kinds = [block["type"] for block in turn["content"]]
        for block in turn["content"]:
            if block["type"] == "text":
                assert block["text"].strip(), "text blocks must hold non-whitespace text"
        if "tool_result" in kinds:
            assert turn["role"] == "user"
            first_other = next((i for i, k in enumerate(kinds) if k != "tool_result"), len(kinds))
            assert "tool_result" not in kinds[first_other:], "tool results come first"
            previous = turns[index - 1] if index else {"content": []}
            calls = {b["id"] for b in previous["content"] if b["type"] == "tool_use"}
            for block in turn["content"]:
                if block["type"] == "tool_result":
                    assert block["tool_use_id"] in calls, "a result follows its call"
        uses = [block["id"] for block in turn["content"] if block["type"] == "tool_use"]
        if uses:
            assert turn["role"] == "assistant"
            following = turns[index + 1]["content"] if index + 1 < len(turns) else []
            answered = {b["tool_use_id"] for b in following if b["type"] == "tool_result"}
            assert set(uses) <= answered, "every tool_use has its tool_result right after"
    last = turns[-1]
    if last["role"] == "assistant" and last["content"][-1]["type"] == "text":
        assert last["content"][-1]["text"] == last["content"][-1]["text"].rstrip()


def assert_openai_rules(body: dict[str, Any]) -> None:
    """The rules of OpenAI's Chat Completions on ``body["messages"]``."""
    messages = body["messages"]
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            back = index - 1
            while back >= 0 and messages[back]["role"] == "tool":
                back -= 1
            assert back >= 0 and messages[back]["role"] == "assistant", "a tool message follows"
            calls = {call["id"] for call in messages[back].get("tool_calls", [])}
            assert message["tool_call_id"] in calls, "...the message with its tool_calls"
        if message["role"] == "assistant" and message.get("tool_calls"):
            answered = set()
            for later in messages[index + 1 :]:
                if later["role"] != "tool":
                    break
                answered.add(later["tool_call_id"])
            ids = {call["id"] for call in message["tool_calls"]}
            assert ids <= answered, "every tool_call_id has its tool message"


def assert_responses_rules(body: dict[str, Any]) -> None:
    """The rules of OpenAI's Responses API on ``body["input"]``."""
    items = body["input"]
    called: list[str] = []
    for index, item in enumerate(items):
        if item["type"] == "function_call":
            called.append(item["call_id"])
        elif item["type"] == "function_call_output":
            assert item["call_id"] in called, "an output follows its call"
        elif item["type"] == "reasoning":
            assert "encrypted_content" in item, "only reasoning the API can read goes back"
            rest = [later for later in items[index + 1 :] if later["type"] != "reasoning"]
            following = rest[0] if rest else {}
            assert following.get("type") == "function_call" or (
                following.get("role") == "assistant"
            ), "a reasoning item is followed by the item it led to"
    answered = {item["call_id"] for item in items if item["type"] == "function_call_output"}
    assert set(called) <= answered, "every call has its output"


def _texts(messages: list[Message]) -> Iterator[str]:
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                yield block.text.strip()
            elif isinstance(block, ToolUseBlock):
                yield block.name


def assert_nothing_lost(messages: list[Message], body: dict[str, Any]) -> None:
    sent = json.dumps(body, ensure_ascii=False)
    for text in _texts(messages):
        assert text in sent, f"{text!r} was dropped"


# -- examples -------------------------------------------------------------------

CALL = ToolUseBlock("call_1", "lookup", {"q": "weather"})
AFTER_A_SUMMARY = [
    Message.system("Summary: the user asked about the weather."),
    Message.assistant("It is sunny in Lisbon."),
    Message.user("And tomorrow?"),
]


async def test_anthropic_request_after_a_summary_begins_with_a_user_turn() -> None:
    body = await _anthropic_body(AFTER_A_SUMMARY)
    assert body["system"] == "Summary: the user asked about the weather."
    assert [turn["role"] for turn in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "(The conversation so far follows.)"}
    ]
    assert body["messages"][1]["content"] == [{"type": "text", "text": "It is sunny in Lisbon."}]
    assert_anthropic_rules(body)


async def test_openai_request_after_a_summary_is_sent_as_it_is() -> None:
    body = await _openai_body(AFTER_A_SUMMARY)
    assert [message["role"] for message in body["messages"]] == ["system", "assistant", "user"]


async def test_a_result_whose_call_was_cut_is_kept_as_user_text() -> None:
    messages = [Message.tool_result("call_0", "18 degrees"), Message.user("Thanks. Tomorrow?")]
    anthropic = await _anthropic_body(messages)
    assert anthropic["messages"] == [
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "[Result of tool call call_0, whose call is not part of this request]",
                },
                {"type": "text", "text": "18 degrees"},
                {"type": "text", "text": "Thanks. Tomorrow?"},
            ],
        }
    ]
    openai = await _openai_body(messages)
    assert [m["role"] for m in openai["messages"]] == ["user", "user"]
    assert "18 degrees" in json.dumps(openai["messages"][0])
    assert_openai_rules(openai)


async def test_a_call_whose_result_was_cut_is_kept_as_assistant_text() -> None:
    messages = [Message.user("Weather?"), Message.assistant("Looking.", [CALL]), Message.user("?")]
    anthropic = await _anthropic_body(messages)
    assert anthropic["messages"][1]["content"] == [
        {"type": "text", "text": "Looking."},
        {
            "type": "text",
            "text": '[Call of tool lookup with arguments {"q": "weather"}; '
            "it has no recorded result]",
        },
    ]
    assert_anthropic_rules(anthropic)
    openai = await _openai_body(messages)
    assert "tool_calls" not in openai["messages"][1]
    assert_openai_rules(openai)


async def test_a_result_separated_from_its_call_is_moved_back_to_it() -> None:
    messages = [
        Message.user("Weather?"),
        Message.assistant(tool_calls=[CALL]),
        Message.system("A note a plugin added."),
        Message.user("Also, hi."),
        Message.tool_result("call_1", "sunny"),
    ]
    openai = await _openai_body(messages)
    assert [m["role"] for m in openai["messages"]] == [
        "user",
        "assistant",
        "tool",
        "system",
        "user",
    ]
    assert_openai_rules(openai)
    anthropic = await _anthropic_body(messages)
    assert [t["role"] for t in anthropic["messages"]] == ["user", "assistant", "user"]
    assert [b["type"] for b in anthropic["messages"][2]["content"]] == ["tool_result", "text"]
    assert_anthropic_rules(anthropic)


async def test_a_prefill_loses_only_its_trailing_whitespace() -> None:
    body = await _anthropic_body([Message.user("Say hi"), Message.assistant("Hi  \n")])
    assert body["messages"][-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Hi"}],
    }


async def test_a_request_of_system_messages_only_still_has_a_user_turn() -> None:
    body = await _anthropic_body([Message.system("Be brief.")])
    assert body["system"] == "Be brief."
    assert [turn["role"] for turn in body["messages"]] == ["user"]


# -- any message list -----------------------------------------------------------

_words = st.text(alphabet="abcdefgh ", min_size=0, max_size=8)
_ids = st.sampled_from(["c0", "c1", "c2", "c3"])


@st.composite
def _message(draw: st.DrawFn) -> Message:
    kind = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    if kind == "system":
        return Message.system(draw(_words))
    if kind == "user":
        return Message.user(draw(_words))
    if kind == "tool":
        return Message.tool_result(draw(_ids), draw(_words), is_error=draw(st.booleans()))
    ids = draw(st.lists(_ids, max_size=3, unique=True))
    calls = [ToolUseBlock(i, f"tool_{i}", {"n": n}) for n, i in enumerate(ids)]
    return Message.assistant(draw(_words), calls)


_conversations = st.lists(_message(), min_size=0, max_size=12)


@st.composite
def _with_reasoning(draw: st.DrawFn) -> Message:
    """A message of :func:`_message`; an assistant one may start with reasoning items."""
    message = draw(_message())
    if message.role != "assistant":
        return message
    thoughts: list[ContentBlock] = [
        ReasoningBlock(draw(_words), data=draw(st.sampled_from([None, "enc"])), id=f"rs_{n}")
        for n in range(draw(st.integers(0, 2)))
    ]
    return Message("assistant", [*thoughts, *message.content])


@settings(deadline=None, max_examples=150)
@given(_conversations)
def test_any_message_list_encodes_as_anthropic_requires(messages: list[Message]) -> None:
    body = asyncio.run(_anthropic_body(messages))
    assert_anthropic_rules(body)
    assert_nothing_lost(messages, body)
    cached = asyncio.run(_anthropic_body(messages, cache="auto"))
    assert_anthropic_rules(cached)
    assert_nothing_lost(messages, cached)
    marked = json.dumps(cached).count('"cache_control"')
    assert 1 <= marked <= 4, "at most four breakpoints, and the newest turn is one"


@settings(deadline=None, max_examples=150)
@given(_conversations)
def test_any_message_list_encodes_as_openai_requires(messages: list[Message]) -> None:
    body = asyncio.run(_openai_body(messages))
    assert_openai_rules(body)
    assert_nothing_lost(messages, body)


@settings(deadline=None, max_examples=150)
@given(st.lists(_with_reasoning(), min_size=0, max_size=12))
def test_any_message_list_encodes_as_the_responses_api_requires(messages: list[Message]) -> None:
    body = asyncio.run(_responses_body(messages))
    assert_responses_rules(body)
    assert_nothing_lost(messages, body)
