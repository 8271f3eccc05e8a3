"""Output closed early (``agentcore ... | head``) ends the command quietly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import RunCli, run_cli_process
from fake_openai import FakeOpenAIServer

from agentcore.cli.errors import EXIT_BROKEN_PIPE

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")


def _run_with_closed_stdout(
    args: list[str], env: dict[str, str], cwd: Path, input: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run the CLI with a stdout whose reader is already gone: every write fails with EPIPE."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return run_cli_process(args, input=input, env=env, cwd=cwd, stdout=write_end)
    finally:
        os.close(write_end)


def _quiet(result: subprocess.CompletedProcess[str]) -> None:
    assert result.stderr == "", result.stderr
    assert result.returncode == EXIT_BROKEN_PIPE


def test_one_shot_chat_into_a_closed_pipe_stores_the_turn(
    cli_env: dict[str, str],
    openai_server: FakeOpenAIServer,
    require_openai_provider: None,
    tmp_path: Path,
    run_cli: RunCli,
) -> None:
    db = tmp_path / "chat.db"
    args = ["chat", "--base-url", openai_server.base_url, "--db", str(db)]
    _quiet(_run_with_closed_stdout([*args, "--cid", "chat", "-p", "hello"], cli_env, tmp_path))
    _quiet(_run_with_closed_stdout(args, cli_env, tmp_path, input="one\ntwo\n"))
    exported = run_cli("sessions", "export", "chat", "--db", str(db))
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    # The replies were paid for, so they are stored even though nobody read them.
    assert [r["role"] for r in records] == ["user", "assistant"] * 2
    assert records[2]["content"][0]["text"] == "one"


@pytest.mark.parametrize(
    "command",
    [
        ["plugins"],
        ["sessions", "list"],
        ["sessions", "show", "chat"],
        ["sessions", "export", "chat"],
        ["chat", "--json", "-p", "hi"],
    ],
    ids=" ".join,
)
def test_every_command_into_a_closed_pipe(
    command: list[str],
    cli_env: dict[str, str],
    openai_server: FakeOpenAIServer,
    require_openai_provider: None,
    tmp_path: Path,
    run_cli: RunCli,
) -> None:
    db = tmp_path / "chat.db"
    base = ["--base-url", openai_server.base_url]
    assert run_cli("chat", *base, "--db", str(db), "--cid", "chat", "-p", "hello").returncode == 0
    args = [*command, "--db", str(db)] if command[0] != "plugins" else command
    if command[0] == "chat":
        args = [*command, *base, "--db", str(db)]
    _quiet(_run_with_closed_stdout(args, cli_env, tmp_path))
