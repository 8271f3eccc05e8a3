"""Deadlines reach the database: a write with a ``timeout`` ends by it, having stored nothing.

The contract is tested on every engine; the lock waits on the engines that have locks held by
other connections (SQLite's write lock, PostgreSQL's row locks).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentcore.errors import ConfigError, StoreError, StoreTimeoutError
from agentcore.messages import Message
from agentcore.stores import MemoryStore, MessageAppend, SqliteStore, StoreWrite

if TYPE_CHECKING:
    from conftest import StoreEngine

# How long a write waits on a lock held elsewhere. Long enough that the work a test does
# meanwhile (reads and writes of other sessions) ends first even on a machine at load 10.
WAIT = 6.0
# Generous: the server ends the wait at the timeout; the rest is scheduling on a loaded machine.
SLACK = 10.0


def msgs(n: int, prefix: str = "m") -> list[Message]:
    return [Message.user(f"{prefix}{i}") for i in range(n)]


@pytest.fixture
async def store(store_engine: StoreEngine) -> AsyncIterator[MemoryStore]:
    s = store_engine.open()
    try:
        yield s
    finally:
        await s.close()


def test_store_timeout_error_is_a_store_error_and_a_timeout_error() -> None:
    assert issubclass(StoreTimeoutError, StoreError)
    assert issubclass(StoreTimeoutError, TimeoutError)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), "3", True])
async def test_a_bad_timeout_is_refused_whole(store: MemoryStore, timeout: Any) -> None:
    with pytest.raises(StoreError, match="timeout of the write"):
        await store.write(
            StoreWrite("s", appends={"main": MessageAppend(0, msgs(1))}, timeout=timeout)
        )
    assert await store.list_sessions() == []


async def test_a_write_within_its_timeout_is_stored(store: MemoryStore) -> None:
    await store.write(StoreWrite("s", appends={"main": MessageAppend(0, msgs(2))}, timeout=30))
    await store.write(StoreWrite("s", appends={"main": MessageAppend(2, msgs(1))}, timeout=10))
    assert await store.count_messages("s", "main") == 3


# -- SQLite: another connection holds the write lock --------------------------------------


def test_sqlite_busy_timeout_is_checked() -> None:
    for bad in (0, -1, None, float("inf"), "5"):
        with pytest.raises(ConfigError, match="busy_timeout"):
            SqliteStore(":memory:", busy_timeout=bad)  # type: ignore[arg-type]


async def test_sqlite_write_lock_held_elsewhere_ends_at_the_timeout(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    async with SqliteStore(path) as store:
        await store.write(StoreWrite("held", appends={"main": MessageAppend(0, msgs(2))}))
        await store.write(StoreWrite("other", appends={"main": MessageAppend(0, msgs(3))}))
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # held "for 15 s": released below, once measured
        try:
            started = time.monotonic()
            write = asyncio.ensure_future(
                store.write(
                    StoreWrite(
                        "held", appends={"main": MessageAppend(2, msgs(1, "n"))}, timeout=WAIT
                    )
                )
            )
            # Meanwhile the store still serves reads of other sessions.
            assert await asyncio.wait_for(store.count_messages("other", "main"), 10) == 3
            assert not write.done()
            with pytest.raises(StoreTimeoutError, match=r"within 6 s.*nothing was stored"):
                await write
            elapsed = time.monotonic() - started
            assert WAIT - 0.1 <= elapsed < WAIT + SLACK, elapsed
        finally:
            holder.rollback()
            holder.close()
        assert await store.count_messages("held", "main") == 2
        # After the lock is free, writes go through again.
        await store.write(
            StoreWrite("held", appends={"main": MessageAppend(2, msgs(1, "n"))}, timeout=3)
        )
        assert await store.count_messages("held", "main") == 3


async def test_sqlite_busy_timeout_bounds_writes_without_a_timeout(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    async with SqliteStore(path, busy_timeout=1) as store:
        await store.write(StoreWrite("s", data={"k": 1}))
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreTimeoutError, match=r"within 1 s \(busy_timeout\)"):
                await store.write(StoreWrite("s", data={"k": 2}))
        finally:
            holder.rollback()
            holder.close()
        assert await store.get_data("s", "k") == 1


# -- PostgreSQL: another connection holds session rows locked -----------------------------


def test_postgres_timeout_settings_are_checked() -> None:
    pytest.importorskip("psycopg")
    from agentcore.stores import PostgresStore

    for name in ("lock_timeout", "statement_timeout"):
        bad: Any
        for bad in (0, -2, float("inf"), "1", True):
            with pytest.raises(ConfigError, match=name):
                PostgresStore("postgresql://localhost/db", **{name: bad})


async def test_postgres_row_lock_ends_at_the_timeout_and_leaves_the_pool_free(
    postgres_dsn: str,
) -> None:
    """Four writes wait on rows held until they time out, in a pool of 4; six others still write."""
    import psycopg

    from agentcore.stores import PostgresStore

    held = [f"held{i}" for i in range(4)]
    others = [f"other{i}" for i in range(6)]
    async with PostgresStore(postgres_dsn, max_size=4) as store:
        for session_id in held + others:
            await store.write(StoreWrite(session_id, appends={"main": MessageAppend(0, msgs(1))}))
        holder = await psycopg.AsyncConnection.connect(postgres_dsn)
        try:
            await holder.execute(
                "SELECT 1 FROM agentcore_sessions WHERE session_id = ANY(%s) FOR UPDATE", (held,)
            )  # held "for 15 s": rolled back below, once measured

            async def timed(session_id: str, timeout: float) -> tuple[float, BaseException | None]:
                """How long the write took, and the error it ended with; its end time is kept."""
                started = time.monotonic()
                try:
                    await store.write(
                        StoreWrite(
                            session_id,
                            appends={"main": MessageAppend(1, msgs(1, "n"))},
                            timeout=timeout,
                        )
                    )
                except StoreError as exc:
                    return time.monotonic() - started, exc
                finally:
                    ended_at[session_id] = time.monotonic()
                return time.monotonic() - started, None

            ended_at: dict[str, float] = {}
            waits = [asyncio.ensure_future(timed(s, WAIT)) for s in held]
            await asyncio.sleep(0.3)  # the waits have the pool first
            served = await asyncio.gather(*(timed(s, 30) for s in others))
            assert [exc for _, exc in served] == [None] * 6
            ended = await asyncio.gather(*waits)
        finally:
            await holder.rollback()
            await holder.close()
        # The other sessions were served while the four waits went on: each of them was
        # stored before the first wait ended (a pool taken by the waits would have served
        # them only after).
        last_served = max(ended_at[s] for s in others)
        first_wait_end = min(ended_at[s] for s in held)
        assert last_served < first_wait_end, (last_served, first_wait_end)
        for elapsed, exc in ended:
            assert isinstance(exc, StoreTimeoutError), exc
            assert "stayed locked" in str(exc) and "nothing was stored" in str(exc)
            assert WAIT - 0.1 <= elapsed < WAIT + SLACK, elapsed
        print(f"\nlock waits ended after {', '.join(f'{e:.2f} s' for e, _ in ended)}")
        for session_id in held:
            assert await store.count_messages(session_id, "main") == 1
        # And after: every session writes, through the same pool of 4.
        for session_id in held + others:
            count = await store.count_messages(session_id, "main")
            await store.write(
                StoreWrite(session_id, appends={"main": MessageAppend(count, msgs(1, "a"))})
            )
            assert await store.count_messages(session_id, "main") == count + 1


async def test_postgres_statement_timeout_and_lock_timeout_settings(postgres_dsn: str) -> None:
    import psycopg

    from agentcore.stores import PostgresStore

    async with PostgresStore(postgres_dsn, lock_timeout=1) as store:
        await store.write(StoreWrite("s", data={"k": 1}))
        holder = await psycopg.AsyncConnection.connect(postgres_dsn)
        try:
            await holder.execute(
                "SELECT 1 FROM agentcore_sessions WHERE session_id = 's' FOR UPDATE"
            )
            with pytest.raises(StoreTimeoutError, match=r"1 s \(lock_timeout\)"):
                await store.write(StoreWrite("s", data={"k": 2}))
            # A write's own timeout caps the store's setting, never the other way round.
            with pytest.raises(StoreTimeoutError, match=r"1 s \(lock_timeout\)"):
                await store.write(StoreWrite("s", data={"k": 2}, timeout=30))
        finally:
            await holder.rollback()
            await holder.close()
        assert await store.get_data("s", "k") == 1
    async with PostgresStore(postgres_dsn, statement_timeout=0.5) as store:
        # A statement that runs too long: the session row's trigger sleeps.
        async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
            await admin.execute(
                "CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$"
            )
            await admin.execute(
                "CREATE TRIGGER slow BEFORE INSERT ON agentcore_session_data "
                "FOR EACH ROW EXECUTE FUNCTION slow()"
            )
        started = time.monotonic()
        with pytest.raises(StoreTimeoutError, match="statement_timeout"):
            await store.write(StoreWrite("s", data={"k2": 2}))
        assert time.monotonic() - started < 0.5 + SLACK
        assert await store.data_keys("s") == ["k"]


async def test_a_lock_wait_whose_deadline_comes_while_waiting_for_the_pool_says_it_stayed_locked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The lock is why the write timed out, even when its last try was waiting for a connection."""
    pytest.importorskip("psycopg")
    from psycopg_pool import PoolTimeout

    from agentcore.errors import StoreTimeoutError
    from agentcore.stores import PostgresStore
    from agentcore.stores._pg_pool import LockBusy

    store = PostgresStore("postgresql://localhost/db", lock_timeout=30)
    tries: list[str] = []

    async def write_once(encoded: Any, deadline: Any, lock_wait: Any) -> None:
        tries.append("try")
        if len(tries) == 1:
            raise LockBusy("canceling statement due to lock timeout")
        try:
            raise PoolTimeout("pool exhausted")
        except PoolTimeout as exc:
            raise StoreTimeoutError(
                "no pooled connection free before the write's deadline"
            ) from exc

    monkeypatch.setattr(store, "_write_once", write_once)
    with pytest.raises(StoreTimeoutError, match="stayed locked") as caught:
        await store.write(StoreWrite("s", appends={"main": MessageAppend(0, msgs(1))}, timeout=5))
    assert "nothing was stored" in str(caught.value) and tries == ["try", "try"]
    # A pool timeout with no lock wait before it is the pool's own error.
    tries.clear()
    tries.append("a try that found no lock")
    with pytest.raises(StoreTimeoutError, match="no pooled connection"):
        await store.write(StoreWrite("s", appends={"main": MessageAppend(0, msgs(1))}, timeout=5))


async def test_a_lock_wait_whose_last_try_is_cancelled_at_the_deadline_says_it_stayed_locked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A loaded server can end the last try's statement at the deadline before its lock wait.

    The session was found locked; the write's own deadline then ran out: it stayed locked.
    A statement cancelled before the deadline (a store-level ``statement_timeout``) is not.
    """
    psycopg = pytest.importorskip("psycopg")

    from agentcore.errors import StoreTimeoutError
    from agentcore.stores import PostgresStore
    from agentcore.stores._pg_pool import LockBusy

    store = PostgresStore("postgresql://localhost/db")
    tries: list[str] = []
    sleep_past_deadline = True

    async def write_once(encoded: Any, deadline: Any, lock_wait: Any) -> None:
        tries.append("try")
        if len(tries) == 1:
            raise LockBusy("canceling statement due to lock timeout")
        if sleep_past_deadline:
            await asyncio.sleep(deadline.remaining() + 0.05)
        try:
            raise psycopg.errors.QueryCanceled("canceling statement due to statement timeout")
        except psycopg.errors.QueryCanceled as exc:
            raise StoreTimeoutError("a statement was cancelled") from exc

    monkeypatch.setattr(store, "_write_once", write_once)
    write = StoreWrite("s", appends={"main": MessageAppend(0, msgs(1))}, timeout=0.5)
    with pytest.raises(StoreTimeoutError, match="stayed locked") as caught:
        await store.write(write)
    assert "nothing was stored" in str(caught.value) and tries == ["try", "try"]
    # Cancelled with time left: the statement's own limit, named as such.
    tries.clear()
    sleep_past_deadline = False
    with pytest.raises(StoreTimeoutError, match="a statement was cancelled"):
        await store.write(write)
    assert tries == ["try", "try"]
