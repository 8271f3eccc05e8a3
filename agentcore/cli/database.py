"""The ``--db`` flag and opening the SQLite database it names."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentcore.cli.errors import CliError
from agentcore.cli.paths import default_db_path
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


def open_existing(path: Path) -> SqliteStore:
    """Open the database at ``path`` for reading; never create it.

    :raises CliError: ``path`` does not exist or is a folder.
    """
    if not path.exists():
        raise CliError(
            f"no database at {path}; pass --db PATH, or start a session with 'agentcore chat'"
        )
    if path.is_dir():
        raise CliError(f"{path} is a folder; --db takes the path of an SQLite file")
    return SqliteStore(path)


def open_or_create(path: Path) -> SqliteStore:
    """Open the database at ``path``, creating it and its folder when missing."""
    if path.is_dir():
        raise CliError(f"{path} is a folder; --db takes the path of an SQLite file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"cannot create the folder {path.parent}: {exc.strerror}") from exc
    return SqliteStore(path)
