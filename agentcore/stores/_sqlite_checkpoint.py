"""When an :class:`~agentcore.stores.SqliteStore` checkpoints its WAL: in a worker thread.

SQLite checkpoints the write-ahead log in the commit that takes it past 1000 pages
(``wal_autocheckpoint``): it copies those pages into the database file and syncs
it, milliseconds of I/O. A short write now commits on the calling thread (see
``_sqlite_inline``), where that would stall the event loop, so the store turns the
automatic checkpoint off on its own connection and runs it itself, in a worker
thread, once :class:`WalPages` says its commits may have written as many pages.

The count is an estimate from above of the frames the store's commits added: one
page per commit, one per row changed, one per :data:`PAGE_CHARS` characters of text
written. Other connections keep SQLite's default and checkpoint in their own commits.
"""

from __future__ import annotations

import logging
import sqlite3

logger = logging.getLogger(__name__)

CHECKPOINT_PAGES = 1000
"""Pages the store's commits may add to the WAL before it checkpoints (SQLite's default)."""

PAGE_CHARS = 1024
"""Characters of text counted as one page: 4 KiB pages, up to 4 bytes a character."""


class WalPages:
    """The pages a connection's commits may have added to the WAL since its last checkpoint.

    Used under the store's lock, with the connection it was made for.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        self._changes = conn.total_changes
        self._pages = 0

    def committed(self, chars: int) -> None:
        """Count one commit that wrote ``chars`` characters of text."""
        self._pages += 1 + chars // PAGE_CHARS

    def due(self, conn: sqlite3.Connection) -> bool:
        """Whether the commits since the last checkpoint may have added its worth of pages."""
        return self._pages + conn.total_changes - self._changes >= CHECKPOINT_PAGES

    def checkpoint(self, conn: sqlite3.Connection, path: str) -> None:
        """Run a passive checkpoint (it never waits for a lock), then count from zero.

        An error is logged, not raised: the writes it follows are stored, and the
        next checkpoint (this store's or another connection's) copies their pages.
        """
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as exc:
            logger.debug("SQLite store %s: WAL checkpoint failed: %s", path, exc)
        self._changes = conn.total_changes
        self._pages = 0
