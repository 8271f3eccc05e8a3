"""Where the CLI keeps its SQLite database by default."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

APP_NAME = "agentcore"
"""The name of the CLI's folder in the user's data directory."""

HOME_ENV = "AGENTCORE_HOME"
"""An environment variable naming the folder that holds the CLI's database."""

DB_FILENAME = "agentcore.db"
"""The database file's name inside that folder."""


def user_data_dir(
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
    home: Path | None = None,
) -> Path:
    r"""The platform's per-user data folder for agentcore.

    ``%APPDATA%\agentcore`` on Windows, ``~/Library/Application Support/agentcore``
    on macOS, and ``$XDG_DATA_HOME/agentcore`` (``~/.local/share/agentcore``
    when unset or relative) elsewhere.

    :param environ: The environment to read (default: :data:`os.environ`).
    :param platform: A :data:`sys.platform` value (default: this one).
    :param home: The user's home folder (default: :meth:`Path.home`).
    """
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    home = Path.home() if home is None else home
    if platform.startswith(("win", "cygwin")):
        appdata = environ.get("APPDATA", "")
        base = Path(appdata) if appdata else home / "AppData" / "Roaming"
    elif platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        xdg = environ.get("XDG_DATA_HOME", "")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".local" / "share"
    return base / APP_NAME


def default_db_path(
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
    home: Path | None = None,
) -> Path:
    """The database the CLI uses without ``--db``.

    ``$AGENTCORE_HOME/agentcore.db`` when :data:`HOME_ENV` is set, else
    ``agentcore.db`` in :func:`user_data_dir`. Parameters as for
    :func:`user_data_dir`.
    """
    environ = os.environ if environ is None else environ
    custom = environ.get(HOME_ENV, "")
    if custom:
        return Path(custom).expanduser() / DB_FILENAME
    return user_data_dir(environ, platform, home) / DB_FILENAME
