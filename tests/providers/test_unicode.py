"""Broken Unicode from a model: split surrogate pairs are joined, lone ones replaced.

A server writes a character outside the Basic Multilingual Plane either as
UTF-8 or as two JSON escapes (``"\\ud83d\\ude00"``); a streaming server may
cut that pair between two chunks, and a faulty one sends half a pair alone.
``json.dumps`` of a string holding a lone surrogate writes exactly such an
escape, so the payloads below are what goes over the wire.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentcore import Agent, AgentBuilder, AgentSession
from agentcore.llm import LlmRequest, ResponseComplete, TextDelta, ToolCallDelta
from agentcore.messages import Message
from agentcore.providers import AnthropicProvider, OpenAIProvider, OpenAIResponsesProvider
from agentcore.providers._base import HttpProvider
from agentcore.providers._text import TextJoiner, valid_text
from agentcore.stores import SqliteStore

from .conftest import ANTHROPIC_KEY
from .loopback import LlmServer
from .payloads import anthropic_message, anthropic_stream, openai_completion, openai_stream
from .responses_payloads import responses_reply, responses_stream

REQUEST = LlmRequest([Message.user("Smile")])
HIGH, LOW = "\ud83d", "\ude00"  # the two halves of U+1F600 😀
GRIN = "\U0001f600"


def make(kind: str, server: LlmServer) -> HttpProvider:
    if kind == "openai":
        return OpenAIProvider("gpt-4o-mini", base_url=server.openai_url, max_retries=0)
    if kind == "responses":
        return OpenAIResponsesProvider("gpt-5-mini", base_url=server.openai_url, max_retries=0)
    return AnthropicProvider(
        "claude-sonnet-4-5", base_url=server.url, api_key=ANTHROPIC_KEY, max_retries=0
    )


def stream_of(kind: str, pieces: list[str]) -> list[Any]:
    if kind == "openai":
        return openai_stream(pieces)
    if kind == "responses":
        return responses_stream(pieces)
    return anthropic_stream((("text", pieces),))


def utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def deltas_and_final(provider: HttpProvider) -> tuple[list[str], str]:
    deltas: list[str] = []
    final = ""
    async for event in provider.stream(REQUEST):
        if isinstance(event, TextDelta):
            deltas.append(event.text)
        elif isinstance(event, ResponseComplete):
            final = event.response.text
    return deltas, final


def test_valid_text() -> None:
    assert valid_text(HIGH + LOW) == GRIN
    assert valid_text("a" + HIGH + "b") == "a\ufffdb"
    assert valid_text(LOW + GRIN + HIGH) == "\ufffd" + GRIN + "\ufffd"
    assert valid_text("plain ✓") == "plain ✓"
    joiner = TextJoiner()
    assert [joiner.feed("ok " + HIGH), joiner.feed(LOW + "!"), joiner.flush()] == [
        "ok ",
        GRIN + "!",
        "",
    ]
    assert [joiner.feed(HIGH), joiner.feed(HIGH), joiner.flush()] == ["", "\ufffd", "\ufffd"]


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_a_pair_split_across_two_chunks_is_joined(kind: str, llm_server: LlmServer) -> None:
    llm_server.reply_sse(stream_of(kind, ["Hi " + HIGH, LOW + " there"]))
    async with make(kind, llm_server) as provider:
        deltas, final = await deltas_and_final(provider)
    assert final == f"Hi {GRIN} there"
    assert "".join(deltas) == final
    assert all(utf8(delta) for delta in deltas)


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_the_two_halves_in_chunks_of_their_own(kind: str, llm_server: LlmServer) -> None:
    llm_server.reply_sse(stream_of(kind, [HIGH, LOW, HIGH, LOW]))
    async with make(kind, llm_server) as provider:
        deltas, final = await deltas_and_final(provider)
    assert final == GRIN * 2
    assert deltas == [GRIN, GRIN]


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["a" + LOW + "b"], "a\ufffdb"),  # a lone low half
        (["a" + HIGH, "b"], "a\ufffdb"),  # a high half whose low half never comes
        (["end " + HIGH], "end \ufffd"),  # a high half at the very end of the text
        ([HIGH + HIGH, LOW], "\ufffd" + GRIN),
    ],
)
async def test_lone_surrogates_become_the_replacement_character(
    kind: str, llm_server: LlmServer, pieces: list[str], expected: str
) -> None:
    llm_server.reply_sse(stream_of(kind, pieces))
    async with make(kind, llm_server) as provider:
        deltas, final = await deltas_and_final(provider)
    assert final == expected
    assert "".join(deltas) == expected


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_non_streamed_replies_are_valid_text(kind: str, llm_server: LlmServer) -> None:
    text = "a" + HIGH + " b" + LOW + " " + HIGH + LOW
    if kind == "openai":
        llm_server.reply_json(openai_completion(text, model="gpt" + HIGH))
    elif kind == "responses":
        llm_server.reply_json(responses_reply(text, model="gpt" + HIGH))
    else:
        llm_server.reply_json(anthropic_message(text, model="claude" + HIGH))
    async with make(kind, llm_server) as provider:
        response = await provider.complete(REQUEST)
    assert response.text == f"a\ufffd b\ufffd {GRIN}"
    assert response.model is not None and response.model.endswith("\ufffd")


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_tool_arguments_split_across_fragments(kind: str, llm_server: LlmServer) -> None:
    # The pair is cut between two argument fragments, and one more half is alone.
    fragments = ['{"mood": "' + HIGH, LOW + '", "lone": "x' + LOW + '"}']
    if kind == "openai":
        llm_server.reply_sse(openai_stream([], tool_calls=[("call_1", "emote", fragments)]))
    elif kind == "responses":
        llm_server.reply_sse(responses_stream([], tool_calls=[("call_1", "emote", fragments)]))
    else:
        llm_server.reply_sse(anthropic_stream((("tool_use", ("toolu_1", "emote", fragments)),)))
    async with make(kind, llm_server) as provider:
        events = [event async for event in provider.stream(REQUEST)]
    [call] = [event.call for event in events if isinstance(event, ToolCallDelta)]
    assert dict(call.arguments) == {"mood": GRIN, "lone": "x\ufffd"}


@pytest.mark.parametrize("kind", ["openai", "anthropic", "responses"])
async def test_a_streamed_turn_with_a_split_pair_is_stored(
    kind: str, llm_server: LlmServer, tmp_path: Any
) -> None:
    # Before: the reply reached the caller, then storing it failed (the model was paid for).
    llm_server.reply_sse(stream_of(kind, ["Here: " + HIGH, LOW + " and " + LOW]))
    async with make(kind, llm_server) as provider, SqliteStore(tmp_path / "s.db") as store:
        bundle = AgentBuilder().provider(provider).store(store).load_plugins(False).build()
        session = AgentSession(Agent("a"), "unicode", bundle)
        text = "".join([event.text async for event in session.submit_turn_stream("Smile")])
        assert text == f"Here: {GRIN} and \ufffd"
        history = await session.history()
    assert history[-1].text == f"Here: {GRIN} and \ufffd"
