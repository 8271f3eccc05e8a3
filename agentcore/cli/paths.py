"""Where the CLI keeps its files (database, chat history), created private to the user."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs

APP_NAME = "agentcore"
"""The name of the CLI's folder in the user's data directory."""

HOME_ENV = "AGENTCORE_HOME"
"""An environment variable naming the folder that holds the CLI's database."""

DB_FILENAME = "agentcore.db"
"""The database file's name inside that folder."""

HISTORY_FILENAME = "chat_history"
"""The line-editing history of ``agentcore chat`` inside that folder."""

LAST_SESSIONS_FILENAME = "last_sessions.json"
"""Which session ``agentcore chat`` used last, per database, for ``--continue``."""

PRIVATE_DIR_MODE = 0o700
"""The mode of folders the CLI creates: only the user may list or enter them."""

PRIVATE_FILE_MODE = 0o600
"""The mode of files the CLI creates: only the user may read or write them."""


def user_data_dir() -> Path:
    r"""The platform's per-user data folder for agentcore, as platformdirs finds it.

    ``%APPDATA%\agentcore`` on Windows (the roaming profile),
    ``~/Library/Application Support/agentcore`` on macOS, and
    ``$XDG_DATA_HOME/agentcore`` (``~/.local/share/agentcore`` when unset or
    relative) elsewhere.
    """
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False, roaming=True))


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    """The database the CLI uses without ``--db``.

    ``$AGENTCORE_HOME/agentcore.db`` when :data:`HOME_ENV` is set in
    ``environ`` (default: :data:`os.environ`), else ``agentcore.db`` in
    :func:`user_data_dir`.
    """
    return data_dir(environ) / DB_FILENAME


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The CLI's folder: ``$AGENTCORE_HOME`` when set in ``environ``, else :func:`user_data_dir`."""
    environ = os.environ if environ is None else environ
    custom = environ.get(HOME_ENV, "")
    if custom:
        return Path(custom).expanduser()
    return user_data_dir()


def make_private_dir(path: Path) -> None:
    """Create the folder ``path`` (and missing parents) readable by the user only.

    Folders created here get :data:`PRIVATE_DIR_MODE` whatever the umask; an
    existing folder is left as it is (the user chose its mode).

    :raises OSError: The folder cannot be created.
    """
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, PRIVATE_DIR_MODE)


def make_private_file(path: Path) -> None:
    """Create the file ``path`` empty with :data:`PRIVATE_FILE_MODE` unless it exists.

    An existing file is left as it is. SQLite gives its ``-wal`` and ``-shm``
    files the mode of the database file, so they stay private too.

    :raises OSError: The file cannot be created.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)
