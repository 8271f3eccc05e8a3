"""Importing an existing history into a session, and the synchronous entry point."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ConfigError,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    Message,
    ReadonlySessionError,
    SessionError,
    ToolUseBlock,
    UnknownSlotError,
)
from agentcore.budget import reply_reservation
from agentcore.formats import from_openai, to_openai
from agentcore.messages import token_counts
from agentcore.stores import MemoryStore
from agentcore.stores.base import StoreWrite
from agentcore.sync import run_sync
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter

if TYPE_CHECKING:
    from conftest import StoreEngine

AGENT = Agent("assistant", system_prompt="Be brief.")

OPENAI_HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is 2 + 3?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "5"},
    {"role": "assistant", "content": "It is 5."},
]


@pytest.fixture
async def opened(store_engine: StoreEngine) -> AsyncIterator[Callable[[], MemoryStore]]:
    """Opens stores on the test's engine and closes every one of them at the end."""
    stores: list[MemoryStore] = []

    def open_store() -> MemoryStore:
        store = store_engine.open()
        stores.append(store)
        return store

    yield open_store
    for store in stores:
        await store.close()


def session(store: MemoryStore, provider: Any = None, **kwargs: Any) -> AgentSession:
    bundle = (
        AgentBuilder()
        .provider(provider or MockProvider(responder=lambda request: "noted"))
        .store(store)
        .load_plugins(False)
        .build()
    )
    return AgentSession(AGENT, "imported", bundle, **kwargs)


class CountingStore(InMemoryStore):
    """An in-memory store that records every write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[StoreWrite] = []

    async def write(self, batch: StoreWrite) -> None:
        self.writes.append(batch)
        await super().write(batch)


async def test_an_imported_history_is_stored_counted_and_resumed(
    store_engine: StoreEngine, opened: Callable[[], MemoryStore]
) -> None:
    history = from_openai(OPENAI_HISTORY)[1:]  # the agent carries the system prompt
    chat = session(opened())
    await chat.import_history(history)
    assert await chat.history() == history
    assert chat.turn_index == 0
    resumed = session(opened() if store_engine.persistent else chat.bundle.store)
    stored = await resumed.history()
    assert stored == history
    assert to_openai(stored) == OPENAI_HISTORY[1:]
    # Counted once, on import: the counts come back with the messages.
    key = get_token_counter(None).key
    assert all(dict(token_counts(message)).get(key) for message in stored)


async def test_turns_run_on_the_imported_history(opened: Callable[[], MemoryStore]) -> None:
    provider = MockProvider(responder=lambda request: "Still 5.")
    chat = session(opened(), provider)
    history = from_openai(OPENAI_HISTORY)[1:]
    await chat.import_history(history)
    reply = await chat.submit_turn("And 5 + 5?")
    sent = provider.calls_for("turn")[0].messages
    assert sent[0] == Message.system("Be brief.")
    assert list(sent[1:]) == [*history, Message.user("And 5 + 5?")]
    assert reply.text == "Still 5."
    assert chat.turn_index == 1
    assert len(await chat.history()) == len(history) + 2


async def test_an_import_is_one_store_write() -> None:
    store = CountingStore()
    chat = session(store)
    await chat.load()
    before = len(store.writes)
    await chat.import_history([Message.user(f"q{i}") for i in range(50)])
    assert len(store.writes) - before == 1
    (append,) = store.writes[-1].appends.values()
    assert append.start == 0 and len(append.messages) == 50


async def test_a_slot_with_messages_refuses_an_import(opened: Callable[[], MemoryStore]) -> None:
    chat = session(opened())
    await chat.submit_turn("hello")
    with pytest.raises(SessionError, match="already holds 2 messages: a history is imported"):
        await chat.import_history([Message.user("old")])
    assert len(await chat.history()) == 2


async def test_a_refused_history_stores_nothing_and_names_the_message() -> None:
    chat = session(InMemoryStore())
    bad = [Message.user("x"), Message.tool_result("c9", "orphan")]
    with pytest.raises(ConfigError, match=r"messages\[1\] is the result of tool call 'c9'"):
        await chat.import_history(bad)
    with pytest.raises(ConfigError, match=r"messages\[0\] is a system message"):
        await chat.import_history([Message.system("Be brief."), Message.user("x")])
    with pytest.raises(ConfigError, match=r"messages\[1\] is not valid Unicode"):
        await chat.import_history([Message.user("x"), Message.assistant("half \ud83d")])
    assert await chat.history() == []
    await chat.import_history([])  # nothing to store
    await chat.import_history([Message.user("fine")])
    assert await chat.history() == [Message.user("fine")]


async def test_an_import_into_another_slot() -> None:
    chat = session(InMemoryStore())
    await chat.submit_turn("in the default slot")
    await chat.create_slot("archive")
    call = ToolUseBlock("c1", "look_up", {"q": "x"})
    history = [Message.user("q"), Message.assistant("", [call]), Message.tool_result("c1", "r")]
    await chat.import_history(history, slot_id="archive")
    assert await chat.history("archive") == history
    assert len(await chat.history()) == 2
    with pytest.raises(UnknownSlotError):
        await chat.import_history(history, slot_id="nowhere")
    with pytest.raises(ReadonlySessionError, match="cannot import a history"):
        await session(chat.bundle.store, readonly=True).import_history(history)


# -- autosummary on an imported history ---------------------------------------------------------

WINDOW = 2048
WORDS = ["apple", "river", "stone", "cloud", "green", "table", "music", "light"]


def text(words: int, seed: int) -> str:
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(words))


async def test_autosummary_summarizes_an_imported_history_inside_the_window() -> None:
    autosummary = pytest.importorskip("agentcore_autosummary")
    counter = get_token_counter(None)
    oversized: list[int] = []
    summaries: list[int] = []

    def respond(request: LlmRequest) -> str:
        size = counter.count_messages(request.messages) + counter.count_tools(request.tools)
        if size + reply_reservation(request.max_tokens, WINDOW) > WINDOW:
            oversized.append(size)
        if request.purpose == "summary":  # a new summary each time, as a real model's is
            summaries.append(size)
            return f"Summary {len(summaries)}: the talk covered {text(6, len(summaries))}."
        return "Noted."

    provider = MockProvider(responder=respond)
    bundle = (
        AgentBuilder()
        .provider(provider)
        .store(InMemoryStore())
        .setting("summary_config", autosummary.SummaryConfig(max_context_tokens=WINDOW))
        .build()
    )
    chat = AgentSession(AGENT, "imported", bundle, FocusedConfig())
    history = [
        Message.user(text(40, i)) if i % 2 == 0 else Message.assistant(text(30, i))
        for i in range(200)
    ]
    assert counter.count_messages(history) > 3 * WINDOW  # about 7,800 tokens
    await chat.import_history(history)
    for number in range(5):
        await chat.submit_turn(f"question {number}: {text(20, number)}")
    await chat.aclose()
    assert summaries, "the imported history was never summarized"
    assert oversized == []  # every request, turn or summary, inside the window
    last = provider.calls_for("turn")[-1]
    assert counter.count_messages(last.messages) < WINDOW // 2  # summarized, not cut
    assert await autosummary.get_conversation_summary(chat) is not None
    assert len(await chat.history()) == 200 + 2 * 5


# -- the synchronous entry point ----------------------------------------------------------------


def test_submit_turn_sync_runs_turns_from_plain_code() -> None:
    provider = MockProvider(responder=lambda request: f"reply {len(request.messages)}")
    chat = session(InMemoryStore(), provider)
    run_sync(chat.import_history([Message.user("earlier"), Message.assistant("yes")]))
    first = chat.submit_turn_sync("one")
    second = chat.submit_turn_sync("two")  # the same private loop, reused
    assert (first.text, second.text) == ("reply 4", "reply 6")
    assert chat.turn_index == 2
    assert len(run_sync(chat.history())) == 6


async def test_submit_turn_sync_refuses_inside_an_event_loop() -> None:
    chat = session(InMemoryStore())
    with pytest.raises(SessionError, match=r"use `await session.submit_turn\(...\)` there"):
        chat.submit_turn_sync("hello")
    with pytest.raises(SessionError, match=r"`await AgentSession.history\(...\)`"):
        run_sync(chat.history())
    assert await chat.history() == []


def test_run_sync_cancels_the_work_when_interrupted() -> None:
    cancelled = []

    async def interrupted() -> None:
        try:
            await asyncio.sleep(0)
            raise KeyboardInterrupt
        finally:
            cancelled.append(True)

    with pytest.raises(KeyboardInterrupt):
        run_sync(interrupted())
    assert cancelled == [True]
