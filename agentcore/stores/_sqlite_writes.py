"""How an :class:`~agentcore.stores.SqliteStore` write commits, and waits for the lock.

:meth:`~agentcore.stores.SqliteStore.write` tries a short write on the calling thread
first (``_sqlite_inline`` says which writes are short) with :meth:`SqliteWrites._attempt`;
any other goes to a worker thread (:meth:`SqliteWrites._write`), which tries the
database's write lock for at most 0.2 s at a time, pausing in between, until the
write's timeout (or the store's ``busy_timeout``) runs out. The statements of a write
are in ``_sqlite_write``.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time

from agentcore.errors import StoreError, StoreTimeoutError
from agentcore.stores._codec import EncodedWrite, encode_batch
from agentcore.stores._deadline import LOCK_TRY_SECONDS, Deadline, pauses
from agentcore.stores._sqlite_connection import SqliteConnection
from agentcore.stores._sqlite_file import is_busy, why_failed
from agentcore.stores._sqlite_inline import encoded_chars
from agentcore.stores._sqlite_write import apply_write
from agentcore.stores.base import StoreWrite


class SqliteWrites(SqliteConnection):
    """The commit of a write of :class:`~agentcore.stores.SqliteStore`, and its waits."""

    def _write(self, batch: StoreWrite | EncodedWrite) -> None:
        """Write ``batch`` in tries for the lock until stored or past its wait (worker thread)."""
        encoded = (
            batch if isinstance(batch, EncodedWrite) else encode_batch(batch, searchable=False)
        )
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
        for append in encoded.appends.values():
            self._unindexed += len(append.bodies)
        return True

    def _timed_out(self, encoded: EncodedWrite, why: str) -> StoreTimeoutError:
        """The error of a write that waited past its limit, saying ``why``."""
        limit = self._busy_timeout if encoded.timeout is None else encoded.timeout
        setting = "busy_timeout" if encoded.timeout is None else "the write's timeout"
        return StoreTimeoutError(
            f"SQLite store {self._path}: the write to session {encoded.session_id!r} did not "
            f"finish within {limit:g} s ({setting}): {why}; nothing was stored"
        )
