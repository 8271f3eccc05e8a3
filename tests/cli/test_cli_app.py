from __future__ import annotations

import logging
import re
import sys

import pytest
from cli_runner import RunCli

from agentcore import __version__
from agentcore.cli import build_parser, main

COMMANDS = [
    [],
    ["chat"],
    ["plugins"],
    ["sessions"],
    ["sessions", "list"],
    ["sessions", "show"],
    ["sessions", "export"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "agentcore")
def test_help_on_every_command(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {' '.join(['agentcore', *command])}")


def test_help_lists_the_core_commands(run_cli: RunCli) -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("chat", "plugins", "sessions"):
        assert command in result.stdout
    # Without autosummary, its commands do not exist.
    assert not re.search(r"^ +demo ", result.stdout, re.M) and "(from autosummary)" not in (
        result.stdout
    )
    for plugin_command in (["demo"], ["sessions", "compact", "chat"]):
        missing = run_cli(*plugin_command)
        assert missing.returncode == 2 and "invalid choice: " in missing.stderr


def test_version(run_cli: RunCli) -> None:
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"agentcore {__version__}"


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["nope"],
        ["chat", "--model", "gpt-4o"],
        ["chat", "--trigger-ratio", "1.5"],
        ["sessions"],
        ["sessions", "show"],
        ["sessions", "export"],
        ["plugins", "--all"],
    ],
    ids=lambda a: " ".join(a) or "no arguments",
)
def test_bad_arguments_exit_2_with_usage(args: list[str], run_cli: RunCli) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("usage: agentcore")
    assert "error:" in result.stderr
    assert "Traceback" not in result.stderr


def test_every_subcommand_has_a_handler() -> None:
    parser = build_parser()
    for command in (["chat"], ["plugins"], ["sessions", "list"]):
        args = parser.parse_args(command)
        assert callable(args.handler)
    for command in (["sessions", "show", "x"], ["sessions", "export", "x"]):
        assert callable(parser.parse_args(command).handler)


def test_a_broken_plugin_is_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentcore.cli import plugins_command

    def broken(**kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'gone_plugin'")

    monkeypatch.setattr(plugins_command, "create_plugin_manager", broken)
    assert main(["plugins"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("agentcore plugins: error: cannot import a module")
    assert "AGENTCORE_DISABLED_PLUGINS" in err
    assert len(err.splitlines()) == 1


def test_main_runs_again_and_again_in_one_process(
    run_cli: RunCli, closed_port: int, require_openai_provider: None
) -> None:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    streams = sys.stdin, sys.stdout, sys.stderr
    chat = ["chat", "--base-url", f"http://127.0.0.1:{closed_port}/v1", "--max-retries", "1"]
    for _ in range(2):
        verbose = run_cli("-v", *chat, input="hi\n")
        assert verbose.returncode == 1 and "retrying" in verbose.stderr
        quiet = run_cli(*chat, input="hi\n")
        assert quiet.returncode == 1
        assert "retrying" not in quiet.stderr  # -v of the run before is gone
        assert run_cli("--version").returncode == 0
        assert run_cli("sessions").returncode == 2
    # Nothing of the runs is left on the process: log handlers, level, standard streams.
    assert (list(root.handlers), root.level) == (handlers, level)
    assert (sys.stdin, sys.stdout, sys.stderr) == streams
