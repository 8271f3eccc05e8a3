"""The CLI's files are private to the user, and data never prints terminal control bytes."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path

import pytest
from cli_runner import RunCli
from fake_openai import FakeOpenAIServer

from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, SqliteStore
from agentcore.cli.text import dumps, printable
from agentcore.testing import MockProvider

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")

EVIL_ID = "evil\x1b[2J\x07\x9b31m"
EVIL_SUMMARY = "Cleared \x1b[2Jthe screen\x07 and\rrewrote the line\x1b]0;title\x07."
CONTROL_BYTES = ("\x1b", "\x07", "\r", "\x9b")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_data_folder_0700_and_files_0600(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    previous = os.umask(0o022)  # a usual umask, which would give 0755 and 0644
    try:
        result = run_cli("chat", "--base-url", openai_server.base_url, "-p", "hi")
    finally:
        os.umask(previous)
    assert result.returncode == 0, result.stderr
    assert _mode(home) == 0o700
    created = sorted(path.name for path in home.iterdir())
    assert "agentcore.db" in created and "last_sessions.json" in created
    for path in home.iterdir():
        assert _mode(path) == 0o600, (path.name, oct(_mode(path)))

    nested = tmp_path / "a" / "b" / "chat.db"
    result = run_cli("chat", "--base-url", openai_server.base_url, "-p", "hi", "--db", str(nested))
    assert result.returncode == 0, result.stderr
    assert _mode(tmp_path / "a") == 0o700 and _mode(tmp_path / "a" / "b") == 0o700
    assert all(_mode(path) == 0o600 for path in nested.parent.iterdir())


async def _evil_session(path: Path) -> None:
    store = SqliteStore(path)
    provider = MockProvider(responder=lambda request: "reply \x1b[31mred\x1b[0m\x07")
    bundle = AgentBuilder().provider(provider).store(store).load_plugins(False).build()
    session = AgentSession(Agent("a", system_prompt="x"), EVIL_ID, bundle, FocusedConfig())
    await session.submit_turn("hello \x1b[A")
    await session.set_mode(FocusedConfig(summary_override=EVIL_SUMMARY, summary_covers=2))
    await session.set_session_data("note\x1b[1m", "bold \x1b[1m\x9b")
    await store.close()


@pytest.mark.parametrize(
    "command",
    [
        ["sessions", "list"],
        ["sessions", "list", "--json"],
        ["sessions", "show", EVIL_ID],
        ["sessions", "show", EVIL_ID, "--json"],
        ["sessions", "export", EVIL_ID],
        ["sessions", "show", "nope\x1b[2J"],
        ["sessions", "delete", EVIL_ID, "--yes"],
    ],
    ids=lambda c: " ".join(printable(a, multiline=False) for a in c),
)
def test_control_characters_from_data_are_escaped(
    run_cli: RunCli, tmp_path: Path, command: list[str]
) -> None:
    db = tmp_path / "evil.db"
    asyncio.run(_evil_session(db))
    result = run_cli(*command, "--db", str(db))
    for stream in (result.stdout, result.stderr):
        for byte in CONTROL_BYTES:
            assert byte not in stream, (byte, stream)
    if "--json" in command:
        data = json.loads(result.stdout)  # still valid JSON with the same data
        text = json.dumps(data)
        assert "evil\\u001b[2J\\u0007\\u009b31m" in text
    elif command[1] == "show" and result.returncode == 0:
        assert "Cleared \\x1b[2Jthe screen\\x07 and\\rrewrote" in result.stdout
        assert "evil\\x1b[2J\\x07\\x9b31m" in result.stdout


def test_replies_are_printed_without_control_characters(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> None:
    # The fake server echoes the prompt, so the reply holds what the prompt held.
    args = ["chat", "--base-url", openai_server.base_url, "--db", str(tmp_path / "c.db")]
    result = run_cli(*args, "-p", "ring \x07 and \x1b]0;pwned\x07 title")
    assert result.returncode == 0, result.stderr
    assert "\x07" not in result.stdout and "\x1b" not in result.stdout
    assert "ring \\x07 and \\x1b]0;pwned\\x07 title" in result.stdout


def test_typed_control_characters_never_reach_the_model(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> None:
    args = ["chat", "--base-url", openai_server.base_url, "--db", str(tmp_path / "c.db")]
    result = run_cli(*args, input="abc\x1b[DX\tend\n")
    assert result.returncode == 0, result.stderr
    sent = openai_server.requests[-1]["messages"][-1]["content"]
    assert sent == "abc[DX\tend"


def test_printable_and_dumps() -> None:
    assert printable("a\tb\nc\x1b") == "a\tb\nc\\x1b"
    assert printable("a\nb", multiline=False) == "a\\nb"
    assert printable("ünïcödé 摘要") == "ünïcödé 摘要"
    assert json.loads(dumps({"k": "\x9b\x1b\u2028"})) == {"k": "\x9b\x1b\u2028"}
    assert "\x9b" not in dumps({"k": "\x9b"})
