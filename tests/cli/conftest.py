"""The core's CLI tests run the command line as without autosummary installed.

The fixtures live in conftest_fixtures.py, shared with the plugins' CLI tests; here
``cli_env`` (for subprocesses) and the test process's environment block the
autosummary plugin, so these tests see the core's commands alone whatever is
installed. The plugin's commands are tested in plugins/autosummary/tests/cli.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest_fixtures import (
    base_cli_env,
    closed_port,
    openai_server,
    require_openai_provider,
    run_cli,
)

from agentcore.plugins import DISABLED_PLUGINS_ENV

__all__ = ["cli_env", "closed_port", "openai_server", "require_openai_provider", "run_cli"]

WITHOUT_PLUGINS = "autosummary"
"""The plugins blocked in the core's CLI tests."""


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """The shared environment, with the autosummary plugin blocked."""
    env = base_cli_env(tmp_path)
    env[DISABLED_PLUGINS_ENV] = WITHOUT_PLUGINS
    return env


@pytest.fixture(autouse=True)
def _core_alone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Block the plugin for commands run in this process (``main([...])``)."""
    monkeypatch.setenv(DISABLED_PLUGINS_ENV, WITHOUT_PLUGINS)
    yield
