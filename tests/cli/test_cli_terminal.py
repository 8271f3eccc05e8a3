"""``agentcore chat`` at a terminal: line editing, history, the waiting indicator, Ctrl-D."""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import RunCli
from fake_openai import FakeOpenAIServer
from pty_session import PtySession

from agentcore.cli.console import WAITING

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")


@pytest.fixture
def chat_at_terminal(
    cli_env: dict[str, str],
    openai_server: FakeOpenAIServer,
    require_openai_provider: None,
    tmp_path: Path,
) -> Iterator[PtySession]:
    env = {**cli_env, "TERM": "xterm", "INPUTRC": "/dev/null"}
    argv = [sys.executable, "-m", "agentcore", "chat", "--base-url", openai_server.base_url]
    argv += ["--db", str(tmp_path / "chat.db")]
    session = PtySession(argv, env, str(tmp_path))
    try:
        yield session
    finally:
        session.kill()


def _stored_user_texts(run_cli: RunCli, db: Path) -> list[str]:
    exported = run_cli("sessions", "export", "chat", "--db", str(db))
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    return [r["content"][0]["text"] for r in records if r["role"] == "user"]


def test_arrow_keys_edit_the_line_and_ctrl_d_ends_on_its_own_line(
    chat_at_terminal: PtySession, run_cli: RunCli, tmp_path: Path
) -> None:
    chat = chat_at_terminal
    chat.read_until(b"> ")
    chat.send(b"abc\x1b[DX\r")  # left arrow, then X: "abXc"
    chat.read_until(b"You said: abXc.")
    chat.read_until(b"> ")
    chat.send(b"\x04")  # Ctrl-D on an empty line
    assert chat.finish() == 0
    assert chat.text().endswith("> \r\n")  # the shell's prompt starts on a new line
    assert _stored_user_texts(run_cli, tmp_path / "chat.db") == ["abXc"]


def test_history_is_kept_in_a_private_file(
    chat_at_terminal: PtySession, run_cli: RunCli, tmp_path: Path
) -> None:
    chat = chat_at_terminal
    chat.read_until(b"> ")
    chat.send(b"remember me\r")
    chat.read_until(b"> ")
    chat.send(b"\x04")
    assert chat.finish() == 0
    history = tmp_path / "home" / "chat_history"
    assert "remember me" in history.read_text("utf-8")
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert stat.S_IMODE(history.parent.stat().st_mode) == 0o700


def test_the_previous_line_comes_back_with_the_up_arrow(
    cli_env: dict[str, str],
    openai_server: FakeOpenAIServer,
    require_openai_provider: None,
    tmp_path: Path,
    run_cli: RunCli,
) -> None:
    env = {**cli_env, "TERM": "xterm", "INPUTRC": "/dev/null"}
    argv = [sys.executable, "-m", "agentcore", "chat", "--base-url", openai_server.base_url]
    argv += ["--db", str(tmp_path / "chat.db")]
    for keys in (b"first question\r", b"\x1b[A again\r"):  # up arrow: the last line
        chat = PtySession(argv, env, str(tmp_path))
        try:
            chat.read_until(b"> ")
            chat.send(keys)
            chat.read_until(b"> ")
            chat.send(b"\x04")
            assert chat.finish() == 0
        finally:
            chat.kill()
    assert _stored_user_texts(run_cli, tmp_path / "chat.db") == [
        "first question",
        "first question again",
    ]


def test_waiting_indicator_only_on_a_terminal(chat_at_terminal: PtySession) -> None:
    chat = chat_at_terminal
    chat.read_until(b"> ")
    chat.send(b"hello\r")
    shown = chat.read_until(b"You said: hello.")
    assert WAITING.encode() in shown
    # Erased before the reply: a carriage return, blanks, a carriage return.
    assert b"\r" + b" " * len(WAITING) + b"\rYou said" in shown
    chat.read_until(b"> ")
    chat.send(b"\x04")
    assert chat.finish() == 0


def test_ctrl_c_while_reading_leaves_the_terminal_usable(chat_at_terminal: PtySession) -> None:
    import os
    import signal
    import termios
    import time

    chat = chat_at_terminal
    cooked = termios.tcgetattr(chat.master)[3] & (termios.ECHO | termios.ICANON)
    chat.read_until(b"> ")
    deadline = time.monotonic() + 10
    while termios.tcgetattr(chat.master)[3] & termios.ICANON and time.monotonic() < deadline:
        time.sleep(0.05)  # until readline has switched the terminal to raw mode
    os.kill(chat.process.pid, signal.SIGINT)
    code = chat.wait(timeout=60)
    assert code == 130, f"exit code {code}; the chat wrote: {chat.text()!r}"
    # Echo and line mode are back, as the shell expects them.
    modes = termios.tcgetattr(chat.master)[3] & (termios.ECHO | termios.ICANON)
    assert modes == cooked, f"terminal left in modes {modes:#o}; the chat wrote: {chat.text()!r}"
