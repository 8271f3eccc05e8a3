"""Idempotent writes: a write's ``turn_id`` is stored with it, and never stored twice.

The contract is tested on every engine; the migrations that add the turn ids keep old rows.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentcore.errors import ConflictError, DuplicateTurnError, StoreError
from agentcore.messages import Message
from agentcore.serialization import message_to_dict
from agentcore.stores import (
    MemoryStore,
    MessageAppend,
    SessionState,
    SqliteStore,
    StoredTurn,
    StoreWrite,
)

if TYPE_CHECKING:
    from conftest import StoreEngine


def msgs(n: int, prefix: str = "m") -> list[Message]:
    return [Message.user(f"{prefix}{i}") for i in range(n)]


def turn_write(start: int, turn_id: str, n: int = 2, session_id: str = "s") -> StoreWrite:
    return StoreWrite(
        session_id,
        state=SessionState(turn_index=start // 2 + 1),
        appends={"main": MessageAppend(start, msgs(n, f"t{start}-")), "aux": MessageAppend(0, [])},
        turn_id=turn_id,
    )


@pytest.fixture
async def store(store_engine: StoreEngine) -> AsyncIterator[MemoryStore]:
    s = store_engine.open()
    try:
        yield s
    finally:
        await s.close()


async def test_a_stored_turn_is_found_where_it_went(store: MemoryStore) -> None:
    assert await store.find_turn("s", "t1") is None
    await store.write(turn_write(0, "t1"))
    await store.write(turn_write(2, "t2", n=3))
    assert await store.find_turn("s", "t1") == StoredTurn("main", 0, 2, 1)
    assert await store.find_turn("s", "t2") == StoredTurn("main", 2, 5, 2)
    assert await store.find_turn("s", "t3") is None
    assert await store.find_turn("other", "t1") is None


async def test_a_turn_id_already_stored_is_refused_whole(store: MemoryStore) -> None:
    await store.write(turn_write(0, "t1"))
    before = await store.load_messages("s", "main")
    # A resubmission: the same turn again at the new end, with other data too.
    again = turn_write(2, "t1")
    again.data["k"] = 1
    with pytest.raises(DuplicateTurnError, match=r"turn 't1' of session 's' is stored") as info:
        await store.write(again)
    assert isinstance(info.value, ConflictError)
    assert info.value.turn == StoredTurn("main", 0, 2, 1)
    # The duplicate is reported before the append conflict the same write also has.
    with pytest.raises(DuplicateTurnError):
        await store.write(turn_write(0, "t1"))
    assert await store.load_messages("s", "main") == before
    assert await store.get_data("s", "k") is None
    assert await store.load_state("s") == SessionState(turn_index=1)


async def test_turn_ids_belong_to_their_session(store: MemoryStore) -> None:
    await store.write(turn_write(0, "t1", session_id="a"))
    await store.write(turn_write(0, "t1", session_id="b"))
    assert await store.find_turn("b", "t1") == StoredTurn("main", 0, 2, 1)


async def test_a_refused_write_stores_no_turn_id(store: MemoryStore) -> None:
    await store.write(turn_write(0, "t1"))
    with pytest.raises(ConflictError):
        await store.write(turn_write(0, "t2"))  # starts at 0, the slot holds 2
    assert await store.find_turn("s", "t2") is None
    await store.write(turn_write(2, "t2"))
    assert await store.find_turn("s", "t2") == StoredTurn("main", 2, 4, 2)


async def test_a_turn_without_messages_or_state(store: MemoryStore) -> None:
    await store.write(StoreWrite("s", data={"k": 1}, turn_id="summary-1"))
    assert await store.find_turn("s", "summary-1") == StoredTurn(None, 0, 0, None)
    with pytest.raises(DuplicateTurnError):
        await store.write(StoreWrite("s", data={"k": 2}, turn_id="summary-1"))
    assert await store.get_data("s", "k") == 1


@pytest.mark.parametrize("turn_id", ["", 7, "a\x00b", "\ud800"])
async def test_a_bad_turn_id_is_refused(store: MemoryStore, turn_id: Any) -> None:
    with pytest.raises(StoreError, match="turn id"):
        await store.write(StoreWrite("s", data={"k": 1}, turn_id=turn_id))
    assert await store.list_sessions() == []


async def test_a_turn_appends_to_one_slot(store: MemoryStore) -> None:
    batch = StoreWrite(
        "s",
        appends={"a": MessageAppend(0, msgs(1)), "b": MessageAppend(0, msgs(1))},
        turn_id="t1",
    )
    with pytest.raises(StoreError, match=r"2 slots \('a', 'b'\).*one slot"):
        await store.write(batch)
    assert await store.list_sessions() == []


async def test_deleting_a_session_forgets_its_turns(store: MemoryStore) -> None:
    await store.write(turn_write(0, "t1"))
    assert await store.delete_session("s")
    assert await store.find_turn("s", "t1") is None
    await store.write(turn_write(0, "t1"))
    assert await store.find_turn("s", "t1") == StoredTurn("main", 0, 2, 1)


async def test_turn_ids_persist_across_reopen(shared_store_engine: StoreEngine) -> None:
    first = shared_store_engine.open()
    try:
        await first.write(turn_write(0, "t1"))
    finally:
        await first.close()
    second = shared_store_engine.open()
    try:
        assert await second.find_turn("s", "t1") == StoredTurn("main", 0, 2, 1)
        with pytest.raises(DuplicateTurnError):
            await second.write(turn_write(2, "t1"))
    finally:
        await second.close()


# -- migrations keep old rows --------------------------------------------------------------


async def test_sqlite_migrates_a_version_2_database_keeping_its_rows(tmp_path: Path) -> None:
    from agentcore.stores import _sqlite_schema

    path = tmp_path / "v2.db"
    with sqlite3.connect(path) as raw:
        for step in _sqlite_schema.MIGRATIONS[:2]:
            for statement in step:
                raw.execute(statement)
        raw.execute("INSERT INTO schema_version VALUES (2)")
        raw.execute("PRAGMA user_version = 2")
        raw.execute("INSERT INTO sessions VALUES ('s', NULL)")
        raw.execute(
            "INSERT INTO messages VALUES ('s', 'main', 0, ?)",
            ('{"role":"user","content":[{"text":"m0","type":"text"}]}',),
        )
    raw.close()
    async with SqliteStore(path) as store:
        assert await store.load_messages("s", "main") == msgs(1)
        assert await store.find_turn("s", "t1") is None
        await store.write(
            StoreWrite("s", appends={"main": MessageAppend(1, msgs(1, "n"))}, turn_id="t1")
        )
        assert await store.find_turn("s", "t1") == StoredTurn("main", 1, 2, None)
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == _sqlite_schema.SCHEMA_VERSION
    raw.close()


async def test_postgres_migrates_a_version_1_schema_keeping_its_rows(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    psycopg = pytest.importorskip("psycopg")
    from agentcore.stores import PostgresStore, _pg_pool, _pg_schema, _pg_search

    full = (_pg_schema._MIGRATIONS, _pg_schema.SCHEMA_VERSION)
    monkeypatch.setattr(_pg_schema, "_MIGRATIONS", full[0][:1])
    monkeypatch.setattr(_pg_schema, "SCHEMA_VERSION", 1)
    monkeypatch.setattr(_pg_pool, "backfill", lambda conn, where: asyncio.sleep(0))
    async with PostgresStore(postgres_dsn) as old:
        await old.check_session("s")  # sets up the version 1 tables
    # The rows a version 1 release wrote (today's write fills columns version 1 lacks).
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as raw:
        await raw.execute("INSERT INTO agentcore_sessions VALUES ('s', NULL)")
        await raw.execute(
            "INSERT INTO agentcore_slots (session_id, slot_id, message_count) "
            "VALUES ('s', 'main', 2)"
        )
        for index, message in enumerate(msgs(2)):
            await raw.execute(
                "INSERT INTO agentcore_messages VALUES ('s', 'main', %s, %s)",
                (index, json.dumps(message_to_dict(message))),
            )
    monkeypatch.setattr(_pg_schema, "_MIGRATIONS", full[0])
    monkeypatch.setattr(_pg_schema, "SCHEMA_VERSION", full[1])
    monkeypatch.setattr(_pg_pool, "backfill", _pg_search.backfill)
    async with PostgresStore(postgres_dsn) as new:
        assert await new.load_messages("s", "main") == msgs(2)
        await new.write(turn_write(2, "t1"))
        assert await new.find_turn("s", "t1") == StoredTurn("main", 2, 4, 2)
