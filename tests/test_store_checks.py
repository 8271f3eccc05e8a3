"""Fail before paying: ``check_session`` finds what would make a later write fail.

The id rules are tested on every engine; read-only and locked files on SQLite.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentcore.errors import StoreError, StoreTimeoutError
from agentcore.messages import Message
from agentcore.stores import MAX_ID_BYTES, MemoryStore, MessageAppend, SqliteStore, StoreWrite

if TYPE_CHECKING:
    from conftest import StoreEngine


@pytest.fixture
async def store(store_engine: StoreEngine) -> AsyncIterator[MemoryStore]:
    s = store_engine.open()
    try:
        yield s
    finally:
        await s.close()


async def test_a_good_session_passes(store: MemoryStore) -> None:
    await store.check_session("s")
    await store.check_session("é" * (MAX_ID_BYTES // 2), timeout=5)
    assert await store.list_sessions() == []  # the check stores nothing


@pytest.mark.parametrize(
    ("session_id", "names"),
    [
        ("x" * 1_000_000, "1000000 bytes in UTF-8, over the 512 bytes"),
        ("x" * (MAX_ID_BYTES + 1), "513 bytes"),
        ("é" * (MAX_ID_BYTES // 2 + 1), "514 bytes"),
        ("", "non-empty"),
        ("a\x00b", "NUL"),
        ("\ud800", "not valid Unicode"),
    ],
)
async def test_an_id_no_engine_keeps_is_refused_before_any_write(
    store: MemoryStore, session_id: str, names: str
) -> None:
    with pytest.raises(StoreError, match=names) as info:
        await store.check_session(session_id)
    assert len(str(info.value)) < 500  # the id itself is not echoed whole
    # A write of it is refused the same way, before anything is stored.
    messages = [Message.user("x")]
    with pytest.raises(StoreError, match=names):
        await store.write(StoreWrite(session_id, appends={"main": MessageAppend(0, messages)}))
    assert await store.list_sessions() == []


async def test_a_closed_store_fails_the_check(store_engine: StoreEngine) -> None:
    store = store_engine.open()
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.check_session("s")


# -- SQLite files that cannot be written ------------------------------------------------------


async def test_sqlite_read_only_file_is_found_by_the_check(tmp_path: Path, read_only: Any) -> None:
    path = tmp_path / "store.db"
    async with SqliteStore(path) as store:
        await store.write(StoreWrite("s", data={"k": 1}))
    read_only(path)
    async with SqliteStore(path) as store:
        with pytest.raises(StoreError, match=rf"{path} is read-only.*make the file"):
            await store.check_session("s")
        assert await store.get_data("s", "k") == 1  # reads still work


async def test_sqlite_locked_file_is_found_by_the_check(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    async with SqliteStore(path) as store:
        await store.check_session("s")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreTimeoutError, match=rf"{path} is locked.*for 1 s"):
                await store.check_session("s", timeout=1)
        finally:
            holder.rollback()
            holder.close()
        await store.check_session("s", timeout=1)
        assert await store.list_sessions() == []


@pytest.mark.direct_postgres(
    "it sets default_transaction_read_only in the options parameter, which PgBouncer refuses"
)
async def test_postgres_read_only_server_is_found_by_the_check(postgres_dsn: str) -> None:
    pytest.importorskip("psycopg")
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from agentcore.stores import PostgresStore

    async with PostgresStore(postgres_dsn) as store:
        await store.check_session("s")  # creates the tables
    options = conninfo_to_dict(postgres_dsn).get("options", "")
    standby_like = make_conninfo(
        postgres_dsn, options=f"{options} -c default_transaction_read_only=on"
    )
    async with PostgresStore(standby_like) as store:
        with pytest.raises(StoreError, match=r"is read-only \(transaction_read_only is on"):
            await store.check_session("s")
