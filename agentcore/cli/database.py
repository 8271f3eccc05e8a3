"""The ``--db`` flag (or ``$AGENTCORE_DB``) and opening the database it names.

A database is an SQLite file path or a PostgreSQL URL (``postgresql://user@host/dbname``).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import stat
import urllib.parse
from pathlib import Path
from typing import overload

from attrs import frozen

from agentcore.cli.errors import CliError
from agentcore.cli.paths import default_db_path, make_private_dir, make_private_file
from agentcore.errors import ConfigError
from agentcore.settings import pinned_requirement
from agentcore.stores import MemoryStore, SqliteStore
from agentcore.stores._sqlite_file import access_problem

DB_ENV = "AGENTCORE_DB"
"""The environment variable naming the database when ``--db`` is not given."""

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
"""How a ``--db`` value that names a PostgreSQL database starts."""

DB_HELP = (
    "the SQLite file, or a PostgreSQL URL such as postgresql://user@host/dbname "
    "(needs agentcore[postgres]); default: $AGENTCORE_DB, else $AGENTCORE_HOME/agentcore.db "
    "if AGENTCORE_HOME is set, else agentcore.db in the user data folder"
)


@frozen
class PostgresUrl:
    """A PostgreSQL database named by URL; shown (``str``) with its password hidden."""

    url: str

    def __str__(self) -> str:
        parts = urllib.parse.urlsplit(self.url)
        if parts.password is None:
            return self.url
        host = parts.netloc.rpartition("@")[2]
        netloc = f"{parts.username or ''}:***@{host}"
        return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


Database = Path | PostgresUrl
"""Where the CLI keeps sessions: an SQLite file, or a PostgreSQL database."""


def parse_database(text: str) -> Database:
    """An argparse type: a PostgreSQL URL, or else the path of an SQLite file."""
    if text.startswith(POSTGRES_SCHEMES):
        return PostgresUrl(text)
    return Path(text)


def add_db_argument(parser: argparse.ArgumentParser, help: str = DB_HELP) -> None:
    """Add ``--db PATH_OR_URL`` to ``parser``."""
    parser.add_argument("--db", type=parse_database, metavar="PATH_OR_URL", help=help)


def db_path(args: argparse.Namespace) -> Database:
    """The database ``args`` name: ``--db``, else ``$AGENTCORE_DB``, else the default file.

    The default is :func:`~agentcore.cli.paths.default_db_path`.
    """
    given: Database | None = args.db
    if given is not None:
        return given
    from_env = os.environ.get(DB_ENV, "")
    return parse_database(from_env) if from_env else default_db_path()


def _open_postgres(url: PostgresUrl, *, create: bool) -> MemoryStore:
    try:
        from agentcore.stores.postgres import PostgresStore
    except ImportError:
        raise CliError(
            f"{url} is a PostgreSQL database, which needs psycopg: "
            f'pip install "{pinned_requirement("postgres")}" '
            "(with --find-links WHEELHOUSE for a wheelhouse install)"
        ) from None
    try:
        return PostgresStore(url.url, create=create)
    except ConfigError as exc:
        raise CliError(f"--db: {exc}") from None


def check_existing(path: Database) -> bool:
    """Whether ``path`` holds a database worth opening; never creates or changes it.

    False for an empty SQLite file (no session in it: opening it as a store
    would write the tables into a file the user only asked to read). A
    PostgreSQL URL is always worth opening: :func:`open_existing` opens it
    without creating tables.

    :raises CliError: ``path`` does not exist, is a folder, or is not an
        SQLite database.
    """
    if isinstance(path, PostgresUrl):
        return True
    found = _stat(path)
    if found is None:
        raise CliError(
            f"no database at {path}; pass --db PATH, or start a session with 'agentcore chat'"
        )
    if stat.S_ISDIR(found.st_mode):
        raise CliError(f"{path} is a folder; --db takes the path of an SQLite file")
    if found.st_size == 0:
        return False
    _check_readable(path)
    return True


def open_existing(path: Database) -> MemoryStore:
    """Open the database at ``path``, which :func:`check_existing` found worth opening.

    Never creates it, nor its tables.
    """
    if isinstance(path, PostgresUrl):
        return _open_postgres(path, create=False)
    return SqliteStore(path)


@overload
def open_or_create(path: Path) -> SqliteStore: ...


@overload
def open_or_create(path: Database) -> MemoryStore: ...


def open_or_create(path: Database) -> MemoryStore:
    """Open the database at ``path``, creating it (or its tables) and its folder when missing.

    A folder or a file created here is private to the user (0700, 0600).
    """
    if isinstance(path, PostgresUrl):
        return _open_postgres(path, create=True)
    found = _stat(path)
    if found is not None and stat.S_ISDIR(found.st_mode):
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


def _stat(path: Path) -> os.stat_result | None:
    """``path``'s status, or None when nothing is there.

    A folder this process may not enter is a :class:`CliError` saying so
    (``Path.exists`` would raise PermissionError).
    """
    try:
        return path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise CliError(
            f"cannot look at {path}: {exc.strerror} (check that this process may enter "
            f"the folder {path.parent})"
        ) from None


def _check_readable(path: Path) -> None:
    """Read the schema through a read-only connection, so nothing is written on failure.

    A file or folder this process may not read or write is named as such
    (read-only, permission denied), never as a file that is not a database.
    """
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise CliError(f"cannot open the database {path}: {_why(path, exc)}") from exc
    try:
        tables = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    except sqlite3.DatabaseError as exc:
        problem = access_problem(str(path), exc)
        if problem is not None:
            raise CliError(f"cannot read the database {path}: {problem}") from exc
        raise CliError(f"{path} is not an SQLite database ({exc}); check --db") from exc
    finally:
        conn.close()
    if "sessions" not in tables:
        raise CliError(f"{path} is not an agentcore database (it has no sessions table)")


def _why(path: Path, exc: sqlite3.Error) -> str:
    return access_problem(str(path), exc) or str(exc)
