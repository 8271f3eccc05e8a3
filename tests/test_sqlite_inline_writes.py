"""SQLite writes tried on the calling thread: what commits there, and what falls back.

A short write that finds the database free commits where it is called, without a
worker thread. One that finds the lock taken (by another connection, or by another
call of the store) stores nothing there and goes to the worker thread, which waits:
it is stored once the lock is free. Refusals are the same on both paths.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcore import Agent, AgentBuilder, AgentSession
from agentcore.errors import ConflictError, DuplicateTurnError, StoreError
from agentcore.messages import Message
from agentcore.stores import (
    MessageAppend,
    SessionState,
    SlotHead,
    SqliteStore,
    StoreWrite,
    _sqlite_connection,
)
from agentcore.stores._sqlite_checkpoint import CHECKPOINT_PAGES
from agentcore.stores._sqlite_inline import INLINE_MAX_CHARS, INLINE_MAX_MESSAGES
from agentcore.testing import MockProvider


def msgs(n: int, prefix: str = "m") -> list[Message]:
    return [Message.user(f"{prefix}{i}") for i in range(n)]


class Hops:
    """Records each ``asyncio.to_thread`` call; :attr:`entered` is set at the first one."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.entered = asyncio.Event()


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> Iterator[Hops]:
    # The search index's catch-up (a worker thread every INDEX_EVERY messages) holds the
    # connection a moment, and a write that comes then goes to a worker thread: these
    # tests count the hops of writes alone, so the store never catches up on its own.
    monkeypatch.setattr(_sqlite_connection, "INDEX_EVERY", 1 << 62)
    record = Hops()
    to_thread = asyncio.to_thread

    async def counted(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        record.names.append(getattr(fn, "__name__", repr(fn)))
        record.entered.set()
        return await to_thread(fn, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    yield record


async def stored_texts(store: SqliteStore, session_id: str = "s") -> list[str]:
    return [m.text for m in await store.load_messages(session_id, "main")]


async def test_a_short_write_to_a_free_file_commits_without_a_worker_thread(
    tmp_path: Path, hops: Hops
) -> None:
    async with SqliteStore(tmp_path / "free.db") as store:
        await store.write(StoreWrite("s", appends={"main": MessageAppend(0, msgs(2))}))
        await store.write(
            StoreWrite(
                "s",
                state=SessionState(turn_index=1),
                slot_configs={"main": {"mode": "full"}},
                appends={"main": MessageAppend(2, msgs(2, "n"))},
                turn_id="t-1",
            )
        )
        assert hops.names == []
        assert await stored_texts(store) == ["m0", "m1", "n0", "n1"]
        assert (await store.slot_heads("s"))["main"] == SlotHead(1, 4)


async def test_a_stale_head_is_refused_on_the_calling_thread_and_stores_nothing(
    tmp_path: Path, hops: Hops
) -> None:
    async with SqliteStore(tmp_path / "stale.db") as store:
        await store.write(
            StoreWrite(
                "s",
                slot_configs={"main": {"mode": "full"}},
                appends={"main": MessageAppend(0, msgs(2))},
                turn_id="t-1",
            )
        )
        with pytest.raises(ConflictError, match="starts at 1 but the slot holds 2"):
            await store.write(StoreWrite("s", appends={"main": MessageAppend(1, msgs(1, "x"))}))
        with pytest.raises(ConflictError, match="config version 1, not the expected 0"):
            await store.write(
                StoreWrite(
                    "s",
                    state=SessionState(turn_index=9),
                    slot_configs={"main": {"mode": "full"}},
                    expected_versions={"main": 0},
                )
            )
        with pytest.raises(DuplicateTurnError):
            await store.write(
                StoreWrite("s", appends={"main": MessageAppend(0, msgs(1, "y"))}, turn_id="t-1")
            )
        assert hops.names == []
        assert await stored_texts(store) == ["m0", "m1"]
        assert await store.load_state("s") is None
        assert (await store.slot_heads("s"))["main"] == SlotHead(1, 2)


async def test_a_write_that_finds_another_connection_writing_waits_in_a_thread(
    tmp_path: Path, hops: Hops
) -> None:
    path = tmp_path / "locked.db"
    async with SqliteStore(path) as store:
        await store.write(
            StoreWrite(
                "s",
                slot_configs={"main": {"mode": "full"}},
                appends={"main": MessageAppend(0, msgs(1))},
            )
        )
        holder = sqlite3.connect(path, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")
            write = asyncio.ensure_future(
                store.write(StoreWrite("s", appends={"main": MessageAppend(1, msgs(1, "n"))}))
            )
            # The try on the calling thread found the lock taken and went to a thread.
            await hops.entered.wait()
            assert not write.done()
            # The event loop is free meanwhile: a write that fails fast still runs.
            with pytest.raises(StoreError, match="session id"):
                await store.write(StoreWrite("", appends={}))
            holder.execute("ROLLBACK")
            await write
        finally:
            holder.close()
        assert hops.names == ["_write"]
        assert await stored_texts(store) == ["m0", "n0"]
        # The next short write finds the file free again, and the head it left is current.
        hops.names.clear()
        await store.write(StoreWrite("s", appends={"main": MessageAppend(2, msgs(1, "z"))}))
        assert hops.names == []
        assert (await store.slot_heads("s"))["main"] == SlotHead(1, 3)


async def test_a_write_while_another_call_holds_the_connection_waits_in_a_thread(
    tmp_path: Path, hops: Hops
) -> None:
    async with SqliteStore(tmp_path / "busy.db") as store:
        store._lock.acquire()  # as a read of another session running in a worker thread
        try:
            write = asyncio.ensure_future(
                store.write(StoreWrite("s", appends={"main": MessageAppend(0, msgs(2))}))
            )
            await hops.entered.wait()
            assert not write.done()
        finally:
            store._lock.release()
        await write
        assert hops.names == ["_write"]
        assert await stored_texts(store) == ["m0", "m1"]


async def test_a_stale_head_found_after_waiting_is_still_a_conflict(
    tmp_path: Path, hops: Hops
) -> None:
    path = tmp_path / "race.db"
    async with SqliteStore(path) as store:
        await store.write(StoreWrite("s", appends={"main": MessageAppend(0, msgs(1))}))
        holder = sqlite3.connect(path, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")
            write = asyncio.ensure_future(
                store.write(StoreWrite("s", appends={"main": MessageAppend(1, msgs(1, "mine"))}))
            )
            await hops.entered.wait()
            # The other connection appends message 1 first.
            holder.execute(
                "INSERT INTO messages (session_id, slot_id, idx, body) VALUES (?, ?, ?, ?)",
                ("s", "main", 1, '{"role":"user","content":[{"type":"text","text":"theirs"}]}'),
            )
            holder.execute("COMMIT")
            with pytest.raises(ConflictError, match="starts at 1 but the slot holds 2"):
                await write
        finally:
            holder.close()
        assert await stored_texts(store) == ["m0", "theirs"]


@pytest.mark.parametrize("kind", ["many messages", "long text"])
async def test_a_long_write_is_committed_in_a_worker_thread(
    tmp_path: Path, hops: Hops, kind: str
) -> None:
    if kind == "many messages":
        messages = msgs(INLINE_MAX_MESSAGES + 1)
    else:
        messages = [Message.user("x" * (INLINE_MAX_CHARS + 1))]
    async with SqliteStore(tmp_path / "long.db") as store:
        await store.write(StoreWrite("s", appends={"main": MessageAppend(0, messages)}))
        assert hops.names == ["_write"]
        assert len(await stored_texts(store)) == len(messages)


async def test_a_write_to_a_closed_store_is_refused_on_the_calling_thread(
    tmp_path: Path, hops: Hops
) -> None:
    store = SqliteStore(tmp_path / "closed.db")
    await store.close()
    hops.names.clear()
    with pytest.raises(StoreError, match="store is closed"):
        await store.write(StoreWrite("s", appends={"main": MessageAppend(0, msgs(1))}))
    assert hops.names == []


async def test_a_turn_cancelled_while_its_write_waits_for_the_lock_is_stored_whole(
    tmp_path: Path, hops: Hops
) -> None:
    """The write that went to a worker thread completes, then the cancel reaches the caller."""
    path = tmp_path / "cancel.db"
    store = SqliteStore(path)
    builder = AgentBuilder().provider(MockProvider(responder=lambda r: "ok")).store(store)
    # Without the lease, whose take would wait for the held lock before the model call.
    bundle = builder.load_plugins(False).session_lease(False).build()
    session = AgentSession(Agent("a"), "s", bundle)
    await session.submit_turn("first")  # loads the session (in worker threads)
    hops.names.clear()
    hops.entered.clear()
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        turn = asyncio.ensure_future(session.submit_turn("second"))
        await hops.entered.wait()  # the turn's write waits in a worker thread
        turn.cancel()
        await asyncio.sleep(0)
        assert not turn.done()  # held until its write is done
        holder.execute("ROLLBACK")
        with pytest.raises(asyncio.CancelledError):
            await turn
    finally:
        holder.close()
    assert session.turn_index == 2
    assert [m.text for m in await session.history()] == ["first", "ok", "second", "ok"]
    fresh = AgentSession(Agent("a"), "s", bundle)
    assert [m.text for m in await fresh.history()] == ["first", "ok", "second", "ok"]
    await store.close()


async def test_the_wal_is_checkpointed_in_a_worker_thread_and_stays_bounded(
    tmp_path: Path, hops: Hops
) -> None:
    """Writes on the calling thread never checkpoint there; the store does it in a thread."""
    path = tmp_path / "wal.db"
    threads: dict[str, set[int]] = {"COMMIT": set(), "checkpoint": set()}

    def trace(statement: str) -> None:
        if statement == "COMMIT":
            threads["COMMIT"].add(threading.get_ident())
        elif "wal_checkpoint" in statement:
            threads["checkpoint"].add(threading.get_ident())

    async with SqliteStore(path) as store:
        store._conn.set_trace_callback(trace)
        for turn in range(3 * CHECKPOINT_PAGES):
            start = 2 * turn
            await store.write(
                StoreWrite(
                    "s",
                    state=SessionState(turn_index=turn + 1),
                    appends={"main": MessageAppend(start, msgs(2, f"t{turn}-"))},
                    turn_id=f"turn-{turn}",
                )
            )
        store._conn.set_trace_callback(None)
        assert threads["COMMIT"] == {threading.get_ident()}
        assert threads["checkpoint"] and threading.get_ident() not in threads["checkpoint"]
        assert set(hops.names) == {"_checkpoint"}
        # Without checkpoints the WAL would hold every page written: tens of MB here.
        assert Path(f"{path}-wal").stat().st_size < 2 * CHECKPOINT_PAGES * 4096
        assert len(await store.load_messages("s", "main")) == 6 * CHECKPOINT_PAGES
