"""Deleting one session from an SQLite database written by :class:`~agentcore.SqliteStore`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentcore.cli.errors import CliError

SESSIONS_TABLE = "sessions"
"""The table with one row per session; the others refer to it by ``session_id``."""

BUSY_TIMEOUT_SECONDS = 5.0
"""How long to wait for another writer (a running chat) to finish its write."""


def delete_session(path: Path, session_id: str) -> int:
    """Delete every row of ``session_id`` from the database at ``path``; the rows deleted.

    One ``BEGIN IMMEDIATE`` transaction removes the session's rows from each
    table that has a ``session_id`` column (the sessions table last, for the
    foreign keys), so the session disappears whole or not at all. Do not
    delete a session that a running chat is using.

    :raises CliError: The database cannot be written, or holds no such session.
    """
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    except sqlite3.Error as exc:
        raise CliError(f"cannot open the database {path}: {exc}") from exc
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            deleted = 0
            for table in _tables_by_session(conn):
                cursor = conn.execute(
                    f"DELETE FROM {_quoted(table)} WHERE session_id = ?", (session_id,)
                )
                deleted += max(cursor.rowcount, 0)
            if deleted == 0:
                raise CliError(f"no session {session_id!r} in {path}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise CliError(f"cannot delete session {session_id!r} from {path}: {exc}") from exc
    finally:
        conn.close()
    return deleted


def _tables_by_session(conn: sqlite3.Connection) -> list[str]:
    """The tables with a ``session_id`` column, the sessions table last."""
    names = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    tables = [
        name
        for name in names
        if any(
            column[1] == "session_id"
            for column in conn.execute(f"PRAGMA table_info({_quoted(name)})").fetchall()
        )
    ]
    return sorted(tables, key=lambda name: name == SESSIONS_TABLE)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
