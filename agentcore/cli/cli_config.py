"""The CLI's settings file (``config.json`` next to the default database): the default model."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from agentcore.cli.paths import PRIVATE_FILE_MODE, data_dir, make_private_dir

logger = logging.getLogger(__name__)

CONFIG_FILENAME = "config.json"
"""The settings file's name in the CLI's data folder."""

DEFAULT_MODEL_KEY = "default_model"
"""The setting ``agentcore models default NAME`` stores."""


def config_file() -> Path:
    """Where the settings are kept: ``config.json`` in the data folder."""
    return data_dir() / CONFIG_FILENAME


def load_config() -> dict[str, Any]:
    """The stored settings; ``{}`` when the file is missing or unreadable (with a warning)."""
    path = config_file()
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("ignoring %s: %s", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def save_config(settings: dict[str, Any]) -> Path:
    """Store ``settings`` (a private file, replaced atomically); return its path.

    :raises OSError: The file cannot be written.
    """
    path = config_file()
    make_private_dir(path.parent)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".config-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(settings, file, indent=2, ensure_ascii=False)
            file.write("\n")
        os.chmod(temporary, PRIVATE_FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return path


def stored_default_model() -> str | None:
    """The model ``agentcore models default NAME`` set, if any."""
    value = load_config().get(DEFAULT_MODEL_KEY)
    return value if isinstance(value, str) and value.strip() else None
