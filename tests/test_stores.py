from __future__ import annotations

import asyncio
import base64
import itertools
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlite_quiet import own_statements, quiet

from agentcore.errors import ConflictError, CorruptDataError, StoreError
from agentcore.messages import (
    AudioBlock,
    ContentBlock,
    FileBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolUseBlock,
)
from agentcore.stores import (
    MemoryStore,
    MessageAppend,
    SessionState,
    SlotHead,
    SqliteStore,
    StoreWrite,
)
from agentcore.stores.sqlite import SCHEMA_VERSION
from agentcore.usage import Usage

if TYPE_CHECKING:
    from conftest import StoreEngine

EVERY_KIND = [
    Message.system("Be brief."),
    Message.user("hello ✓ — ünïcødé"),
    Message.assistant(
        "Let me look.",
        [ToolUseBlock("call-1", "search", {"q": "x", "opts": {"n": [1, 2.5, None, True]}})],
    ),
    Message.tool_result("call-1", "found it"),
    Message.tool_result("call-2", "boom", is_error=True),
    Message.user_image(url="https://example.com/cat.png", text="What is this?"),
    Message.user_image(data="aGVsbG8=", media_type="image/jpeg"),
    Message.user(
        [
            AudioBlock("UklGRg=="),
            FileBlock("notes.txt", media_type="text/plain", data="aGk="),
            FileBlock("report.pdf", url="https://example.com/report.pdf"),
            TextBlock(""),
        ]
    ),
    Message.assistant(""),
]

STATE = SessionState(
    turn_index=7,
    current_slot="research",
    cost={"turn": Usage(120, 30, 100), "summary": Usage(40, 8)},
)


def msgs(n: int, prefix: str = "m") -> list[Message]:
    return [Message.user(f"{prefix}{i}") for i in range(n)]


def append(start: int, messages: list[Message]) -> MessageAppend:
    return MessageAppend(start=start, messages=messages)


@pytest.fixture
async def store(store_engine: StoreEngine) -> AsyncIterator[MemoryStore]:
    """A store of each engine (memory, SQLite, PostgreSQL) on a fresh database."""
    s = store_engine.open()
    try:
        yield s
    finally:
        await s.close()


async def snapshot(store: MemoryStore, session_id: str) -> dict[str, Any]:
    """Everything the store holds for one session, for before/after comparisons."""
    configs = await store.load_slot_configs(session_id)
    slots = set(configs) | {"default", "main", "other"}
    return {
        "sessions": await store.list_sessions(),
        "state": await store.load_state(session_id),
        "configs": configs,
        "messages": {slot: await store.load_messages(session_id, slot) for slot in sorted(slots)},
        "data": {
            key: await store.get_data(session_id, key) for key in await store.data_keys(session_id)
        },
    }


# -- the contract: every engine behaves the same -------------------------------


async def test_every_engine_satisfies_the_protocol(store: MemoryStore) -> None:
    assert isinstance(store, MemoryStore)


async def test_new_session_is_empty(store: MemoryStore) -> None:
    assert await store.load_state("s") is None
    assert await store.load_slot_configs("s") == {}
    assert await store.load_messages("s", "main") == []
    assert await store.count_messages("s", "main") == 0
    assert await store.get_data("s", "k") is None
    assert await store.data_keys("s") == []
    assert await store.list_sessions() == []


async def test_round_trip(store: MemoryStore) -> None:
    configs: dict[str, Mapping[str, Any]] = {
        "main": {"kind": "window", "max_tokens": 4000, "tags": ["a", "b"], "ratio": 0.5},
        "research": {"kind": "summary", "nested": {"on": True, "none": None}},
    }
    data = {"notes": {"todo": ["x", "y"]}, "count": 3, "flag": False, "text": "ünï", "nil": None}
    await store.write(
        StoreWrite(
            session_id="s1",
            state=STATE,
            slot_configs=configs,
            appends={"main": append(0, EVERY_KIND), "research": append(0, EVERY_KIND[:2])},
            data=data,
        )
    )
    assert await store.load_state("s1") == STATE
    assert await store.load_slot_configs("s1") == configs
    assert await store.load_messages("s1", "main") == EVERY_KIND
    assert await store.load_messages("s1", "research") == EVERY_KIND[:2]
    assert await store.count_messages("s1", "main") == len(EVERY_KIND)
    for key, value in data.items():
        assert await store.get_data("s1", key) == value
    assert await store.data_keys("s1") == sorted(data)
    assert await store.list_sessions() == ["s1"]


async def test_later_writes_append_and_overwrite(store: MemoryStore) -> None:
    await store.write(
        StoreWrite(
            "s",
            state=SessionState(1),
            slot_configs={"main": {"v": 1}},
            appends={"main": append(0, msgs(3))},
            data={"k": 1},
        )
    )
    await store.write(
        StoreWrite(
            "s",
            state=SessionState(2),
            slot_configs={"other": {"v": 9}},
            appends={"main": append(3, msgs(2, "n"))},
            data={"k": 2},
        )
    )
    # A write without state keeps the stored one.
    await store.write(StoreWrite("s", appends={"main": append(5, [])}))
    assert await store.load_state("s") == SessionState(2)
    assert await store.load_slot_configs("s") == {"main": {"v": 1}, "other": {"v": 9}}
    assert await store.load_messages("s", "main") == msgs(3) + msgs(2, "n")
    assert await store.get_data("s", "k") == 2


async def test_load_messages_from_start(store: MemoryStore) -> None:
    history = msgs(6)
    await store.write(StoreWrite("s", appends={"main": append(0, history)}))
    for k in range(8):
        assert await store.load_messages("s", "main", start=k) == history[k:]
    with pytest.raises(StoreError, match="start"):
        await store.load_messages("s", "main", start=-1)


async def test_load_messages_reads_a_range(store: MemoryStore) -> None:
    history = msgs(7)
    await store.write(StoreWrite("s", appends={"main": append(0, history)}))
    for start in range(8):
        for stop in range(start, 10):
            assert await store.load_messages("s", "main", start, stop) == history[start:stop]
    assert await store.load_messages("s", "main", 2, None) == history[2:]
    with pytest.raises(StoreError, match="stop"):
        await store.load_messages("s", "main", 3, 2)
    with pytest.raises(StoreError, match="stop"):
        await store.load_messages("s", "main", 0, -1)


async def test_count_messages_per_slot_and_session(store: MemoryStore) -> None:
    await store.write(
        StoreWrite("a", appends={"main": append(0, msgs(3)), "other": append(0, msgs(1))})
    )
    await store.write(StoreWrite("a", appends={"main": append(3, msgs(4))}))
    await store.write(StoreWrite("b", appends={"main": append(0, msgs(2))}))
    assert await store.count_messages("a", "main") == 7
    assert await store.count_messages("a", "other") == 1
    assert await store.count_messages("b", "main") == 2
    assert await store.count_messages("b", "other") == 0
    assert await store.count_messages("c", "main") == 0


async def test_list_sessions_is_sorted_and_counts_every_write(store: MemoryStore) -> None:
    await store.write(StoreWrite("zeta", state=SessionState()))
    await store.write(StoreWrite("alpha", data={"k": 1}))
    await store.write(StoreWrite("mid", appends={"main": append(0, msgs(1))}))
    await store.write(StoreWrite("beta"))
    assert await store.list_sessions() == ["alpha", "beta", "mid", "zeta"]
    assert await store.load_state("alpha") is None


async def test_delete_session_removes_it_whole(store: MemoryStore) -> None:
    for session_id in ("gone", "kept"):
        await store.write(
            StoreWrite(
                session_id,
                state=STATE,
                slot_configs={"main": {"v": 1}, "aux": {"v": 2}},
                appends={"main": append(0, msgs(3)), "aux": append(0, msgs(1))},
                data={"k": 1, "summary": "text"},
            )
        )
    kept = await snapshot(store, "kept")
    assert await store.delete_session("gone") is True
    assert await store.list_sessions() == ["kept"]
    assert await snapshot(store, "gone") == {
        "sessions": ["kept"],
        "state": None,
        "configs": {},
        "messages": {"default": [], "main": [], "other": []},
        "data": {},
    }
    assert await store.load_messages("gone", "aux") == []
    assert await store.count_messages("gone", "main") == 0
    assert await snapshot(store, "kept") == {**kept, "sessions": ["kept"]}
    # Deleting again, or an id never stored, is not an error.
    assert await store.delete_session("gone") is False
    assert await store.delete_session("never") is False
    # The id can be used again, as a new session: appends start at 0.
    with pytest.raises(StoreError, match=r"starts at 3.*holds 0 messages"):
        await store.write(StoreWrite("gone", appends={"main": append(3, msgs(1))}))
    await store.write(StoreWrite("gone", appends={"main": append(0, msgs(1, "new"))}))
    assert await store.load_messages("gone", "main") == msgs(1, "new")


async def test_delete_session_removes_its_turn_ids(store: MemoryStore) -> None:
    await store.write(StoreWrite("gone", appends={"main": append(0, msgs(2))}, turn_id="t1"))
    assert await store.find_turn("gone", "t1") is not None
    assert await store.delete_session("gone") is True
    assert await store.find_turn("gone", "t1") is None
    # The same turn id is a new turn now, not a duplicate.
    await store.write(StoreWrite("gone", appends={"main": append(0, msgs(1))}, turn_id="t1"))
    assert await store.count_messages("gone", "main") == 1
    assert await store.load_slot_configs("gone") == {}


async def test_data_keys_and_delete(store: MemoryStore) -> None:
    await store.write(StoreWrite("s", data={"zebra": 1, "apple": [2], "mango": {"x": 3}}))
    await store.write(StoreWrite("other", data={"only-here": 0}))
    assert await store.data_keys("s") == ["apple", "mango", "zebra"]
    await store.write(StoreWrite("s", data={"kiwi": "new"}, deleted_data={"mango", "absent"}))
    assert await store.data_keys("s") == ["apple", "kiwi", "zebra"]
    assert await store.get_data("s", "mango") is None
    assert await store.get_data("s", "only-here") is None
    assert await store.data_keys("other") == ["only-here"]


async def test_setting_and_deleting_one_key_in_a_batch_is_refused(store: MemoryStore) -> None:
    with pytest.raises(StoreError, match=r"'k'.*both set and deleted"):
        await store.write(StoreWrite("s", data={"k": 1}, deleted_data={"k"}))
    assert await store.list_sessions() == []


async def test_stored_values_are_copies(store: MemoryStore) -> None:
    config: dict[str, Any] = {"items": [1, 2]}
    value: dict[str, Any] = {"items": [1, 2]}
    arguments: dict[str, Any] = {"q": "x"}
    call = Message.assistant(tool_calls=[ToolUseBlock("c1", "f", arguments)])
    await store.write(
        StoreWrite(
            "s",
            slot_configs={"main": config},
            appends={"main": append(0, [call])},
            data={"k": value},
        )
    )
    config["items"].append(3)
    value["items"].append(3)
    arguments["q"] = "changed"
    read = await store.get_data("s", "k")
    assert read is not None
    read["items"].append(4)
    assert await store.get_data("s", "k") == {"items": [1, 2]}
    assert await store.load_slot_configs("s") == {"main": {"items": [1, 2]}}
    [stored_call] = await store.load_messages("s", "main")
    assert stored_call.tool_calls[0].arguments == {"q": "x"}


async def test_refused_append_writes_nothing(store: MemoryStore) -> None:
    await store.write(
        StoreWrite(
            "s",
            state=SessionState(1),
            slot_configs={"main": {"v": 1}},
            appends={"main": append(0, msgs(2))},
            data={"k": "old", "gone": 1},
        )
    )
    before = await snapshot(store, "s")
    for wrong_start in (0, 1, 3):
        with pytest.raises(StoreError, match=f"starts at {wrong_start}.*holds 2 messages"):
            await store.write(
                StoreWrite(
                    "s",
                    state=SessionState(2),
                    slot_configs={"main": {"v": 2}, "other": {"v": 2}},
                    # "other" is fine on its own; the batch still fails whole.
                    appends={"other": append(0, msgs(1)), "main": append(wrong_start, msgs(1))},
                    data={"k": "new", "extra": 1},
                    deleted_data={"gone"},
                )
            )
        assert await snapshot(store, "s") == before


async def test_unserializable_data_refuses_the_whole_batch(store: MemoryStore) -> None:
    await store.write(StoreWrite("s", data={"k": "old"}))
    before = await snapshot(store, "s")
    with pytest.raises(StoreError, match="'bad'"):
        await store.write(
            StoreWrite(
                "s",
                state=STATE,
                slot_configs={"main": {"v": 1}},
                appends={"main": append(0, msgs(2))},
                data={"k": "new", "bad": {"when": object()}},
            )
        )
    assert await snapshot(store, "s") == before
    with pytest.raises(StoreError, match="'bad'"):
        await store.write(StoreWrite("fresh", state=STATE, data={"bad": {1, 2}}))
    assert await store.list_sessions() == ["s"]


@pytest.mark.parametrize(
    ("batch", "names"),
    [
        (StoreWrite("s", slot_configs={"main": {"x": object()}}), "slot 'main'"),
        (StoreWrite("s", slot_configs={"main": ["not", "a", "mapping"]}), "slot 'main'"),  # type: ignore[dict-item]
        (
            StoreWrite(
                "s",
                appends={
                    "main": append(
                        0, [Message.assistant(tool_calls=[ToolUseBlock("c", "f", {"x": object()})])]
                    )
                },
            ),
            "message 0 of slot 'main'",
        ),
        (StoreWrite("s", appends={"main": append(0, ["not a message"])}), "message 0"),  # type: ignore[list-item]
        (StoreWrite("s", appends={"main": append(-1, [])}), "start index"),
        (StoreWrite("", data={"k": 1}), "session id"),
        (StoreWrite("a\x00b", data={"k": 1}), "session id"),
        (StoreWrite("s", slot_configs={"a\x00": {}}), "slot id"),
        (StoreWrite("s", data={"\ud800": 1}), "data key"),
        (StoreWrite("s", state="not a state"), "SessionState"),  # type: ignore[arg-type]
    ],
)
async def test_invalid_batches_are_refused(
    store: MemoryStore, batch: StoreWrite, names: str
) -> None:
    with pytest.raises(StoreError) as info:
        await store.write(batch)
    assert names in str(info.value)
    assert await store.list_sessions() == []


async def test_closed_store_raises(store: MemoryStore) -> None:
    await store.write(StoreWrite("s", data={"k": 1}))
    await store.close()
    calls: list[Callable[[], Any]] = [
        lambda: store.write(StoreWrite("s")),
        lambda: store.load_state("s"),
        lambda: store.load_slot_configs("s"),
        lambda: store.load_messages("s", "main"),
        lambda: store.count_messages("s", "main"),
        lambda: store.get_data("s", "k"),
        lambda: store.data_keys("s"),
        lambda: store.list_sessions(),
        lambda: store.delete_session("s"),
    ]
    for call in calls:
        with pytest.raises(StoreError, match="store is closed"):
            await call()
    await store.close()  # closing twice is fine


async def test_async_with_closes(store_engine: StoreEngine) -> None:
    made = store_engine.open()
    async with made as opened:  # type: ignore[attr-defined]
        assert opened is made
        await opened.write(StoreWrite("s"))
    with pytest.raises(StoreError, match="store is closed"):
        await made.list_sessions()


# -- engines that several processes share: SQLite, PostgreSQL ------------------


async def test_persists_across_reopen(shared_store_engine: StoreEngine) -> None:
    async with shared_store_engine.open() as first:  # type: ignore[attr-defined]
        await first.write(
            StoreWrite(
                "s",
                state=STATE,
                slot_configs={"main": {"v": 1}},
                appends={"main": append(0, EVERY_KIND)},
                data={"k": [1, "two"]},
            )
        )
        await first.write(StoreWrite("s", appends={"main": append(len(EVERY_KIND), msgs(2))}))
    async with shared_store_engine.open() as second:  # type: ignore[attr-defined]
        assert await second.list_sessions() == ["s"]
        assert await second.load_state("s") == STATE
        assert await second.load_slot_configs("s") == {"main": {"v": 1}}
        assert await second.load_messages("s", "main") == EVERY_KIND + msgs(2)
        assert await second.get_data("s", "k") == [1, "two"]
        await second.write(StoreWrite("s", appends={"main": append(len(EVERY_KIND) + 2, msgs(1))}))
        assert await second.count_messages("s", "main") == len(EVERY_KIND) + 3


async def test_two_stores_cannot_interleave_appends(shared_store_engine: StoreEngine) -> None:
    async with (
        shared_store_engine.open() as one,  # type: ignore[attr-defined]
        shared_store_engine.open() as two,  # type: ignore[attr-defined]
    ):
        assert await one.count_messages("s", "main") == await two.count_messages("s", "main") == 0
        await one.write(StoreWrite("s", appends={"main": append(0, msgs(1, "one"))}))
        with pytest.raises(StoreError, match="starts at 0"):
            await two.write(StoreWrite("s", appends={"main": append(0, msgs(1, "two"))}))
        assert await two.load_messages("s", "main") == msgs(1, "one")


async def test_concurrent_appends_of_two_stores_never_interleave(
    shared_store_engine: StoreEngine,
) -> None:
    """Writers racing for the same slot: each append lands whole, or is refused whole."""
    stores = [shared_store_engine.open() for _ in range(2)]
    try:
        stored: list[Message] = []

        async def writer(store: MemoryStore, name: str) -> None:
            for turn in range(15):
                batch = [Message.user(f"{name}-{turn}-{i}") for i in range(3)]
                while True:
                    start = await store.count_messages("s", "main")
                    try:
                        await store.write(StoreWrite("s", appends={"main": append(start, batch)}))
                    except StoreError as exc:
                        assert "starts at" in str(exc)
                        continue
                    break

        await asyncio.gather(writer(stores[0], "a"), writer(stores[1], "b"))
        stored = await stores[0].load_messages("s", "main")
    finally:
        for s in stores:
            await s.close()
    assert len(stored) == 2 * 15 * 3
    texts = [m.text for m in stored]
    for first in range(0, len(texts), 3):
        name, turn, _ = texts[first].split("-")
        assert texts[first : first + 3] == [f"{name}-{turn}-{i}" for i in range(3)]
    for name in "ab":
        turns = [t.split("-")[1] for t in texts[::3] if t.startswith(name)]
        assert turns == [str(turn) for turn in range(15)]


# -- SqliteStore ---------------------------------------------------------------


async def test_sqlite_database_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.db"
    async with SqliteStore(path) as store:
        conn = store._conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        tables = {
            row[0] for row in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
    raw.close()
    assert tables == {
        "sessions",
        "slots",
        "messages",
        "session_data",
        "turns",
        "leases",
        "schema_version",
        "search_mark",
        "message_search",  # FTS5, with its shadow tables
        "message_search_config",
        "message_search_content",
        "message_search_data",
        "message_search_docsize",
        "message_search_idx",
    }
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    raw.close()


async def test_sqlite_in_memory_database() -> None:
    async with SqliteStore(":memory:") as store:
        await store.write(StoreWrite("s", appends={"main": append(0, msgs(2))}))
        assert await store.load_messages("s", "main") == msgs(2)


def test_sqlite_refuses_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(StoreError) as info:
        SqliteStore(path)
    assert str(path) in str(info.value)
    assert "not an SQLite database" in str(info.value)
    assert path.read_bytes().startswith(b"these are my notes")


def test_sqlite_refuses_a_database_it_did_not_create(tmp_path: Path) -> None:
    path = tmp_path / "other-app.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY)")
    raw.close()
    with pytest.raises(StoreError, match="did not create"):
        SqliteStore(path)


def test_sqlite_refuses_a_newer_schema(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    asyncio.run(SqliteStore(path).close())
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(StoreError, match="newer"):
        SqliteStore(path)


def test_sqlite_path_in_missing_directory(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "store.db"
    with pytest.raises(StoreError) as info:
        SqliteStore(path)
    assert str(path) in str(info.value)
    assert "does not exist" in str(info.value)


async def corrupt(path: Path, sql: str, *params: Any) -> None:
    with sqlite3.connect(path) as raw:
        assert raw.execute(sql, params).rowcount == 1
    raw.close()


@pytest.fixture
async def filled_path(tmp_path: Path) -> Path:
    path = tmp_path / "filled.db"
    async with SqliteStore(path) as store:
        await store.write(
            StoreWrite(
                "sess",
                state=STATE,
                slot_configs={"main": {"v": 1}, "aux": {"v": 2}},
                appends={"main": append(0, msgs(6))},
                data={"notes": [1], "plan": "x"},
            )
        )
    return path


async def test_corrupt_data_names_the_key(filled_path: Path) -> None:
    await corrupt(filled_path, "UPDATE session_data SET value = '{oops' WHERE key = 'notes'")
    async with SqliteStore(filled_path) as store:
        with pytest.raises(CorruptDataError) as info:
            await store.get_data("sess", "notes")
        assert "'notes'" in str(info.value)
        assert "'sess'" in str(info.value)
        assert await store.get_data("sess", "plan") == "x"
        assert await store.data_keys("sess") == ["notes", "plan"]


@pytest.mark.parametrize("body", ["{not json", '{"role": "robot"}', "[1, 2]", "42"])
async def test_corrupt_message_names_slot_and_index(filled_path: Path, body: str) -> None:
    await corrupt(
        filled_path, "UPDATE messages SET body = ? WHERE slot_id = 'main' AND idx = 3", body
    )
    async with SqliteStore(filled_path) as store:
        with pytest.raises(CorruptDataError) as info:
            await store.load_messages("sess", "main")
        assert "message 3 of slot 'main'" in str(info.value)
        assert await store.load_messages("sess", "main", start=4) == msgs(6)[4:]
        assert await store.count_messages("sess", "main") == 6


async def test_missing_message_row_is_reported(filled_path: Path) -> None:
    await corrupt(filled_path, "DELETE FROM messages WHERE slot_id = 'main' AND idx = 2")
    async with SqliteStore(filled_path) as store:
        with pytest.raises(CorruptDataError, match=r"message 2 of slot 'main'.*missing"):
            await store.load_messages("sess", "main")


@pytest.mark.parametrize("config", ["{oops", "[1]"])
async def test_corrupt_config_names_the_slot(filled_path: Path, config: str) -> None:
    await corrupt(filled_path, "UPDATE slots SET config = ? WHERE slot_id = 'aux'", config)
    async with SqliteStore(filled_path) as store:
        with pytest.raises(CorruptDataError, match="slot 'aux'"):
            await store.load_slot_configs("sess")


@pytest.mark.parametrize("state", ["{oops", '{"turn_index": "seven"}', "[]"])
async def test_corrupt_state_names_the_session(filled_path: Path, state: str) -> None:
    await corrupt(filled_path, "UPDATE sessions SET state = ? WHERE session_id = 'sess'", state)
    async with SqliteStore(filled_path) as store:
        with pytest.raises(CorruptDataError, match="session 'sess'"):
            await store.load_state("sess")


async def test_write_cost_does_not_depend_on_history_length(tmp_path: Path) -> None:
    """Appending to a long history runs the same statements and touches the same rows.

    The search index (FTS5) is written later, in a worker thread (see
    ``_sqlite_search``), so the writes are measured once it has caught up; they are
    measured in turns, short and long, and their costs compared in sum.
    """
    async with SqliteStore(tmp_path / "cost.db") as store:
        conn = store._conn
        # Give two sessions histories of 10 and 10,000 messages.
        for session_id, size in (("short", 10), ("long", 10_000)):
            await store.write(StoreWrite(session_id, appends={"main": append(0, msgs(size))}))
        await quiet(store, "long")  # the writes measured below index nothing

        async def measure(session_id: str, start: int) -> tuple[list[str], int, int]:
            statements: list[str] = []
            vm_steps = 0

            def step() -> int:
                nonlocal vm_steps
                vm_steps += 1
                return 0

            batch = StoreWrite(
                session_id,
                state=SessionState(turn_index=start),
                slot_configs={"main": {"kind": "window", "limit": 100}},
                appends={"main": append(start, msgs(2, "new"))},
            )
            changes_before = conn.total_changes
            conn.set_trace_callback(statements.append)
            conn.set_progress_handler(step, 1)
            try:
                await store.write(batch)
            finally:
                conn.set_trace_callback(None)
                conn.set_progress_handler(None, 1)
            own = own_statements(statements)
            return own, conn.total_changes - changes_before, vm_steps

        short_steps = long_steps = 0
        for turn in range(8):
            short_statements, short_rows, steps = await measure("short", 10 + 2 * turn)
            short_steps += steps
            long_statements, long_rows, steps = await measure("long", 10_000 + 2 * turn)
            long_steps += steps
            if turn == 0:  # the first write of each reads its heads from the file
                continue
            assert len(long_statements) == len(short_statements)
            assert not any("count(" in s.lower() for s in long_statements)
            assert long_rows == short_rows == 4  # state, slot config, two messages

    # SQLite virtual-machine steps: a scan of the 10,000 messages would add thousands a
    # write; a deeper b-tree costs a few steps.
    assert long_steps <= short_steps * 1.5 + 500, (short_steps, long_steps)


async def test_slot_heads_cost_does_not_depend_on_history_length(tmp_path: Path) -> None:
    """The version check a session makes before every model call stays one seek per slot."""
    async with SqliteStore(tmp_path / "heads.db") as store:
        conn = store._conn
        for session_id, size in (("short", 10), ("long", 10_000)):
            await store.write(
                StoreWrite(
                    session_id,
                    slot_configs={"main": {"v": 1}},
                    appends={"main": append(0, msgs(size))},
                )
            )
        await store.search_messages("long", "message")  # the index caught up: quiet from here

        async def measure(session_id: str) -> tuple[dict[str, SlotHead], int]:
            vm_steps = 0

            def step() -> int:
                nonlocal vm_steps
                vm_steps += 1
                return 0

            conn.set_progress_handler(step, 1)
            try:
                heads = await store.slot_heads(session_id)
            finally:
                conn.set_progress_handler(None, 1)
            return heads, vm_steps

        short_heads, short_steps = await measure("short")
        long_heads, long_steps = await measure("long")
    assert short_heads == {"main": SlotHead(1, 10)}
    assert long_heads == {"main": SlotHead(1, 10_000)}
    # A deeper b-tree may cost a step; a scan of the history would add thousands.
    assert long_steps <= short_steps + 4


# -- property: any split of appends reads back the same history ----------------

_example_ids = itertools.count()

b64 = st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode())
short_text = st.text(max_size=12)
ids = st.text(min_size=1, max_size=8)
urls = st.text(min_size=1, max_size=12).map(lambda s: "https://example.com/" + s)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | short_text,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(short_text, children, max_size=3)
    ),
    max_leaves=6,
)
tool_calls = st.builds(
    ToolUseBlock, id=ids, name=ids, arguments=st.dictionaries(short_text, json_values, max_size=3)
)
blocks: st.SearchStrategy[ContentBlock] = st.one_of(
    st.builds(TextBlock, short_text),
    tool_calls,
    st.builds(ImageBlock, media_type=st.sampled_from(["image/png", "image/webp"]), data=b64),
    st.builds(ImageBlock, url=urls),
    st.builds(AudioBlock, b64),
    st.builds(FileBlock, name=ids, data=st.none() | b64, url=st.none() | urls),
)
messages = st.one_of(
    st.builds(Message.system, short_text),
    st.builds(Message.user, short_text | st.lists(blocks, max_size=3)),
    st.builds(Message.assistant, short_text, st.lists(tool_calls, max_size=2)),
    st.builds(Message.tool_result, ids, short_text, is_error=st.booleans()),
    st.builds(Message.user_image, data=b64, text=short_text),
    st.builds(Message.user_image, url=urls, media_type=st.just("image/gif"), text=short_text),
)


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(history=st.lists(messages, max_size=12), data=st.data())
def test_appends_in_any_split_read_back_identical(
    store_engine: StoreEngine, history: list[Message], data: st.DataObject
) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(history)), max_size=4), label="cuts"))
    bounds = [0, *cuts, len(history)]
    # Examples share the engine's database: each writes a session of its own.
    session_id = f"s-{next(_example_ids)}"

    async def check() -> None:
        made = store_engine.open()
        try:
            for lo, hi in itertools.pairwise(bounds):
                await made.write(
                    StoreWrite(session_id, appends={"main": append(lo, history[lo:hi])})
                )
            assert await made.load_messages(session_id, "main") == history
            assert await made.count_messages(session_id, "main") == len(history)
            k = data.draw(st.integers(0, len(history)), label="start")
            assert await made.load_messages(session_id, "main", start=k) == history[k:]
        finally:
            await made.close()

    asyncio.run(check())


# -- the concurrency rule: slot versions and conditional writes ---------------


async def test_slot_heads_report_config_versions_and_counts(store: MemoryStore) -> None:
    assert await store.slot_heads("s") == {}
    await store.write(StoreWrite("s", slot_configs={"main": {"v": 1}}))
    assert await store.slot_heads("s") == {"main": SlotHead(version=1, count=0)}
    await store.write(StoreWrite("s", appends={"main": append(0, msgs(3))}))
    assert await store.slot_heads("s") == {"main": SlotHead(version=1, count=3)}
    await store.write(
        StoreWrite("s", slot_configs={"main": {"v": 2}, "other": {"v": 1}}, data={"k": 1})
    )
    assert await store.slot_heads("s") == {
        "main": SlotHead(version=2, count=3),
        "other": SlotHead(version=1, count=0),
    }
    await store.write(StoreWrite("s", data={"k": 2}, state=STATE))
    assert (await store.slot_heads("s"))["main"] == SlotHead(version=2, count=3)


async def test_expected_version_refuses_a_stale_config_write_whole(store: MemoryStore) -> None:
    await store.write(StoreWrite("s", slot_configs={"main": {"summary": "first"}}))
    # Two writers both computed a change from version 1; the first one wins.
    await store.write(
        StoreWrite("s", slot_configs={"main": {"summary": "A"}}, expected_versions={"main": 1})
    )
    before = await snapshot(store, "s")
    with pytest.raises(ConflictError, match="version 2, not the expected 1"):
        await store.write(
            StoreWrite(
                "s",
                state=STATE,
                slot_configs={"main": {"summary": "B"}},
                data={"summary": "B"},
                expected_versions={"main": 1},
            )
        )
    assert await snapshot(store, "s") == before
    assert (await store.load_slot_configs("s"))["main"] == {"summary": "A"}
    # A slot without a stored config is at version 0.
    await store.write(StoreWrite("s", slot_configs={"new": {}}, expected_versions={"new": 0}))
    with pytest.raises(ConflictError):
        await store.write(StoreWrite("s", slot_configs={"new": {}}, expected_versions={"new": 0}))


async def test_append_conflict_is_a_conflict_error(store: MemoryStore) -> None:
    await store.write(StoreWrite("s", appends={"main": append(0, msgs(2))}))
    with pytest.raises(ConflictError, match="starts at 1 but the slot holds 2"):
        await store.write(StoreWrite("s", appends={"main": append(1, msgs(1))}))
    # An empty append makes a write conditional on the count and adds nothing.
    with pytest.raises(ConflictError):
        await store.write(StoreWrite("s", state=STATE, appends={"main": append(1, [])}))
    assert await store.load_state("s") is None
    await store.write(StoreWrite("s", state=STATE, appends={"main": append(2, [])}))
    assert await store.load_state("s") == STATE
    assert await store.count_messages("s", "main") == 2


@pytest.mark.parametrize("version", [-1, "1", 1.0, True, None])
async def test_bad_expected_version_is_refused(store: MemoryStore, version: Any) -> None:
    with pytest.raises(StoreError, match="expected version"):
        await store.write(StoreWrite("s", expected_versions={"main": version}))
    assert await store.list_sessions() == []


# The layout agentcore 0.3.0 created (schema version 1), kept verbatim to test the migration.
_SCHEMA_V1 = (
    "CREATE TABLE sessions (session_id TEXT NOT NULL PRIMARY KEY, state TEXT) WITHOUT ROWID",
    "CREATE TABLE slots (session_id TEXT NOT NULL REFERENCES sessions (session_id), "
    "slot_id TEXT NOT NULL, config TEXT NOT NULL, PRIMARY KEY (session_id, slot_id)) "
    "WITHOUT ROWID",
    "CREATE TABLE messages (session_id TEXT NOT NULL REFERENCES sessions (session_id), "
    "slot_id TEXT NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL, "
    "PRIMARY KEY (session_id, slot_id, idx))",
    "CREATE TABLE session_data (session_id TEXT NOT NULL REFERENCES sessions (session_id), "
    "key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (session_id, key))",
    "PRAGMA user_version = 1",
)


async def test_sqlite_migrates_a_version_1_database(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    with sqlite3.connect(path) as raw:
        for statement in _SCHEMA_V1:
            raw.execute(statement)
        raw.execute(
            "INSERT INTO sessions VALUES ('s', ?)",
            ('{"turn_index":2,"current_slot":"main","cost":{}}',),
        )
        raw.execute("INSERT INTO slots VALUES ('s', 'main', '{\"mode\":\"full\",\"state\":{}}')")
        for index in range(4):
            raw.execute(
                "INSERT INTO messages VALUES ('s', 'main', ?, ?)",
                (index, f'{{"role":"user","content":[{{"text":"m{index}","type":"text"}}]}}'),
            )
        raw.execute("INSERT INTO session_data VALUES ('s', 'k', '[1,2]')")
    raw.close()
    async with SqliteStore(path) as store:
        assert await store.load_state("s") == SessionState(turn_index=2, current_slot="main")
        assert await store.load_messages("s", "main") == msgs(4)
        assert await store.get_data("s", "k") == [1, 2]
        assert await store.slot_heads("s") == {"main": SlotHead(version=1, count=4)}
        await store.write(
            StoreWrite(
                "s",
                slot_configs={"main": {"mode": "full", "state": {"x": 1}}},
                appends={"main": append(4, msgs(1, "new"))},
                expected_versions={"main": 1},
            )
        )
        assert await store.slot_heads("s") == {"main": SlotHead(version=2, count=5)}
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert raw.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    raw.close()
    # Opening a migrated database again changes nothing.
    async with SqliteStore(path) as again:
        assert await again.slot_heads("s") == {"main": SlotHead(version=2, count=5)}


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
async def test_sqlite_files_are_private_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "private.db"
    old = os.umask(0o002)
    try:
        async with SqliteStore(path) as store:
            await store.write(StoreWrite("s", appends={"main": append(0, msgs(1))}))
            files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
            modes = {file.name: stat.S_IMODE(file.stat().st_mode) for file in files}
    finally:
        os.umask(old)
    assert modes == {"private.db": 0o600, "private.db-wal": 0o600, "private.db-shm": 0o600}


# -- PostgresStore is optional ---------------------------------------------------


def test_agentcore_never_imports_psycopg_until_asked() -> None:
    code = (
        "import sys, agentcore, agentcore.stores\n"
        "assert 'PostgresStore' in dir(agentcore.stores)\n"
        "assert not [m for m in sys.modules if m.startswith('psycopg')], 'psycopg imported'\n"
        "sys.modules['psycopg'] = None  # as if the extra were not installed\n"
        "try:\n"
        "    agentcore.stores.PostgresStore\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert 'pip install "agentcore[postgres]==0.3.0"' in result.stdout
