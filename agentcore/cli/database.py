"""The ``--db`` flag (or ``$AGENTCORE_DB``) and opening the database it names.

A database is an SQLite file path or a PostgreSQL URL (``postgresql://user@host/dbname``).
"""

from __future__ import annotations

import argparse
import os
import urllib.parse
from pathlib import Path
from typing import overload

from attrs import frozen

from agentcore.cli.errors import CliError
from agentcore.cli.paths import default_db_path
from agentcore.errors import ConfigError
from agentcore.stores import MemoryStore, SqliteStore

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
            'pip install "agentcore[postgres]"'
        ) from None
    try:
        return PostgresStore(url.url, create=create)
    except ConfigError as exc:
        raise CliError(f"--db: {exc}") from None


def open_existing(path: Database) -> MemoryStore:
    """Open the database at ``path`` for reading; never create it (nor its tables).

    :raises CliError: ``path`` does not exist or is a folder.
    """
    if isinstance(path, PostgresUrl):
        return _open_postgres(path, create=False)
    if not path.exists():
        raise CliError(
            f"no database at {path}; pass --db PATH, or start a session with 'agentcore chat'"
        )
    if path.is_dir():
        raise CliError(f"{path} is a folder; --db takes the path of an SQLite file")
    return SqliteStore(path)


@overload
def open_or_create(path: Path) -> SqliteStore: ...


@overload
def open_or_create(path: Database) -> MemoryStore: ...


def open_or_create(path: Database) -> MemoryStore:
    """Open the database at ``path``, creating it (or its tables) and its folder when missing."""
    if isinstance(path, PostgresUrl):
        return _open_postgres(path, create=True)
    if path.is_dir():
        raise CliError(f"{path} is a folder; --db takes the path of an SQLite file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"cannot create the folder {path.parent}: {exc.strerror}") from exc
    return SqliteStore(path)
