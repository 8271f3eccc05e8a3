"""Which session ``agentcore chat`` used last in each database, for ``--continue``."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

from agentcore.cli.database import Database
from agentcore.cli.paths import (
    LAST_SESSIONS_FILENAME,
    PRIVATE_FILE_MODE,
    data_dir,
    make_private_dir,
)

logger = logging.getLogger(__name__)


def _file() -> Path:
    return data_dir() / LAST_SESSIONS_FILENAME


def _load(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("ignoring %s: %s", path, exc)
        return {}
    if not isinstance(data, dict):
        return {}
    return {key: value for key, value in data.items() if isinstance(value, str)}


def last_session(db: Database) -> str | None:
    """The id of the session last chatted in within the database ``db``, if any."""
    return _load(_file()).get(_key(db))


def remember_session(db: Database, session_id: str) -> None:
    """Record ``session_id`` as the last one of ``db`` (a private file, replaced atomically)."""
    path = _file()
    entries = _load(path)
    key = _key(db)
    if entries.get(key) == session_id:
        return
    entries[key] = session_id
    try:
        make_private_dir(path.parent)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".last_sessions-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(entries, file, indent=2, ensure_ascii=False)
            os.chmod(temporary, PRIVATE_FILE_MODE)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        logger.warning("could not record the last session in %s: %s", path, exc)


def _key(db: Database) -> str:
    """The key of ``db`` in the file: a resolved path, or the URL with its password hidden."""
    return str(db.resolve()) if isinstance(db, Path) else str(db)
