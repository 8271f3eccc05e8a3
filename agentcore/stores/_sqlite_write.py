"""The statements of :class:`~agentcore.stores.SqliteStore` write transactions."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Mapping

from agentcore.errors import StoreError
from agentcore.stores._codec import (
    EncodedWrite,
    append_conflict,
    duplicate_turn,
    version_conflict,
)
from agentcore.stores._sqlite_file import is_busy
from agentcore.stores._sqlite_heads import HeadCache, data_version, read_heads
from agentcore.stores.base import SlotHead, StoredTurn

# max(idx) over the primary key's (session_id, slot_id) prefix is one index
# seek, whatever the length of the history.
LAST_INDEX = "SELECT max(idx) FROM messages WHERE session_id = ? AND slot_id = ?"
_ENSURE_SESSION = "INSERT OR IGNORE INTO sessions (session_id) VALUES (?)"
_UPSERT_STATE = (
    "INSERT INTO sessions (session_id, state) VALUES (?, ?) "
    "ON CONFLICT (session_id) DO UPDATE SET state = excluded.state"
)
_UPSERT_CONFIG = (
    "INSERT INTO slots (session_id, slot_id, config, version) VALUES (?, ?, ?, 1) "
    "ON CONFLICT (session_id, slot_id) DO UPDATE SET config = excluded.config, "
    "version = slots.version + 1"
)
_SLOT_VERSION = "SELECT version FROM slots WHERE session_id = ? AND slot_id = ?"
_INSERT_MESSAGE = "INSERT INTO messages (session_id, slot_id, idx, body) VALUES (?, ?, ?, ?)"
_UNINDEX_SESSION = (
    "DELETE FROM message_search WHERE rowid IN (SELECT rowid FROM messages WHERE session_id = ?)"
)
# Once a session's rows are gone, the next message may take a rowid at or below the
# mark (SQLite gives max(rowid) + 1): the mark comes down to the highest rowid left.
_LOWER_SEARCH_MARK = (
    "UPDATE search_mark SET indexed = min(indexed, coalesce((SELECT max(rowid) FROM messages), 0))"
)
_UPSERT_DATA = (
    "INSERT INTO session_data (session_id, key, value) VALUES (?, ?, ?) "
    "ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value"
)
_DELETE_DATA = "DELETE FROM session_data WHERE session_id = ? AND key = ?"
FIND_TURN = (
    "SELECT slot_id, start, stop, turn_index FROM turns WHERE session_id = ? AND turn_id = ?"
)
_INSERT_TURN = (
    "INSERT INTO turns (session_id, turn_id, slot_id, start, stop, turn_index) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)


def find_turn(conn: sqlite3.Connection, session_id: str, turn_id: str) -> StoredTurn | None:
    """Where the write with ``turn_id`` stored its turn, read on ``conn``; None if nowhere."""
    row = conn.execute(FIND_TURN, (session_id, turn_id)).fetchone()
    if row is None:
        return None
    slot_id, start, stop, turn_index = row
    return StoredTurn(
        slot_id, int(start), int(stop), None if turn_index is None else int(turn_index)
    )


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction of ``conn``, if any; errors are ignored."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def _heads_after(
    known: Mapping[str, SlotHead] | None, batch: EncodedWrite
) -> dict[str, SlotHead] | None:
    """The session's slot heads once ``batch`` is stored, from ``known`` (those before it).

    None, so the heads are read from the file, when ``known`` is None or the batch
    names a slot ``known`` lacks (its first config, or a slot that has none).
    """
    if known is None:
        return None
    for slot_id in (*batch.expected_versions, *batch.appends, *batch.slot_configs):
        if slot_id not in known:
            return None
    heads = dict(known)
    for slot_id, append in batch.appends.items():
        heads[slot_id] = SlotHead(heads[slot_id].version, append.start + len(append.bodies))
    for slot_id in batch.slot_configs:
        heads[slot_id] = SlotHead(heads[slot_id].version + 1, heads[slot_id].count)
    return heads


def apply_write(
    conn: sqlite3.Connection, batch: EncodedWrite, kept: HeadCache | None = None
) -> tuple[int, dict[str, SlotHead]]:
    """Write ``batch`` in one transaction; touch only the rows it names.

    Returns the connection's ``data_version`` and the session's slot heads as the commit
    left them. The version is read under the write lock (no other connection can
    commit until the commit). When ``kept`` holds the session's heads at that version,
    they are the file's: the conflict checks use them and the heads after the commit
    are worked out from them and the batch, with no statement; otherwise both are read.
    """
    session_id = batch.session_id
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = data_version(conn)
        known = kept.at_version(version, session_id) if kept is not None else None
        after = _heads_after(known, batch)
        trusted = known if after is not None else None  # holds every slot the batch names
        # A turn id stored already is looked up only when something does not fit (a
        # conflict, or the turn's row exists): a write that fits has a new turn id, since
        # the stored turn moved the slot's count on. Its error is then DuplicateTurnError.
        for slot_id, expected in batch.expected_versions.items():
            if trusted is not None:
                stored = trusted[slot_id].version
            else:
                row = conn.execute(_SLOT_VERSION, (session_id, slot_id)).fetchone()
                stored = 0 if row is None else int(row[0])
            if stored != expected:
                _refuse_stored_turn(conn, batch)
                raise version_conflict(session_id, slot_id, expected, stored)
        for slot_id, append in batch.appends.items():
            if trusted is not None:
                count = trusted[slot_id].count
            else:
                last = conn.execute(LAST_INDEX, (session_id, slot_id)).fetchone()[0]
                count = 0 if last is None else int(last) + 1
            if append.start != count:
                _refuse_stored_turn(conn, batch)
                raise append_conflict(session_id, slot_id, append.start, count)
        if batch.state is None:
            conn.execute(_ENSURE_SESSION, (session_id,))
        else:
            conn.execute(_UPSERT_STATE, (session_id, batch.state))
        # Each statement runs only when the batch has rows for it (a turn has no data).
        if batch.slot_configs:
            conn.executemany(
                _UPSERT_CONFIG,
                [(session_id, slot_id, config) for slot_id, config in batch.slot_configs.items()],
            )
        for slot_id, append in batch.appends.items():
            if append.bodies:
                conn.executemany(
                    _INSERT_MESSAGE,
                    [
                        (session_id, slot_id, index, body)
                        for index, body in enumerate(append.bodies, append.start)
                    ],
                )
        if batch.data:
            conn.executemany(
                _UPSERT_DATA, [(session_id, key, value) for key, value in batch.data.items()]
            )
        if batch.deleted_data:
            conn.executemany(_DELETE_DATA, [(session_id, key) for key in batch.deleted_data])
        turn = batch.turn
        if batch.turn_id is not None and turn is not None:
            try:
                conn.execute(
                    _INSERT_TURN,
                    (
                        session_id,
                        batch.turn_id,
                        turn.slot_id,
                        turn.start,
                        turn.stop,
                        turn.turn_index,
                    ),
                )
            except sqlite3.IntegrityError:
                _refuse_stored_turn(conn, batch)
                raise
        seen = version, after if after is not None else read_heads(conn, session_id)
        conn.execute("COMMIT")
    except sqlite3.IntegrityError as exc:
        rollback(conn)
        raise StoreError(
            f"write to session {session_id!r} conflicts with stored data ({exc}); "
            "reload the session before writing again"
        ) from exc
    except BaseException:
        rollback(conn)
        raise
    return seen


def _refuse_stored_turn(conn: sqlite3.Connection, batch: EncodedWrite) -> None:
    """Raise :class:`DuplicateTurnError` when the turn id of ``batch`` is stored already."""
    if batch.turn_id is None:
        return
    stored_turn = find_turn(conn, batch.session_id, batch.turn_id)
    if stored_turn is not None:
        raise duplicate_turn(batch.session_id, batch.turn_id, stored_turn)


def delete_session(conn: sqlite3.Connection, session_id: str) -> bool:
    """Delete the rows of ``session_id`` from every table, children first, in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(_UNINDEX_SESSION, (session_id,))
        for table in ("messages", "session_data", "turns", "slots"):
            conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
        deleted = conn.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,)).rowcount
        conn.execute(_LOWER_SEARCH_MARK)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return deleted > 0


# One statement, atomic on its own: insert, or take over a lease that is ours or expired.
_ACQUIRE_LEASE = (
    "INSERT INTO leases (session_id, owner, expires_at) VALUES (?, ?, ?) "
    "ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, "
    "expires_at = excluded.expires_at "
    "WHERE leases.owner = excluded.owner OR leases.expires_at <= ?"
)
_RELEASE_LEASE = "DELETE FROM leases WHERE session_id = ? AND owner = ? RETURNING expires_at"


def acquire_lease(conn: sqlite3.Connection, session_id: str, owner: str, seconds: float) -> bool:
    """Take or renew the lease of ``session_id`` for ``owner``; whether it did."""
    now = time.time()
    cursor = conn.execute(_ACQUIRE_LEASE, (session_id, owner, now + seconds, now))
    return cursor.rowcount > 0


def release_lease(conn: sqlite3.Connection, session_id: str, owner: str) -> bool:
    """Give back ``owner``'s lease of ``session_id``; whether ``owner`` held it."""
    rows = conn.execute(_RELEASE_LEASE, (session_id, owner)).fetchall()
    return bool(rows) and float(rows[0][0]) > time.time()


def unless_busy(
    conn: sqlite3.Connection, statement: Callable[[sqlite3.Connection], bool]
) -> bool | None:
    """``statement(conn)``, or None when another connection holds the write lock.

    A one-statement write that finds the lock taken has written nothing.
    """
    try:
        return statement(conn)
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            return None
        raise
