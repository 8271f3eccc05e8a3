"""A store that keeps sessions in an SQLite database file."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from agentcore.errors import ConfigError, CorruptDataError, StoreError, StoreTimeoutError
from agentcore.messages import Message
from agentcore.stores import _sqlite_write as sqlite_leases
from agentcore.stores._codec import (
    EncodedWrite,
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
from agentcore.stores._deadline import LOCK_TRY_SECONDS, Deadline, check_timeout, pauses
from agentcore.stores._sqlite_checkpoint import WalPages
from agentcore.stores._sqlite_file import (
    UndecodableText,
    create_private,
    first_undecodable,
    is_busy,
    is_not_a_database,
    strict_text,
    why_failed,
    write_refusal,
)
from agentcore.stores._sqlite_heads import HeadCache, data_version, read_heads
from agentcore.stores._sqlite_inline import INLINE_MAX_CHARS, encoded_chars, inline_candidate
from agentcore.stores._sqlite_schema import MIGRATIONS, SCHEMA_VERSION
from agentcore.stores._sqlite_write import (
    LAST_INDEX,
    apply_write,
    delete_session,
    rollback,
)
from agentcore.stores._sqlite_write import find_turn as sqlite_find_turn
from agentcore.stores.base import (
    BaseStore,
    JsonValue,
    SessionState,
    SlotHead,
    StoredTurn,
    StoreWrite,
)

__all__ = ["SCHEMA_VERSION", "SqliteStore"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_MEMORY = ":memory:"


class SqliteStore(BaseStore):
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
    rewritten. Use the store as ``async with SqliteStore(path) as store:`` or
    call :meth:`close` when done.

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

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 5.0) -> None:
        try:
            timeout = check_timeout(busy_timeout, "SqliteStore busy_timeout")
        except StoreError as exc:
            raise ConfigError(str(exc)) from None
        if timeout is None:
            raise ConfigError("SqliteStore busy_timeout must be a finite number of seconds > 0")
        self._busy_timeout = timeout
        self._path = os.fspath(path)
        self._lock = threading.Lock()
        self._heads = HeadCache()  # used under self._lock, like the connection
        # The connection's busy_timeout in ms, as last set (under self._lock): set again only
        # when a call needs another one, so a turn's write runs no PRAGMA for it.
        self._busy_ms = round(1000 * timeout)
        # The WAL's checkpoints, run in worker threads (a file's database; None in memory).
        self._wal: WalPages | None = None
        # The one connection, used only under self._lock. Tests read this
        # attribute (e.g. set_trace_callback to count statements); keep its name.
        self._conn: sqlite3.Connection = self._open()

    @property
    def path(self) -> str:
        """The database path the store was opened with."""
        return self._path

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return f"<SqliteStore {self._path!r}{state}>"

    # -- opening -----------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        path = self._path
        if path != _MEMORY and path:
            directory = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(directory):
                raise StoreError(
                    f"cannot open SQLite store {path}: directory {directory} does not exist; "
                    "create it first"
                )
            create_private(path)
        try:
            conn = sqlite3.connect(
                path, timeout=self._busy_timeout, check_same_thread=False, isolation_level=None
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store {path}: {why_failed(path, exc)}") from exc
        conn.text_factory = strict_text
        try:
            self._prepare(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _prepare(self, conn: sqlite3.Connection) -> None:
        path = self._path
        try:
            # sqlite3 opens files lazily: this first read is what fails on a
            # file that is not a database.
            conn.execute("PRAGMA schema_version").fetchone()
        except sqlite3.DatabaseError as exc:
            if is_not_a_database(exc):
                raise StoreError(
                    f"{path} is not an SQLite database; give SqliteStore a new file "
                    "or one it created"
                ) from exc
            raise StoreError(f"cannot read SQLite store {path}: {why_failed(path, exc)}") from exc
        try:
            # The version and the tables read in one snapshot: another process may be
            # creating the schema right now, and must not look like a foreign database.
            conn.execute("BEGIN")
            try:
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                tables = conn.execute(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                ).fetchone()[0]
            finally:
                conn.execute("COMMIT")
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"SQLite store {path} has schema version {version}, newer than the "
                    f"{SCHEMA_VERSION} this agentcore reads; upgrade agentcore"
                )
            if version == 0 and tables:
                raise StoreError(
                    f"{path} is an SQLite database that agentcore did not create; "
                    "give SqliteStore a new file"
                )
            if path != _MEMORY and path:
                self._use_wal(conn)
                self._wal = WalPages(conn)
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            if version < SCHEMA_VERSION:
                self._create_or_migrate(conn)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot set up SQLite store {path}: {why_failed(path, exc)}") from exc

    def _use_wal(self, conn: sqlite3.Connection) -> None:
        """Switch the file to WAL, retrying while other processes open it at the same time.

        Switching needs the file to itself, and SQLite answers "database is
        locked" at once, without its busy wait, when another connection
        holds it meanwhile (processes opening one new file together). The
        switch is retried for up to ``busy_timeout``; once one process made
        it, it holds for every connection.
        """
        deadline = time.monotonic() + self._busy_timeout
        while True:
            try:
                conn.execute("PRAGMA journal_mode = WAL").fetchone()
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
            time.sleep(0.005)

    def _create_or_migrate(self, conn: sqlite3.Connection) -> None:
        """Create the tables, or migrate an older layout, in one transaction."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Read again under the write lock: another process may have done it.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step]:
                    conn.execute(statement)
            if version < SCHEMA_VERSION:
                conn.execute("DELETE FROM schema_version")
                conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        if version == 0:
            logger.debug("created agentcore store schema version %d", SCHEMA_VERSION)
        elif version < SCHEMA_VERSION:
            logger.info(
                "migrated agentcore store %s from schema version %d to %d",
                self._path,
                version,
                SCHEMA_VERSION,
            )

    # -- running calls -----------------------------------------------------

    def _set_busy_ms(self, conn: sqlite3.Connection, busy_ms: int) -> None:
        """Make the connection wait ``busy_ms`` for a lock, unless it already does (lock held)."""
        if busy_ms != self._busy_ms:
            conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
            self._busy_ms = busy_ms

    def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on the connection under the lock (in the calling thread)."""
        with self._lock:
            self._check_open()
            try:
                self._set_busy_ms(self._conn, round(1000 * self._busy_timeout))
                result = fn(self._conn)
                self._checkpoint_if_due()  # after a write (a deleted session, a lease)
                return result
            except UndecodableText:
                raise CorruptDataError(
                    f"SQLite store {self._path}: a stored text is not valid UTF-8, the file is "
                    "damaged there (content not shown)"
                ) from None
            except sqlite3.Error as exc:
                raise StoreError(
                    f"SQLite store {self._path}: {why_failed(self._path, exc)}"
                ) from exc

    def _fetchall(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        rows: list[Any] = self._call(lambda conn: conn.execute(sql, params).fetchall())
        return rows

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
        encoded = encode_batch(batch) if inline_candidate(batch) else None
        chars = 0 if encoded is None else encoded_chars(encoded)
        if (
            encoded is not None
            and chars <= INLINE_MAX_CHARS
            and await self._here(lambda conn: self._attempt(encoded, 0, chars) or None)
        ):
            return
        await asyncio.to_thread(self._write, batch if encoded is None else encoded)

    async def _here(self, work: Callable[[sqlite3.Connection], T | None]) -> T | None:
        """``work``'s result, run on this thread if nothing holds a lock it needs, else None.

        ``work`` waits for no lock (busy timeout 0) and returns None, having stored nothing,
        when the database's write lock was taken; so does this when another call of the
        store holds its connection. It never awaits, so a cancel lands before it or after
        its commit. A WAL due a checkpoint after it is checkpointed in a worker thread.
        """
        if not self._lock.acquire(blocking=False):
            return None  # another call of the store is running in a worker thread
        try:
            self._check_open()
            result = work(self._conn)
            due = result is not None and self._wal is not None and self._wal.due(self._conn)
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite store {self._path}: {why_failed(self._path, exc)}") from exc
        finally:
            self._lock.release()
        if due:  # stored: the WAL's pages are copied off the event loop
            await asyncio.to_thread(self._checkpoint)
        return result

    def _checkpoint(self) -> None:
        """Checkpoint the WAL if it is due (in a worker thread); nothing when closed."""
        with self._lock:
            if not self._closed:
                self._checkpoint_if_due()

    def _checkpoint_if_due(self) -> None:
        """Checkpoint the WAL if the store's commits may have filled it; under the lock."""
        wal = self._wal
        if wal is not None and wal.due(self._conn):
            wal.checkpoint(self._conn, self._path)

    def _write(self, batch: StoreWrite | EncodedWrite) -> None:
        encoded = batch if isinstance(batch, EncodedWrite) else encode_batch(batch)
        # The busy wait: the write's own timeout, or the store's busy_timeout.
        wait = Deadline.after(self._busy_timeout if encoded.timeout is None else encoded.timeout)
        for pause in pauses():
            if self._try_write(encoded, wait, bounded=encoded.timeout is not None):
                return
            left = wait.remaining()
            if left is not None and left <= 0:
                raise self._timed_out(encoded, "another connection held the database's write lock")
            time.sleep(min(pause, left if left is not None else pause))

    def _try_write(self, encoded: EncodedWrite, wait: Deadline, *, bounded: bool) -> bool:
        """Write ``encoded`` unless the database stays locked for one try; return whether it did."""
        left = wait.remaining() if bounded else None
        if not self._lock.acquire(timeout=-1 if left is None else left):
            raise self._timed_out(encoded, "other calls of this store held its connection")
        try:
            self._check_open()
            try_ms = max(1, round(1000 * (wait.cap(LOCK_TRY_SECONDS) or LOCK_TRY_SECONDS)))
            if not self._attempt(encoded, try_ms, encoded_chars(encoded)):
                return False
            self._checkpoint_if_due()
            # Left as the next write's try on the calling thread wants it (no PRAGMA there);
            # the write is stored, so an error here changes nothing it reports.
            with contextlib.suppress(sqlite3.Error):
                self._set_busy_ms(self._conn, 0)
            return True
        finally:
            self._lock.release()

    def _attempt(self, encoded: EncodedWrite, busy_ms: int, chars: int) -> bool:
        """Write ``encoded``, waiting ``busy_ms`` for the database's write lock; whether it did.

        ``chars`` is the length of its JSON text (for the WAL's checkpoints).

        Called with the store's lock held. False means the lock stayed taken and nothing
        was stored.
        """
        conn = self._conn
        try:
            self._set_busy_ms(conn, busy_ms)
            try:
                version, heads = apply_write(conn, encoded, self._heads)
            except BaseException:
                self._heads.forget(encoded.session_id)
                raise
            else:
                self._heads.store(version, encoded.session_id, heads)
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
                return False
            raise StoreError(f"SQLite store {self._path}: {why_failed(self._path, exc)}") from exc
        if self._wal is not None:
            self._wal.committed(chars)
        return True

    def _timed_out(self, encoded: EncodedWrite, why: str) -> StoreTimeoutError:
        limit = self._busy_timeout if encoded.timeout is None else encoded.timeout
        setting = "busy_timeout" if encoded.timeout is None else "the write's timeout"
        return StoreTimeoutError(
            f"SQLite store {self._path}: the write to session {encoded.session_id!r} did not "
            f"finish within {limit:g} s ({setting}): {why}; nothing was stored"
        )

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

    def _close(self) -> None:
        with self._lock:
            if not self._mark_closed():
                return
            try:
                self._conn.close()
            except sqlite3.Error as exc:
                raise StoreError(f"closing SQLite store {self._path} failed: {exc}") from exc
