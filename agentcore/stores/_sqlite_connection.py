"""The connection of :class:`~agentcore.stores.SqliteStore`: its lock, waits and checkpoints.

The store runs every call on one connection guarded by one lock: in a worker thread
(:meth:`SqliteConnection._call`), or on the calling thread when nothing holds a lock
the call needs (:meth:`SqliteConnection._here`). This module keeps that connection,
its busy timeout, the WAL's checkpoints, the search index's catch-ups, and closing
it. The public methods are the store's own, in ``sqlite``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from agentcore.errors import ConfigError, CorruptDataError, StoreError
from agentcore.stores._deadline import check_timeout
from agentcore.stores._sqlite_checkpoint import WalPages
from agentcore.stores._sqlite_file import UndecodableText, why_failed
from agentcore.stores._sqlite_heads import HeadCache
from agentcore.stores._sqlite_open import open_database
from agentcore.stores._sqlite_search import CATCH_UP_BATCH, catch_up, catch_up_unless_read_only
from agentcore.stores.base import BaseStore

T = TypeVar("T")

logger = logging.getLogger("agentcore.stores.sqlite")

INDEX_EVERY = 64
"""Messages the store writes before it indexes them for search, in a worker thread.

A search indexes what is left first (see ``_sqlite_search``), so this bounds the
work a search may find, not what it sees.
"""


class SqliteConnection(BaseStore):
    """The one connection of :class:`~agentcore.stores.SqliteStore`, and how calls run on it.

    Opens the database (``_sqlite_open``) with the arguments the store's class docstring
    describes.
    """

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
        # The one connection, used only under self._lock. Tests read this
        # attribute (e.g. set_trace_callback to count statements); keep its name.
        self._conn: sqlite3.Connection
        # The WAL's checkpoints, run in worker threads (a file's database; None in memory).
        self._wal: WalPages | None
        self._conn, self._wal = open_database(self._path, self._busy_timeout)
        # Messages this store committed since its index last caught up (under self._lock),
        # and the worker thread's catch-up while it runs.
        self._unindexed = 0
        self._indexing: asyncio.Future[None] | None = None
        self._warned_read_only = False

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return f"<SqliteStore {self._path!r}{state}>"

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
        """The rows of ``sql`` with ``params``, run by :meth:`_call`."""
        rows: list[Any] = self._call(lambda conn: conn.execute(sql, params).fetchall())
        return rows

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

    def _index_if_due(self) -> None:
        """Index the messages written since the last catch-up, in a worker thread, if due.

        The caller does not wait: its write is stored, and a search catches up first.
        """
        if self._unindexed < INDEX_EVERY or (
            self._indexing is not None and not self._indexing.done()
        ):
            return
        self._indexing = asyncio.get_running_loop().run_in_executor(None, self._index_behind)

    def _index_behind(self) -> None:
        """Catch the search index up with the stored messages (in a worker thread).

        Holds the connection a batch at a time (see ``_sqlite_search.CATCH_UP_BATCH``), so
        the store's other calls go on in between. A failure is logged, not raised: the
        messages are stored, and the next catch-up (a search's, which reports its error)
        indexes them.
        """
        while self._index_one_batch():
            pass

    def _index_one_batch(self) -> bool:
        """Index one batch of the messages above the mark; whether more may be left."""
        with self._lock:
            if self._closed:
                return False
            try:
                self._set_busy_ms(self._conn, round(1000 * self._busy_timeout))
                read = catch_up(self._conn, self._path, batches=1)
                self._checkpoint_if_due()
            except Exception as exc:  # a worker thread's: nobody awaits it to see it
                self._unindexed = 0  # tried again after as many writes, or by a search
                logger.warning(
                    "SQLite store %s: indexing for search failed, a search tries again: %s",
                    self._path,
                    exc,
                )
                return False
            finally:  # left as the next write's try on the calling thread wants it
                with contextlib.suppress(sqlite3.Error):
                    self._set_busy_ms(self._conn, 0)
            if read < CATCH_UP_BATCH:
                self._unindexed = 0
                return False
            return True

    def _catch_up(self, conn: sqlite3.Connection) -> None:
        """Index every stored message above the mark; under the lock.

        A read-only file cannot be (see ``catch_up_unless_read_only``): a warning says
        so, once.
        """
        if not catch_up_unless_read_only(conn, self._path) and not self._warned_read_only:
            self._warned_read_only = True
            logger.warning(
                "SQLite store %s is read-only: the messages stored since it was last "
                "indexed are not searched",
                self._path,
            )
        self._unindexed = 0

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

    def _close(self) -> None:
        """Close the connection, unless closed already (in a worker thread)."""
        with self._lock:
            if not self._mark_closed():
                return
            if self._unindexed:  # the file is left indexed, for a search of a later open
                try:
                    self._catch_up(self._conn)
                except sqlite3.Error as exc:
                    logger.debug("SQLite store %s: indexing on close failed: %s", self._path, exc)
            try:
                self._conn.close()
            except sqlite3.Error as exc:
                raise StoreError(f"closing SQLite store {self._path} failed: {exc}") from exc
