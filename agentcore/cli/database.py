"""The ``--db`` flag and opening the SQLite database it names."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from agentcore.cli.errors import CliError
from agentcore.cli.paths import default_db_path, make_private_dir, make_private_file
from agentcore.stores import SqliteStore

DB_HELP = (
    "the SQLite database (default: $AGENTCORE_HOME/agentcore.db if AGENTCORE_HOME is set, "
    "else agentcore.db in the user data folder)"
)


def add_db_argument(parser: argparse.ArgumentParser, help: str = DB_HELP) -> None:
    """Add ``--db PATH`` to ``parser``."""
    parser.add_argument("--db", type=Path, metavar="PATH", help=help)


def db_path(args: argparse.Namespace) -> Path:
    """The database ``args`` name: ``--db``, else :func:`default_db_path`."""
    given: Path | None = args.db
    return given if given is not None else default_db_path()


def check_existing(path: Path) -> bool:
    """Whether ``path`` holds a database worth opening; never creates or changes it.

    False for an empty file (no session in it: opening it as a store would
    write the tables into a file the user only asked to read).

    :raises CliError: ``path`` does not exist, is a folder, or is not an
        SQLite database.
    """
    if not path.exists():
        raise CliError(
            f"no database at {path}; pass --db PATH, or start a session with 'agentcore chat'"
        )
    if path.is_dir():
        raise CliError(f"{path} is a folder; --db takes the path of an SQLite file")
    if path.stat().st_size == 0:
        return False
    _check_readable(path)
    return True


def open_existing(path: Path) -> SqliteStore:
    """Open the database at ``path``, which :func:`check_existing` found non-empty."""
    return SqliteStore(path)


def open_or_create(path: Path) -> SqliteStore:
    """Open the database at ``path``, creating it and its folder when missing.

    A folder or a file created here is private to the user (0700, 0600).
    """
    if path.is_dir():
        raise CliError(f"{path} is a folder; --db takes the path of an SQLite file")
    try:
        make_private_dir(path.parent)
    except OSError as exc:
        raise CliError(f"cannot create the folder {path.parent}: {exc.strerror}") from exc
    try:
        make_private_file(path)
    except OSError as exc:
        raise CliError(f"cannot create the database {path}: {exc.strerror}") from exc
    return SqliteStore(path)


def _check_readable(path: Path) -> None:
    """Read the schema through a read-only connection, so nothing is written on failure."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise CliError(f"cannot open the database {path}: {exc}") from exc
    try:
        tables = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    except sqlite3.DatabaseError as exc:
        raise CliError(f"{path} is not an SQLite database ({exc}); check --db") from exc
    finally:
        conn.close()
    if "sessions" not in tables:
        raise CliError(f"{path} is not an agentcore database (it has no sessions table)")
