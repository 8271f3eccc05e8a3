"""SQLite's search index follows the writes: a search sees every stored message, always."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlite_quiet import caught_up

from agentcore import Message
from agentcore.stores import SqliteStore, _sqlite_connection, _sqlite_schema
from agentcore.stores._search_text import keyed_document, search_document
from agentcore.stores.base import MessageAppend, StoreWrite


async def write(store: SqliteStore, session_id: str, texts: list[str], start: int = 0) -> None:
    messages = [Message.user(text) for text in texts]
    await store.write(StoreWrite(session_id, appends={"main": MessageAppend(start, messages)}))


def raw_rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    raw = sqlite3.connect(path)
    try:
        return raw.execute(sql).fetchall()
    finally:
        raw.close()


async def found(store: SqliteStore, session_id: str, query: str) -> list[int]:
    return [hit.index for hit in await store.search_messages(session_id, query, limit=50)]


async def test_a_search_finds_the_message_written_just_before(tmp_path: Path) -> None:
    async with SqliteStore(tmp_path / "s.db") as store:
        for turn in range(5):  # far fewer than the store indexes on its own
            await write(store, "s", [f"turn {turn} chose codename{turn}"], start=turn)
            assert await found(store, "s", f"codename{turn}") == [turn]


async def test_the_store_indexes_what_it_wrote_without_a_search(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    count = _sqlite_connection.INDEX_EVERY + 6
    async with SqliteStore(path) as store:
        for n in range(0, count, 2):
            await write(store, "s", [f"note {n} word{n}", f"note {n + 1} word{n + 1}"], start=n)
        await caught_up(store)
        indexed = raw_rows(path, "SELECT count(*) FROM message_search")[0][0]
        assert isinstance(indexed, int)
        assert indexed >= _sqlite_connection.INDEX_EVERY  # done before any search
        assert await found(store, "s", f"word{count - 1}") == [count - 1]
    assert raw_rows(path, "SELECT count(*) FROM message_search") == [(count,)]


async def test_another_process_finds_what_this_one_wrote(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteStore(path) as writer, SqliteStore(path) as reader:
        await write(writer, "s", ["the ledger service listens on port 8443"])
        assert await found(reader, "s", "ledger port") == [0]
        await write(reader, "s", ["the ledger moved to port 9443"], start=1)
        assert await found(writer, "s", "9443") == [1]


async def test_messages_written_after_a_deletion_are_found_and_the_deleted_are_not(
    tmp_path: Path,
) -> None:
    # The deleted session held the highest rowids: the next messages take them again.
    path = tmp_path / "s.db"
    async with SqliteStore(path) as store:
        await write(store, "kept", ["the kept session mentions apricot"])
        await write(store, "gone", [f"gone message {n} mentions banana" for n in range(10)])
        assert len(await found(store, "gone", "banana")) == 10
        assert await store.delete_session("gone")
        await write(store, "new", [f"new message {n} mentions cherry" for n in range(10)])
        assert await found(store, "new", "cherry") == list(range(9, -1, -1))
        assert await found(store, "new", "banana") == []
        assert await found(store, "gone", "banana") == []
        assert await found(store, "kept", "apricot") == [0]
    assert raw_rows(path, "SELECT count(*) FROM message_search") == [(11,)]


async def test_a_damaged_message_does_not_keep_the_others_from_being_found(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "s.db"
    async with SqliteStore(path) as store:
        await write(store, "s", ["first note about walnut"])
    raw = sqlite3.connect(path)
    raw.execute("INSERT INTO messages VALUES ('s', 'main', 1, CAST(x'7b22ff' AS TEXT))")
    raw.commit()
    raw.close()
    with caplog.at_level(logging.WARNING, logger="agentcore.stores.sqlite"):
        async with SqliteStore(path) as store:
            await write(store, "s", ["third note about walnut"], start=2)
            assert await found(store, "s", "walnut") == [2, 0]
    assert "message 1 of slot 'main' of session 's' not indexed for search" in caplog.text


def _version_5_file(path: Path, texts: list[str], backfilled: int, written_after: int) -> None:
    """A file of schema version 5: its first ``backfilled`` messages indexed by its
    backfill, the next ones not yet, and the last ``written_after`` indexed by their
    writes (version 5 indexed in each write)."""
    raw = sqlite3.connect(path)
    for step in _sqlite_schema.MIGRATIONS[:5]:
        for statement in step:
            raw.execute(statement)
    raw.execute("INSERT INTO schema_version VALUES (5)")
    raw.execute("PRAGMA user_version = 5")
    raw.execute("INSERT INTO sessions VALUES ('s', NULL)")
    for index, text in enumerate(texts):
        body = json.dumps({"role": "user", "content": [{"text": text, "type": "text"}]})
        raw.execute("INSERT INTO messages VALUES ('s', 'main', ?, ?)", (index, body))
        if index < backfilled or index >= len(texts) - written_after:
            document = keyed_document(search_document(Message.user(text)), "s")
            raw.execute(
                "INSERT INTO message_search (rowid, doc) VALUES (?, ?)", (index + 1, document)
            )
    raw.execute(
        "INSERT INTO search_backfill (done, until) VALUES (?, ?)",
        (backfilled, len(texts) - written_after),
    )
    raw.commit()
    raw.close()


async def test_a_version_5_file_halfway_through_its_backfill_is_indexed_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v5.db"
    _version_5_file(path, [f"entry {n} holds token{n}" for n in range(30)], 10, 5)
    async with SqliteStore(path) as store:
        for n in (0, 9, 10, 24, 25, 29):
            assert await found(store, "s", f"token{n}") == [n]
    assert raw_rows(path, "SELECT count(*) FROM message_search") == [(30,)]
    assert raw_rows(path, "SELECT indexed FROM search_mark") == [(30,)]
    tables = {name for (name,) in raw_rows(path, "SELECT name FROM sqlite_master")}
    assert "search_backfill" not in tables


async def test_closing_while_the_index_catches_up_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    count = 3 * _sqlite_connection.INDEX_EVERY
    store = SqliteStore(path)
    await write(store, "s", [f"line {n} says plum{n}" for n in range(count)])
    await store.close()  # the catch-up it started, if still running, finishes or stops cleanly
    async with SqliteStore(path) as reopened:
        assert await found(reopened, "s", f"plum{count - 1}") == [count - 1]
        assert await found(reopened, "s", "plum0") == [0]
    assert raw_rows(path, "SELECT count(*) FROM message_search") == [(count,)]


async def test_a_closed_store_leaves_what_it_wrote_indexed(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SqliteStore(path) as store:
        await write(store, "s", ["one note about fig", "another about fig"])
    assert raw_rows(path, "SELECT count(*) FROM message_search") == [(2,)]
    assert raw_rows(path, "SELECT indexed FROM search_mark") == [(2,)]


async def test_a_read_only_file_is_searched_as_far_as_it_is_indexed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, read_only: Callable[[Path], None]
) -> None:
    # A process that stopped without closing its store left its last messages unindexed.
    path = tmp_path / "s.db"
    async with SqliteStore(path) as store:
        await write(store, "s", ["an indexed note about lime"])
    raw = sqlite3.connect(path)
    body = json.dumps({"role": "user", "content": [{"text": "unindexed lime", "type": "text"}]})
    raw.execute("INSERT INTO messages VALUES ('s', 'main', 1, ?)", (body,))
    raw.commit()
    raw.close()
    read_only(path)
    with caplog.at_level(logging.WARNING, logger="agentcore.stores.sqlite"):
        async with SqliteStore(path) as store:
            assert await found(store, "s", "lime") == [0]
            assert len(await store.load_messages("s", "main")) == 2
    assert "is read-only: the messages stored since it was last indexed" in caplog.text


async def test_a_long_backlog_is_indexed_a_batch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcore.stores import _sqlite_search

    monkeypatch.setattr(_sqlite_search, "CATCH_UP_BATCH", 10)
    monkeypatch.setattr(_sqlite_connection, "CATCH_UP_BATCH", 10)
    transactions: list[str] = []
    path = tmp_path / "s.db"
    async with SqliteStore(path) as store:
        store._conn.set_trace_callback(
            lambda sql: transactions.append(sql) if sql.startswith("UPDATE search_mark") else None
        )
        await write(store, "s", [f"row {n} holds pear{n}" for n in range(95)])
        await caught_up(store)
        assert raw_rows(path, "SELECT indexed FROM search_mark") == [(95,)]
        assert len(transactions) == 10  # nine batches of ten, then the last five
        assert await found(store, "s", "pear94") == [94]


async def test_a_failed_catch_up_is_logged_and_the_search_still_finds_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from agentcore.stores._sqlite_search import catch_up as real

    failures = 0

    def failing(conn: sqlite3.Connection, path: str, **bounds: int | None) -> int:
        nonlocal failures
        failures += 1
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(_sqlite_connection, "catch_up", failing)
    count = 3 * _sqlite_connection.INDEX_EVERY
    with caplog.at_level(logging.WARNING, logger="agentcore.stores.sqlite"):
        async with SqliteStore(tmp_path / "s.db") as store:
            for n in range(0, count, 2):
                await write(store, "s", [f"a {n} says kiwi{n}", f"b {n + 1} says kiwi{n + 1}"], n)
            await caught_up(store)
            # Tried again after as many writes, not on every write that follows a failure.
            assert 1 <= failures <= 3
            monkeypatch.setattr(_sqlite_connection, "catch_up", real)
            assert await found(store, "s", f"kiwi{count - 1}") == [count - 1]
    assert "indexing for search failed, a search tries again: disk I/O error" in caplog.text


async def test_another_connection_writes_while_the_index_reads_what_it_will_add(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Making a message's document is most of what indexing costs; a turn's write of
    # another connection (here one that waits for no lock at all) goes in meanwhile.
    from agentcore.stores import _sqlite_search

    path = tmp_path / "s.db"
    written: list[str] = []

    def writing_meanwhile(message: Message) -> str:
        if not written:
            other = sqlite3.connect(path, timeout=0, isolation_level=None)
            try:
                other.execute("BEGIN IMMEDIATE")
                other.execute(
                    "INSERT INTO session_data (session_id, key, value) VALUES ('t', 'k', 'v')"
                )
                other.execute("COMMIT")
                written.append("committed")
            finally:
                other.close()
        return search_document(message)

    async with SqliteStore(path) as store:
        await write(store, "s", [f"entry {n} names plum{n}" for n in range(5)])
        monkeypatch.setattr(_sqlite_search, "search_document", writing_meanwhile)
        assert await found(store, "s", "plum3") == [3]
    assert written == ["committed"]
    assert raw_rows(path, "SELECT value FROM session_data WHERE session_id = 't'") == [("v",)]


async def test_a_batch_another_connection_indexed_meanwhile_is_indexed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcore.stores import _sqlite_search

    path = tmp_path / "s.db"
    nested: list[int] = []

    def indexing_meanwhile(message: Message) -> str:
        if not nested:
            nested.append(0)
            other = sqlite3.connect(path, isolation_level=None)
            try:
                nested[0] = _sqlite_search.catch_up(other, str(path))
            finally:
                other.close()
        return search_document(message)

    async with SqliteStore(path) as store:
        await write(store, "s", [f"entry {n} names fig{n}" for n in range(7)])
        monkeypatch.setattr(_sqlite_search, "search_document", indexing_meanwhile)
        assert await found(store, "s", "fig6") == [6]
        await write(store, "s", ["entry 7 names fig7"], start=7)
        assert await found(store, "s", "fig7") == [7]
    assert nested == [7]  # the other connection indexed the batch this one was reading
    assert raw_rows(path, "SELECT count(*), max(rowid) FROM message_search") == [(8, 8)]
    assert raw_rows(path, "SELECT indexed FROM search_mark") == [(8,)]
