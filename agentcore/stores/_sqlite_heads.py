"""The slot heads an :class:`~agentcore.stores.SqliteStore` connection last saw, per session.

A session checks its slot heads before every model call. When nothing changed since the
store's own connection last wrote or read that session, the answer is known without a
worker thread: SQLite's ``PRAGMA data_version`` changes as soon as *another* connection
(another store object, another process) commits to the file, and stays as it is for this
connection's own commits, which keep the cache up to date themselves. So a turn that finds
nothing changed reads nothing in a worker thread (and its write, when the file is free,
commits on the calling thread: see ``_sqlite_inline``).
"""

from __future__ import annotations

import sqlite3

from agentcore.stores.base import SlotHead

# One primary-key seek per slot for the version, one for the last index.
SLOT_HEADS = (
    "SELECT s.slot_id, s.version, (SELECT max(m.idx) FROM messages AS m "
    "WHERE m.session_id = s.session_id AND m.slot_id = s.slot_id) "
    "FROM slots AS s WHERE s.session_id = ? ORDER BY s.slot_id"
)
_DATA_VERSION = "PRAGMA data_version"

MAX_CACHED_SESSIONS = 4096
"""How many sessions' heads a store keeps at most (the least recently stored go first)."""


def data_version(conn: sqlite3.Connection) -> int:
    """SQLite's count of the commits other connections made to the file, as ``conn`` sees it."""
    return int(conn.execute(_DATA_VERSION).fetchone()[0])


def read_heads(conn: sqlite3.Connection, session_id: str) -> dict[str, SlotHead]:
    """The heads of every slot of ``session_id`` with a stored config, read on ``conn``."""
    return {
        slot_id: SlotHead(int(version), 0 if last is None else int(last) + 1)
        for slot_id, version, last in conn.execute(SLOT_HEADS, (session_id,))
    }


class HeadCache:
    """Slot heads by session, each valid while the connection's ``data_version`` is unchanged.

    Every method is called with the store's lock held, on the one connection the store has.
    An entry is stored with the ``data_version`` read no later than its heads (in the same
    write transaction, or before the read), so a commit of another connection in between
    makes the entry look stale, never fresh.
    """

    def __init__(self) -> None:
        self._version: int | None = None
        self._heads: dict[str, dict[str, SlotHead]] = {}

    def lookup(self, conn: sqlite3.Connection, session_id: str) -> dict[str, SlotHead] | None:
        """The cached heads of ``session_id`` (a copy), or None when they may be out of date."""
        heads = self._heads.get(session_id)
        if heads is None:
            return None
        if data_version(conn) != self._version:
            self._heads.clear()  # another connection committed: any session may have changed
            return None
        return dict(heads)

    def at_version(self, version: int, session_id: str) -> dict[str, SlotHead] | None:
        """The kept heads of ``session_id`` if kept at ``data_version`` ``version``; else None.

        For a write transaction that read ``version`` under the write lock: equal,
        the heads are the file's as the transaction found it. Never copied: read only.
        """
        if version != self._version:
            return None
        return self._heads.get(session_id)

    def store(self, version: int, session_id: str, heads: dict[str, SlotHead]) -> None:
        """Keep ``heads`` of ``session_id``, read at the connection's data version ``version``."""
        if version != self._version:
            self._heads.clear()
            self._version = version
        self._heads.pop(session_id, None)
        if len(self._heads) >= MAX_CACHED_SESSIONS:
            del self._heads[next(iter(self._heads))]
        self._heads[session_id] = dict(heads)

    def forget(self, session_id: str) -> None:
        """Drop what is kept for ``session_id`` (its write failed, or it was deleted)."""
        self._heads.pop(session_id, None)
