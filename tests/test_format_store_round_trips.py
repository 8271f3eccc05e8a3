"""Histories in each format, imported into a session on every store engine and read back out.

Each case takes a realistic history in one format (OpenAI Chat Completions, Anthropic
Messages, LangChain), converts it with :mod:`agentcore.formats`, imports it into a session,
closes the session and its store, reopens both on the same database, and converts what the
session holds back into the format: it must be the history that went in. The system prompt
travels as the agent's (an import takes none), and comes back first in what the next
request carries.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from agentcore import Agent, AgentBuilder, AgentSession, LlmRequest, MemoryStore, Message
from agentcore.formats import (
    from_anthropic,
    from_langchain,
    from_openai,
    to_anthropic,
    to_langchain,
    to_openai,
)
from agentcore.messages import token_counts
from agentcore.testing import MockProvider
from agentcore.tokens import TokenCounter

if TYPE_CHECKING:
    from conftest import StoreEngine

SYSTEM = "You are a travel assistant. 回答は簡潔に。Answer in the user's language 🌏."
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)
PDF = (
    "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDM+PgpzdHJlYW0KZW5kc3RyZWFtCmVuZG9iagp0"
    "cmFpbGVyCjw8Pj4KJSVFT0YK"
)
WEATHER_ARGS = {"city": "東京", "days": [1, 2], "units": "celsius", "detail": {"hourly": True}}
WEATHER = {"temp": 18.5, "sky": "雨 🌧️", "wind_kmh": 12}
# A ZWJ sequence, a flag, a decomposed accent (e + U+0301) and CJK of three scripts: no store
# may normalise or split them.
TEXTS = (
    "東京の天気は？ What's the weather in Tokyo this weekend? 👩\u200d💻",
    "Let me check. 確認します。",
    "東京は雨、18.5 °C です。Bring an umbrella ☂️ 🇯🇵.",
    "And this photo: 这是哪里？ Cafe\u0301 nearby? 👀",
    "That looks like 伏見稲荷大社 in Kyoto ⛩️. 한국어도 돼요.",
)


def openai_history() -> list[dict[str, Any]]:
    """A Chat Completions ``messages`` list as an app keeps it (in to_openai's normal form)."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": TEXTS[0]},
        {
            "role": "assistant",
            "content": TEXTS[1],
            "tool_calls": [
                {
                    "id": "call_weather_1",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": json.dumps(WEATHER_ARGS, ensure_ascii=False),
                    },
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_weather_1",
            "content": json.dumps(WEATHER, ensure_ascii=False),
        },
        {"role": "assistant", "content": TEXTS[2]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": TEXTS[3]},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                {
                    "type": "file",
                    "file": {
                        "filename": "旅程.pdf",
                        "file_data": f"data:application/pdf;base64,{PDF}",
                    },
                },
            ],
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_map_2",
                    "type": "function",
                    "function": {"name": "locate", "arguments": '{"query": "伏見稲荷"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_map_2", "content": "Error: map service down 🛑"},
        {"role": "assistant", "content": TEXTS[4]},
    ]


AnthropicHistory = tuple[Any, list[dict[str, Any]]]


def anthropic_history() -> AnthropicHistory:
    """A Messages API ``(system, messages)`` pair as an app keeps it (to_anthropic's form)."""
    turns: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": TEXTS[0]}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": TEXTS[1]},
                {
                    "type": "tool_use",
                    "id": "toolu_weather_1",
                    "name": "get_weather",
                    "input": WEATHER_ARGS,
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_weather_1",
                    "content": json.dumps(WEATHER, ensure_ascii=False),
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": TEXTS[2]}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": TEXTS[3]},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
                {
                    "type": "document",
                    "title": "旅程.pdf",
                    "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
                },
                {
                    "type": "document",
                    "title": "メモ.txt",
                    "source": {"type": "text", "media_type": "text/plain", "data": "メモ 📝: 傘"},
                },
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_map_2", "name": "locate", "input": {"q": "稲荷"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_map_2",
                    "content": "map service down 🛑",
                    "is_error": True,
                },
                {"type": "text", "text": "Never mind the map. 地図は不要です。"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": TEXTS[4]}]},
    ]
    return SYSTEM, turns


def langchain_history() -> list[Any]:
    """LangChain messages as an app builds them (standard content blocks)."""
    lc = pytest.importorskip("langchain_core.messages", reason="langchain-core is not installed")
    return [
        lc.SystemMessage(content=SYSTEM),
        lc.HumanMessage(content=TEXTS[0]),
        lc.AIMessage(
            content=TEXTS[1],
            tool_calls=[{"name": "get_weather", "args": WEATHER_ARGS, "id": "call_weather_1"}],
        ),
        lc.ToolMessage(
            content=json.dumps(WEATHER, ensure_ascii=False), tool_call_id="call_weather_1"
        ),
        lc.AIMessage(content=TEXTS[2]),
        lc.HumanMessage(
            content=[
                {"type": "text", "text": TEXTS[3]},
                {"type": "image", "base64": PNG, "mime_type": "image/png"},
                {
                    "type": "file",
                    "base64": PDF,
                    "mime_type": "application/pdf",
                    "extras": {"filename": "旅程.pdf"},
                },
            ]
        ),
        lc.AIMessage(
            content="",
            tool_calls=[{"name": "locate", "args": {"query": "伏見稲荷"}, "id": "call_map_2"}],
        ),
        lc.ToolMessage(content="map service down 🛑", tool_call_id="call_map_2", status="error"),
        lc.AIMessage(content=TEXTS[4]),
    ]


@attrs.frozen
class Format:
    """One history format: a history in it, and its two converters."""

    name: str
    history: Callable[[], Any]
    read: Callable[[Any], list[Message]]
    write: Callable[[Sequence[Message]], Any]


FORMATS = {
    "openai": Format("openai", openai_history, from_openai, to_openai),
    "anthropic": Format(
        "anthropic",
        anthropic_history,
        lambda history: from_anthropic(history[1], history[0]),
        to_anthropic,
    ),
    "langchain": Format("langchain", langchain_history, from_langchain, to_langchain),
}


@pytest.fixture(params=sorted(FORMATS))
def history_format(request: pytest.FixtureRequest) -> Format:
    """Each history format in turn."""
    return FORMATS[request.param]


@attrs.define
class Counted:
    """A token counter that records every text it counts."""

    texts: list[str] = attrs.Factory(list)

    def counter(self) -> TokenCounter:
        """A counter of words, one key for every counter this makes."""
        return TokenCounter(count_text=self.count, name="recorded-words")

    def count(self, text: str) -> int:
        self.texts.append(text)
        return len(text.split()) + 1


def open_session(store: MemoryStore, counted: Counted, provider: MockProvider) -> AgentSession:
    """A fresh session object on ``store``, its agent carrying the imported system prompt."""
    agent = Agent("travel", system_prompt=SYSTEM, token_counter=counted.counter())
    bundle = AgentBuilder().provider(provider).store(store).load_plugins(False).build()
    return AgentSession(agent, "imported-chat", bundle)


def split_system(messages: list[Message]) -> tuple[Message, list[Message]]:
    """The system message a format's history starts with, and the rest (what is imported)."""
    assert messages[0] == Message.system(SYSTEM)
    assert all(message.role != "system" for message in messages[1:])
    return messages[0], messages[1:]


@pytest.fixture
async def open_store(store_engine: StoreEngine) -> AsyncIterator[Callable[[], MemoryStore]]:
    """Opens stores on the test's engine and database; every one is closed at the end."""
    stores: list[MemoryStore] = []

    def open_one() -> MemoryStore:
        stores.append(store_engine.open())
        return stores[-1]

    yield open_one
    for store in stores:
        await store.close()  # closing twice is fine


async def import_and_reopen(
    store_engine: StoreEngine,
    open_store: Callable[[], MemoryStore],
    history_format: Format,
    provider: MockProvider,
    counted: Counted,
    history: Any = None,
) -> tuple[AgentSession, list[Message]]:
    """Import ``history`` (default: the format's), close session and store, reopen both.

    Returns the new session (on a new store object, but for the in-memory engine) and the
    messages imported.
    """
    messages = history_format.read(history_format.history() if history is None else history)
    _, imported = split_system(messages)
    store = open_store()
    first = open_session(store, counted, provider)
    await first.import_history(imported)
    await first.aclose()
    if store_engine.persistent:
        await store.close()
        store = open_store()
    return open_session(store, counted, provider), imported


async def test_a_history_comes_back_out_of_the_store_as_it_went_in(
    store_engine: StoreEngine, open_store: Callable[[], MemoryStore], history_format: Format
) -> None:
    original = history_format.history()
    counted = Counted()
    provider = MockProvider(responder=lambda request: "unused")
    session, imported = await import_and_reopen(
        store_engine, open_store, history_format, provider, counted
    )
    counted.texts.clear()
    stored = await session.history()
    assert stored == imported
    assert (await session.get_slot()).message_count() == len(imported)
    assert session.turn_index == 0
    sent = await session.load_messages()  # the agent's system prompt, then the history
    assert history_format.write(sent) == original
    # Counted once, on import: the counts came back with the messages, none counted again.
    assert not any(message.text in counted.texts for message in stored if message.text)
    fresh = counted.counter()
    for message in stored:
        recount = fresh.count_message(attrs.evolve(message))  # a copy carries no count
        assert dict(token_counts(message)).get(fresh.key) == recount
    counted.texts.clear()
    window = await (await session.get_slot()).count_context(counted.counter())
    assert not any(message.text in counted.texts for message in stored if message.text)
    assert window == fresh.count_messages(sent)
    await session.aclose()


async def test_the_next_turn_sends_the_imported_history(
    store_engine: StoreEngine, open_store: Callable[[], MemoryStore], history_format: Format
) -> None:
    original = history_format.history()
    requests: list[LlmRequest] = []

    def respond(request: LlmRequest) -> str:
        requests.append(request)
        return "晴れの日もありますよ ☀️."

    counted = Counted()
    session, imported = await import_and_reopen(
        store_engine, open_store, history_format, MockProvider(responder=respond), counted
    )
    counted.texts.clear()
    reply = await session.submit_turn("週末の予定は？ Plans for the weekend? 🗓️")
    assert reply.text == "晴れの日もありますよ ☀️."
    (request,) = requests
    question = Message.user("週末の予定は？ Plans for the weekend? 🗓️")
    assert list(request.messages) == [Message.system(SYSTEM), *imported, question]
    # Before the new question, the model got the app's history, as the app wrote it.
    assert history_format.write(request.messages[:-1]) == original
    assert not any(message.text in counted.texts for message in imported if message.text)
    assert session.turn_index == 1
    assert await session.history() == [*imported, question, Message.assistant(reply.text)]
    await session.aclose()


# -- the normal forms: what an app's other spellings come back as --------------------------------


def loose_openai() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Chat Completions messages in spellings to_openai does not write, and what comes back."""
    call: dict[str, Any] = {
        "id": "c1",
        "type": "function",
        "function": {"name": "f", "arguments": '{"b":[1,2]}'},
    }
    loose: list[dict[str, Any]] = [
        {"role": "system", "content": [{"type": "text", "text": SYSTEM}]},
        {"role": "user", "content": [{"type": "text", "text": TEXTS[0]}], "name": "yuki"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "雨"}]},
    ]
    normal_call = {**call, "function": {"name": "f", "arguments": '{"b": [1, 2]}'}}
    normal: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": TEXTS[0]},
        {"role": "assistant", "content": "", "tool_calls": [normal_call]},
        {"role": "tool", "tool_call_id": "c1", "content": "雨"},
    ]
    return loose, normal


def loose_anthropic() -> tuple[AnthropicHistory, AnthropicHistory]:
    """Messages API turns in spellings to_anthropic does not write, and what comes back."""
    loose: list[dict[str, Any]] = [
        {"role": "user", "content": TEXTS[0]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "雨"}],
                }
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": TEXTS[3]}]},
    ]
    normal: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": TEXTS[0]}]},
        loose[1],
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "雨"},
                {"type": "text", "text": TEXTS[3]},
            ],
        },
    ]
    return (SYSTEM, loose), (SYSTEM, normal)


def loose_langchain() -> tuple[list[Any], list[Any]]:
    """LangChain messages with what to_langchain does not write, and what comes back."""
    lc = pytest.importorskip("langchain_core.messages", reason="langchain-core is not installed")
    call = {"name": "f", "args": {"q": "雨"}, "id": "c1"}
    loose = [
        lc.SystemMessage(content=SYSTEM, id="sys-1"),
        lc.HumanMessage(content=[{"type": "text", "text": TEXTS[0]}], id="h-1", name="yuki"),
        lc.AIMessage(
            content="",
            tool_calls=[call],
            id="run-1",
            response_metadata={"model_name": "some-model"},
            usage_metadata={"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
        ),
        lc.ToolMessage(content="雨", tool_call_id="c1", name="f", artifact={"raw": 1}),
    ]
    normal = [
        lc.SystemMessage(content=SYSTEM),
        lc.HumanMessage(content=TEXTS[0]),
        lc.AIMessage(content="", tool_calls=[call]),
        lc.ToolMessage(content="雨", tool_call_id="c1"),
    ]
    return loose, normal


LOOSE: dict[str, Callable[[], tuple[Any, Any]]] = {
    "openai": loose_openai,
    "anthropic": loose_anthropic,
    "langchain": loose_langchain,
}


async def test_other_spellings_come_back_in_the_documented_normal_form(
    store_engine: StoreEngine, open_store: Callable[[], MemoryStore], history_format: Format
) -> None:
    loose, normal = LOOSE[history_format.name]()
    provider = MockProvider(responder=lambda request: "unused")
    session, _ = await import_and_reopen(
        store_engine, open_store, history_format, provider, Counted(), history=loose
    )
    assert history_format.write(await session.load_messages()) == normal
    assert history_format.read(normal) == history_format.read(loose)
    await session.aclose()
