"""Fixtures of the command-line tests: run the CLI as a user would, a fake OpenAI server."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from cli_runner import CliResult, RunCli
from cli_runner import run_cli as run_cli_in_process
from fake_openai import FakeOpenAIServer, fake_openai_server


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
    """Run ``agentcore ARGS`` in this process, in ``tmp_path`` with :func:`cli_env`.

    The command gets its own stdin (``input``, never a terminal), stdout, stderr,
    environment and working directory, as a process would; see ``cli_runner``.
    """

    def run(
        *args: str, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> CliResult:
        return run_cli_in_process(
            args, input=input or "", env={**cli_env, **(env or {})}, cwd=tmp_path
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
