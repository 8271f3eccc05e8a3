"""Opening the database of an :class:`~agentcore.stores.SqliteStore`: checks, WAL, schema.

:func:`open_database` creates a missing file (private to its owner), refuses a file
that is not an SQLite database, one that agentcore did not create and one with a
newer schema, switches a file to WAL, and creates the tables or migrates an older
layout (the statements are in ``_sqlite_schema``).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time

from agentcore.errors import StoreError
from agentcore.stores._sqlite_checkpoint import WalPages
from agentcore.stores._sqlite_file import (
    create_private,
    is_not_a_database,
    strict_text,
    why_failed,
)
from agentcore.stores._sqlite_schema import MIGRATIONS, SCHEMA_VERSION
from agentcore.stores._sqlite_search import catch_up_unless_read_only
from agentcore.stores._sqlite_write import rollback

logger = logging.getLogger("agentcore.stores.sqlite")

_MEMORY = ":memory:"


def open_database(path: str, busy_timeout: float) -> tuple[sqlite3.Connection, WalPages | None]:
    """Open ``path`` (or ``":memory:"``) ready for the store, with its WAL's checkpoints.

    ``busy_timeout`` is how many seconds the connection waits for another one's lock.
    The WAL's checkpoints are None for an in-memory database. Raises
    :class:`~agentcore.errors.StoreError` when the file cannot be opened or used.
    """
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
            path, timeout=busy_timeout, check_same_thread=False, isolation_level=None
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open SQLite store {path}: {why_failed(path, exc)}") from exc
    conn.text_factory = strict_text
    try:
        wal = _prepare(conn, path, busy_timeout)
    except BaseException:
        conn.close()
        raise
    return conn, wal


def _prepare(conn: sqlite3.Connection, path: str, busy_timeout: float) -> WalPages | None:
    """Check the database of ``conn``, set it up and bring its schema up to date."""
    try:
        # sqlite3 opens files lazily: this first read is what fails on a
        # file that is not a database.
        conn.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        if is_not_a_database(exc):
            raise StoreError(
                f"{path} is not an SQLite database; give SqliteStore a new file or one it created"
            ) from exc
        raise StoreError(f"cannot read SQLite store {path}: {why_failed(path, exc)}") from exc
    wal: WalPages | None = None
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
            _use_wal(conn, busy_timeout)
            wal = WalPages(conn)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if version < SCHEMA_VERSION:
            _create_or_migrate(conn, path)
        catch_up_unless_read_only(conn, path)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot set up SQLite store {path}: {why_failed(path, exc)}") from exc
    return wal


def _use_wal(conn: sqlite3.Connection, busy_timeout: float) -> None:
    """Switch the file to WAL, retrying while other processes open it at the same time.

    Switching needs the file to itself, and SQLite answers "database is
    locked" at once, without its busy wait, when another connection
    holds it meanwhile (processes opening one new file together). The
    switch is retried for up to ``busy_timeout``; once one process made
    it, it holds for every connection.
    """
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
        time.sleep(0.005)


def _create_or_migrate(conn: sqlite3.Connection, path: str) -> None:
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
            path,
            version,
            SCHEMA_VERSION,
        )
