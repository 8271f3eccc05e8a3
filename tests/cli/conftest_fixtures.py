"""Fixtures of the command-line tests: run the CLI as a user would, a fake OpenAI server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fake_openai import FakeOpenAIServer, fake_openai_server

RunCli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """An environment where the CLI's default database lives under tmp_path."""
    return base_cli_env(tmp_path)


def base_cli_env(tmp_path: Path) -> dict[str, str]:
    """What :func:`cli_env` returns, for conftest files that extend it."""
    env = dict(os.environ)
    env["AGENTCORE_HOME"] = str(tmp_path / "home")
    env["AGENTCORE_TIKTOKEN_TIMEOUT"] = "0"
    env["PYTHONIOENCODING"] = "utf-8"
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        env.pop(name, None)
    return env


@pytest.fixture
def run_cli(cli_env: dict[str, str], tmp_path: Path) -> RunCli:
    """Run ``python -m agentcore.cli ARGS`` in a subprocess, as a user would."""

    def run(
        *args: str, input: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agentcore.cli", *args],
            input=input if input is not None else "",
            capture_output=True,
            text=True,
            encoding="utf-8",
            env={**cli_env, **(env or {})},
            cwd=tmp_path,
            timeout=60,
        )

    return run


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with fake_openai_server() as server:
        yield server


@pytest.fixture
def require_openai_provider() -> None:
    """Skip while no plugin registers the built-in ``openai`` provider."""
    from agentcore.providers import available_providers

    if "openai" not in available_providers():
        pytest.skip("no provider is registered for 'openai' yet")
