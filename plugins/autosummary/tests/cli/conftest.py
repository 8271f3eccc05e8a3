"""The fixtures of the plugin's command-line tests: the core's CLI fixtures, shared."""

from __future__ import annotations

import sys
from pathlib import Path

CORE_CLI_TESTS = Path(__file__).resolve().parents[4] / "tests" / "cli"
sys.path.insert(0, str(CORE_CLI_TESTS))

# The core's CLI tests hold the fixtures (run_cli, openai_server...) and the fake server.
from conftest_fixtures import (  # noqa: E402
    cli_env,
    closed_port,
    openai_server,
    require_openai_provider,
    run_cli,
)

__all__ = ["cli_env", "closed_port", "openai_server", "require_openai_provider", "run_cli"]
