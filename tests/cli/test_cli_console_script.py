"""The installed ``agentcore`` console script runs the same command line."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_cli_process

SCRIPT = shutil.which("agentcore")

pytestmark = pytest.mark.skipif(SCRIPT is None, reason="the agentcore script is not on PATH")


def _run(cli_env: dict[str, str], tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert SCRIPT is not None
    return run_cli_process(args, env=cli_env, cwd=tmp_path, command=[SCRIPT])


def test_console_script(cli_env: dict[str, str], tmp_path: Path) -> None:
    version = _run(cli_env, tmp_path, "--version")
    assert version.returncode == 0
    assert version.stdout.startswith("agentcore ")

    # The exit code main() returns is the script's (what each command does is tested
    # in this process, through the same main()).
    usage = _run(cli_env, tmp_path, "sessions", "show")
    assert usage.returncode == 2
    assert usage.stderr.startswith("usage: agentcore sessions show")
