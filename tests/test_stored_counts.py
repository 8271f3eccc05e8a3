"""Token counts made once, when a message is stored, and running totals of a slot's window."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentBundle,
    AgentSession,
    FocusedConfig,
    Message,
    SqliteStore,
    TurnContext,
    Usage,
    hookimpl,
)
from agentcore.slots import ContextSlot, SlotConfig
from agentcore.stores import MemoryStore
from agentcore.testing import MockProvider
from agentcore.tokens import TokenCounter, get_token_counter

if TYPE_CHECKING:
    from conftest import StoreEngine

HISTORY = [
    Message.user(f"q{i} " * (i + 1)) if i % 2 == 0 else Message.assistant(f"a{i}")
    for i in range(12)
]


class CountingTokenizer:
    """A tokenizer (one token per word) that records every text it is asked to count."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> int:
        self.texts.append(text)
        return len(text.split())


def _bundle(store: MemoryStore) -> AgentBundle:
    return (
        AgentBuilder()
        .provider(MockProvider(responder=lambda request: "a fine reply"))
        .store(store)
        .load_plugins(False)
        .build()
    )


async def test_a_resumed_history_is_not_counted_again(store_engine: StoreEngine) -> None:
    tokenizer = CountingTokenizer()
    counter = TokenCounter("m", count_text=tokenizer, name="words-v1")
    agent = Agent("assistant", system_prompt="Be brief.", token_counter=counter)
    bundle = _bundle(store_engine.open())
    first = AgentSession(agent, "s", bundle)
    for i in range(5):
        await first.submit_turn(f"question number {i}")
    expected = counter.count_messages(await first.load_messages())

    if store_engine.name == "sqlite":
        # The counts are stored with each message, under the counter's key.
        with sqlite3.connect(store_engine.location) as db:
            bodies = [json.loads(row[0]) for row in db.execute("SELECT body FROM messages")]
        assert len(bodies) == 10
        assert all(body["tokens"]["custom:words-v1/1"] == body_tokens(body) for body in bodies)

    tokenizer.texts.clear()
    resumed_bundle = _bundle(store_engine.open()) if store_engine.persistent else bundle
    resumed = AgentSession(agent, "s", resumed_bundle)
    slot = await resumed.get_slot()
    assert await slot.count_context(counter) == expected
    # Nothing was counted again: the history's counts came from the store.
    assert tokenizer.texts == []

    # A counter with another key counts the history afresh.
    other = TokenCounter("m", count_text=tokenizer, name="words-v2")
    tokenizer.texts.clear()
    assert await slot.count_context(other) == expected
    # Every message's text was counted again (a role's text is counted once per counter).
    assert {f"question number {i}" for i in range(5)} <= set(tokenizer.texts)
    assert tokenizer.texts.count("a fine reply") == 5
    await bundle.store.close()
    await resumed_bundle.store.close()


def body_tokens(body: dict[str, object]) -> int:
    """What the one-token-per-word counter gives for a stored message body."""
    content = body["content"]
    assert isinstance(content, list)
    words = sum(len(block["text"].split()) for block in content)
    return 3 + 1 + words


@pytest.mark.parametrize(
    "mode",
    [
        None,
        FocusedConfig(),
        FocusedConfig(summary_override="S s", summary_covers=6),
        FocusedConfig(summary_override="S", summary_covers=5, summary_role="user"),
        FocusedConfig(summary_override="S", summary_covers=6, summary_role="user"),
        FocusedConfig(summary_override="S", summary_covers=6, summary_position="end"),
        FocusedConfig(
            summary_override="S", summary_covers=6, summary_position="end", summary_role="user"
        ),
        FocusedConfig(summary_override="S", summary_covers=8, pinned=(1, 3)),
        FocusedConfig(max_recent_messages=3, pinned=(0,)),
    ],
)
async def test_running_totals_equal_counting_the_whole_request(mode: FocusedConfig | None) -> None:
    counter = TokenCounter("gpt-4o")
    config = SlotConfig() if mode is None else SlotConfig(mode)
    slot = ContextSlot("s", "default", config, "sys", messages=list(HISTORY[:9]))
    assert await slot.count_context(counter) == counter.count_messages(slot.load_messages())
    slot.record_appended(HISTORY[9:])  # appended after the totals were made
    assert await slot.count_context(counter) == counter.count_messages(slot.load_messages())


class RequestCounter:
    """A plugin whose budget counts each request with the turn counter, as autosummary's does."""

    @hookimpl
    async def before_model_call(self, ctx: TurnContext) -> None:
        get_token_counter(None).count_messages(ctx.messages)


def _stored_bodies(location: str) -> list[dict[str, object]]:
    with sqlite3.connect(location) as db:
        return [json.loads(row[0]) for row in db.execute("SELECT body FROM messages")]


async def _one_turn_stored(location: str, *plugins: object) -> list[dict[str, object]]:
    """The bodies one turn stores in a SQLite file, with ``plugins`` registered."""
    builder = (
        AgentBuilder()
        # A fixed usage: the mock would count the request otherwise.
        .provider(MockProvider(responder=lambda request: "a fine reply", usage=Usage(30, 5)))
        .store(SqliteStore(location))
        .load_plugins(False)
    )
    for plugin in plugins:
        builder.plugin(plugin)
    bundle = builder.build()
    session = AgentSession(Agent("assistant", system_prompt="Be brief."), "s", bundle)
    await session.submit_turn("how long is the river?")
    await bundle.store.close()
    return _stored_bodies(location)


async def test_a_turn_no_budget_counts_stores_no_counts(tmp_path: Path) -> None:
    # No plugin counts the requests and the agent has no counter: nothing reads counts, so
    # the turn pays no tokenizer and stores none; a budget added later counts what it reads.
    bodies = await _one_turn_stored(str(tmp_path / "plain.db"))
    assert len(bodies) == 2
    assert all("tokens" not in body for body in bodies)


async def test_a_turn_a_budget_counts_stores_every_message_counted(tmp_path: Path) -> None:
    bodies = await _one_turn_stored(str(tmp_path / "budgeted.db"), RequestCounter())
    key = get_token_counter(None).key
    # The user's message was counted by the budget; the reply is counted for storage.
    assert [sorted(body["tokens"]) for body in bodies] == [[key], [key]]  # type: ignore[call-overload]


@pytest.mark.parametrize("summarized", [False, True])
async def test_a_limited_count_of_an_uncounted_history_stops_past_the_limit(
    summarized: bool,
) -> None:
    tokenizer = CountingTokenizer()
    counter = TokenCounter("m", count_text=tokenizer, name="words-v1")
    history = [
        Message.user(f"question {i} " + "word " * 20)
        if i % 2 == 0
        else Message.assistant(f"answer {i} " + "word " * 20)
        for i in range(2_000)
    ]
    mode = FocusedConfig(summary_override="S s", summary_covers=100) if summarized else None
    config = SlotConfig() if mode is None else SlotConfig(mode)
    slot = ContextSlot("s", "default", config, "sys", messages=list(history))
    # The whole count, by a counter of another key (its counts are kept apart).
    whole = TokenCounter("m", count_text=CountingTokenizer(), name="words-v0").count_messages(
        slot.load_messages()
    )

    # Past the limit: more than it, and only the newest messages were tokenized.
    bounded = await slot.count_context(counter, limit=1_000)
    assert 1_000 < bounded < whole
    assert len(tokenizer.texts) < 100
    assert not counter.counted(history[-100]) and counter.counted(history[-1])

    # A limit the context fits is the exact count, and so is no limit at all.
    assert await slot.count_context(counter, limit=whole) == whole
    assert await slot.count_context(counter, limit=whole - 1) > whole - 1
    assert await slot.count_context(counter) == whole
    slot.record_appended([Message.user("one more question")])
    assert await slot.count_context(counter) == counter.count_messages(slot.load_messages())
