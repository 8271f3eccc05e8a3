"""A store that keeps sessions in an SQLite database file.

:class:`SqliteStore` and its methods of the store contract live here; the machinery
under them is in private modules: ``_sqlite_open`` (opening the file, its schema),
``_sqlite_connection`` (the one connection, its lock and checkpoints),
``_sqlite_writes`` (committing a write, waiting for the lock) and ``_sqlite_write``
(the statements of a write).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any

from agentcore.errors import CorruptDataError
from agentcore.messages import Message
from agentcore.stores import _sqlite_write as sqlite_leases
from agentcore.stores._codec import (
    check_lease,
    check_session_id,
    check_start,
    check_stop,
    decode_config,
    decode_data,
    decode_message,
    decode_state,
    encode_batch,
)
from agentcore.stores._deadline import check_timeout
from agentcore.stores._sqlite_file import UndecodableText, first_undecodable, write_refusal
from agentcore.stores._sqlite_heads import data_version, read_heads
from agentcore.stores._sqlite_inline import INLINE_MAX_CHARS, encoded_chars, inline_candidate
from agentcore.stores._sqlite_schema import SCHEMA_VERSION
from agentcore.stores._sqlite_search import search as sqlite_search
from agentcore.stores._sqlite_write import LAST_INDEX, delete_session, rollback
from agentcore.stores._sqlite_write import find_turn as sqlite_find_turn
from agentcore.stores._sqlite_writes import SqliteWrites
from agentcore.stores.base import JsonValue, SessionState, SlotHead, StoredTurn, StoreWrite
from agentcore.stores.search import MessageHit, check_search

__all__ = ["SCHEMA_VERSION", "SqliteStore"]


class SqliteStore(SqliteWrites):
    """A :class:`~agentcore.stores.MemoryStore` backed by one SQLite database.

    ``path`` is a file path, or ``":memory:"`` for a private in-memory
    database. The file and its tables are created when missing; its directory
    must exist. Opening happens in the constructor (a short blocking call);
    the other methods go through one connection guarded by a lock, in a worker
    thread (:func:`asyncio.to_thread`), except a short :meth:`write` that finds
    the database free: it commits on the calling thread without waiting (see
    :meth:`write`).

    Each :meth:`write` is one transaction whose cost does not depend on how
    many messages a slot already holds: stored messages are never read or
    rewritten. The search index is not written there (see :meth:`search_messages`).
    Use the store as ``async with SqliteStore(path) as store:`` or call
    :meth:`close` when done.

    ``busy_timeout`` is how many seconds a call waits while another connection
    (another process) holds the database's write lock, for writes that carry
    no :attr:`~agentcore.stores.StoreWrite.timeout` (a write's own timeout
    replaces it). A write waits off the store's connection: it tries the lock
    for at most 0.2 s at a time, and other calls of the store (reads of any
    session) run in between. Past its wait it raises
    :class:`~agentcore.errors.StoreTimeoutError` having stored nothing.
    """

    _write_starts_in_caller = True
    """Up to its first wait (the worker thread's), :meth:`write` looks at no task-bound
    state: a session runs that step in its own task (``complete_despite_cancel(step_here=True)``),
    so a write that commits on the calling thread costs no task and no turn of the loop."""

    @property
    def path(self) -> str:
        """The database path the store was opened with."""
        return self._path

    # -- the MemoryStore protocol ------------------------------------------

    async def write(self, batch: StoreWrite) -> None:
        """Apply ``batch`` in one transaction, or raise :class:`StoreError` and change nothing.

        An append whose ``start`` is not the slot's message count, or an
        expected version that is not the slot's, is refused with
        :class:`~agentcore.errors.ConflictError`.

        A short write (a turn's) is tried first on the calling thread, with no
        wait at all: when neither another call of this store nor another
        connection holds the lock it needs, it commits there, at the cost of the
        transaction alone. Otherwise, or for a long write (over the limits of
        ``_sqlite_inline``), it goes to a worker thread, which waits for the lock
        as described in the class docstring. The try that finds the database
        locked has stored nothing; the try never awaits, so a cancel lands
        before it or after its commit.
        """
        encoded = encode_batch(batch, searchable=False) if inline_candidate(batch) else None
        chars = 0 if encoded is None else encoded_chars(encoded)
        if (
            encoded is None
            or chars > INLINE_MAX_CHARS
            or not await self._here(lambda conn: self._attempt(encoded, 0, chars) or None)
        ):
            await asyncio.to_thread(self._write, batch if encoded is None else encoded)
        self._index_if_due()

    async def find_turn(self, session_id: str, turn_id: str) -> StoredTurn | None:
        """Return where the write with ``turn_id`` stored its turn, or None.

        An SQLite write that fails has stored nothing (a failed commit rolls
        back), so SQLite never needs to read a turn back after an error.
        """
        return await asyncio.to_thread(
            self._call, lambda conn: sqlite_find_turn(conn, session_id, turn_id)
        )

    async def load_state(self, session_id: str) -> SessionState | None:
        """Return the saved state of ``session_id``, or None for a new session."""

        def load() -> SessionState | None:
            rows = self._fetchall("SELECT state FROM sessions WHERE session_id = ?", (session_id,))
            if not rows or rows[0][0] is None:
                return None
            return decode_state(rows[0][0], session_id)

        return await asyncio.to_thread(load)

    async def load_slot_configs(self, session_id: str) -> dict[str, Mapping[str, JsonValue]]:
        """Return every slot's saved config (JSON), by slot id."""

        def load() -> dict[str, Mapping[str, JsonValue]]:
            rows = self._fetchall(
                "SELECT slot_id, config FROM slots WHERE session_id = ? ORDER BY slot_id",
                (session_id,),
            )
            return {slot_id: decode_config(config, slot_id, session_id) for slot_id, config in rows}

        return await asyncio.to_thread(load)

    async def load_messages(
        self, session_id: str, slot_id: str, start: int = 0, stop: int | None = None
    ) -> list[Message]:
        """Return the raw history of a slot from ``start`` up to ``stop``, oldest first.

        A range read on the primary key (session, slot, index).
        """
        start = check_start(start)
        stop = check_stop(start, stop)
        # Both bounds on idx, so the read is a range scan of the primary key.
        end = (1 << 63) - 1 if stop is None else stop

        def fetch(conn: sqlite3.Connection) -> list[Any]:
            cursor = conn.execute(
                "SELECT idx, body FROM messages WHERE session_id = ? AND slot_id = ? "
                "AND idx >= ? AND idx < ? ORDER BY idx",
                (session_id, slot_id, start, end),
            )
            rows: list[Any] = []
            while True:
                try:
                    row = cursor.fetchone()
                except UndecodableText:
                    # Python 3.10's cursor decodes a row ahead of the one it returns:
                    # the damaged row is found by reading the rows one at a time.
                    damaged = first_undecodable(conn, session_id, slot_id, start, end)
                    raise CorruptDataError(
                        f"stored message {damaged} of slot {slot_id!r} in session "
                        f"{session_id!r} is not valid UTF-8: the file {self._path} is damaged "
                        "there (content not shown)"
                    ) from None
                if row is None:
                    return rows
                rows.append(row)

        def load() -> list[Message]:
            messages: list[Message] = []
            for expected, (index, body) in enumerate(self._call(fetch), start):
                if index != expected:
                    raise CorruptDataError(
                        f"stored message {expected} of slot {slot_id!r} in session "
                        f"{session_id!r} is missing"
                    )
                messages.append(decode_message(body, slot_id, index, session_id))
            return messages

        return await asyncio.to_thread(load)

    async def count_messages(self, session_id: str, slot_id: str) -> int:
        """Return how many raw messages a slot holds."""

        def count() -> int:
            last = self._fetchall(LAST_INDEX, (session_id, slot_id))[0][0]
            return 0 if last is None else int(last) + 1

        return await asyncio.to_thread(count)

    async def slot_heads(self, session_id: str) -> dict[str, SlotHead]:
        """Return the version and message count of every slot with a stored config.

        When no other connection has committed to the file since this store last wrote or
        read the session, the heads it kept then are the answer, found on the calling
        thread with one ``PRAGMA data_version`` (microseconds) instead of a worker thread's
        round trip; otherwise they are read afresh.
        """
        cached = self._cached_heads(session_id)
        if cached is not None:
            return cached
        return await asyncio.to_thread(self._call, lambda conn: self._read_heads(conn, session_id))

    def _cached_heads(self, session_id: str) -> dict[str, SlotHead] | None:
        """The kept heads of ``session_id`` if still current; None to read them in a thread.

        Never waits: with the connection busy in another thread, the thread read decides.
        """
        if not self._lock.acquire(blocking=False):
            return None
        try:
            if self._closed:
                return None  # the thread read raises "store is closed"
            return self._heads.lookup(self._conn, session_id)
        except sqlite3.Error:
            return None  # the thread read reports it, as every other call does
        finally:
            self._lock.release()

    def _read_heads(self, conn: sqlite3.Connection, session_id: str) -> dict[str, SlotHead]:
        # The data version first: a commit landing between the two makes the kept heads
        # look stale at the next lookup, never fresh.
        version = data_version(conn)
        heads = read_heads(conn, session_id)
        self._heads.store(version, session_id, heads)
        return heads

    async def get_data(self, session_id: str, key: str) -> JsonValue | None:
        """Return the session-data value under ``key`` (a fresh copy), or None."""

        def load() -> JsonValue | None:
            rows = self._fetchall(
                "SELECT value FROM session_data WHERE session_id = ? AND key = ?",
                (session_id, key),
            )
            return decode_data(rows[0][0], key, session_id) if rows else None

        return await asyncio.to_thread(load)

    async def search_messages(
        self,
        session_id: str,
        query: str,
        *,
        slot_id: str | None = None,
        before: int | None = None,
        limit: int = 5,
    ) -> list[MessageHit]:
        """The stored messages of ``session_id`` that best match ``query``, best first.

        See :meth:`~agentcore.stores.search.SearchableStore.search_messages`; an FTS5
        query of the file's ``message_search`` index, ranked by ``bm25()``. The index
        follows the writes: the messages not indexed yet (those written since the store
        last indexed, in a worker thread every 64 messages, or by another process) are
        indexed first, so the search sees every stored message.
        """
        terms = check_search(session_id, query, slot_id, before, limit)
        if not terms:
            return []

        def find(conn: sqlite3.Connection) -> list[tuple[str, int, str, float, int | None]]:
            self._catch_up(conn)  # the messages written since the index last caught up
            return sqlite_search(conn, session_id, terms, slot_id, before, limit)

        rows = await asyncio.to_thread(self._call, find)
        return [
            MessageHit(slot, index, decode_message(body, slot, index, session_id), score, turn)
            for slot, index, body, score, turn in rows
        ]

    async def data_keys(self, session_id: str) -> list[str]:
        """Return the session-data keys of ``session_id``, sorted."""
        rows = await asyncio.to_thread(
            self._fetchall,
            "SELECT key FROM session_data WHERE session_id = ? ORDER BY key",
            (session_id,),
        )
        return [key for (key,) in rows]

    async def list_sessions(self) -> list[str]:
        """Return every session id a write has named, sorted."""
        rows = await asyncio.to_thread(
            self._fetchall, "SELECT session_id FROM sessions ORDER BY session_id"
        )
        return [session_id for (session_id,) in rows]

    async def delete_session(self, session_id: str) -> bool:
        """Delete everything stored for ``session_id`` in one transaction.

        Returns whether the session was stored.
        """

        def delete(conn: sqlite3.Connection) -> bool:
            self._heads.forget(session_id)
            return delete_session(conn, session_id)

        return await asyncio.to_thread(self._call, delete)

    async def check_session(self, session_id: str, timeout: float | None = None) -> None:
        """Raise :class:`StoreError` for an id no store keeps, a read-only or locked file.

        Takes the write lock and writes one row in a transaction rolled back: microseconds
        when the file is free. Waits at most ``timeout`` seconds (``busy_timeout`` when None)
        for another connection's write lock, then raises
        :class:`~agentcore.errors.StoreTimeoutError` naming the file.
        """
        check_session_id(session_id)
        wait = check_timeout(timeout, "check_session timeout")
        await asyncio.to_thread(self._check_writable, self._busy_timeout if wait is None else wait)

    def _check_writable(self, wait: float) -> None:
        with self._lock:
            self._check_open()
            conn = self._conn
            try:
                self._set_busy_ms(conn, max(1, round(1000 * wait)))
                conn.execute("BEGIN IMMEDIATE")
                try:
                    conn.execute("UPDATE schema_version SET version = version")
                finally:
                    rollback(conn)
            except sqlite3.Error as exc:
                raise write_refusal(self._path, exc, wait) from exc

    async def acquire_lease(self, session_id: str, owner: str, seconds: float) -> bool:
        """Take or renew the lease of ``session_id`` for ``owner``; False if another holds it.

        The expiry is on this host's clock (``time.time()``); tried here first, as a write.
        """
        seconds = check_lease(session_id, owner, seconds)
        return await self._lease_call(
            lambda conn: sqlite_leases.acquire_lease(conn, session_id, owner, seconds)
        )

    async def release_lease(self, session_id: str, owner: str) -> bool:
        """Give back ``owner``'s lease of ``session_id``; return whether ``owner`` held it."""
        check_lease(session_id, owner)
        return await self._lease_call(
            lambda conn: sqlite_leases.release_lease(conn, session_id, owner)
        )

    async def _lease_call(self, statement: Callable[[sqlite3.Connection], bool]) -> bool:
        """Run a one-statement lease write here if nothing holds its locks, else in a thread."""

        def now(conn: sqlite3.Connection) -> bool | None:
            self._set_busy_ms(conn, 0)
            return sqlite_leases.unless_busy(conn, statement)

        result = await self._here(now)
        return await asyncio.to_thread(self._call, statement) if result is None else result

    async def close(self) -> None:
        """Close the connection; later calls raise :class:`StoreError`. Closing twice is fine."""
        await asyncio.to_thread(self._close)
