from __future__ import annotations

import re

import pytest

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


def test_help_through_the_module(run_cli) -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("chat", "plugins", "sessions"):
        assert command in result.stdout
    # Without autosummary, its commands do not exist.
    assert not re.search(r"^ +demo ", result.stdout, re.M) and "(from autosummary)" not in (
        result.stdout
    )
    for command in (["demo"], ["sessions", "compact", "chat"]):
        missing = run_cli(*command)
        assert missing.returncode == 2 and "invalid choice: " in missing.stderr


def test_version(run_cli) -> None:
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
def test_bad_arguments_exit_2_with_usage(args: list[str], run_cli) -> None:
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
