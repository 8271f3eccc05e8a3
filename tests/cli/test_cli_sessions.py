from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path

import pytest
from cli_runner import RunCli
from fake_openai import FakeOpenAIServer

from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, SqliteStore
from agentcore.serialization import message_from_dict
from agentcore.testing import MockProvider

SUMMARY = "Ada asked about backups.\nThe assistant suggested nightly copies."


async def _fill(path: Path) -> None:
    store = SqliteStore(path)
    provider = MockProvider(responder=lambda request: f"reply to {request.messages[-1].text}")
    bundle = AgentBuilder().provider(provider).store(store).load_plugins(False).build()
    session = AgentSession(
        Agent("helper", system_prompt="Be brief."), "s1", bundle, FocusedConfig()
    )
    for text in ("hello", "backups?", "how often?"):
        await session.submit_turn(text)
    await session.set_mode(FocusedConfig(summary_override=SUMMARY, summary_covers=4))
    await session.create_slot("notes", switch=True)
    await session.submit_turn("a note with ünïcödé")
    await session.set_session_data("conversation_summary", SUMMARY)
    other = AgentSession(Agent("helper"), "s2", bundle)
    await other.submit_turn("second session")
    await store.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "sessions.db"
    asyncio.run(_fill(path))
    return path


def test_list(run_cli: RunCli, db: Path) -> None:
    result = run_cli("sessions", "list", "--db", str(db))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["SESSION", "TURNS", "SLOTS", "MESSAGES", "COVERED"]
    assert lines[1].split() == ["s1", "4", "2", "8", "0..3"]
    assert lines[2].split() == ["s2", "1", "1", "2", "-"]


def test_list_json(run_cli: RunCli, db: Path) -> None:
    result = run_cli("sessions", "list", "--db", str(db), "--json")
    rows = json.loads(result.stdout)
    assert rows[0] == {"session": "s1", "turns": 4, "slots": 2, "messages": 8, "covered": 4}


def test_show(run_cli: RunCli, db: Path) -> None:
    result = run_cli("sessions", "show", "s1", "--db", str(db))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "turns         4" in out
    assert "current slot  notes" in out
    assert "slot default\n  mode            focused\n  messages        6" in out
    assert "summary_covers  messages 0..3" in out
    assert "Ada asked about backups." in out and "nightly copies." in out
    assert "slot notes (current)\n  mode            full\n  messages        2" in out
    assert "turn: " in out and "total: " in out
    assert "conversation_summary" in out


def test_show_json(run_cli: RunCli, db: Path) -> None:
    result = run_cli("sessions", "show", "s1", "--db", str(db), "--json")
    report = json.loads(result.stdout)
    assert report["session"] == "s1"
    assert report["turn_index"] == 4
    assert report["current_slot"] == "notes"
    default, notes = report["slots"]
    assert default["id"] == "default" and default["summary_covers"] == 4
    assert default["summary_override"] == SUMMARY and default["current"] is False
    assert notes["mode"] == "full" and notes["summary_override"] is None
    assert notes["current"] is True
    assert report["cost"]["total"]["total_tokens"] > 0
    assert report["data"] == {"conversation_summary": SUMMARY}


def test_show_finds_where_something_was_said(run_cli: RunCli, db: Path) -> None:
    result = run_cli("sessions", "show", "s1", "--db", str(db), "--find", "how often backups")
    assert result.returncode == 0, result.stderr
    found = result.stdout.split("\nfound 'how often backups'\n")[1].splitlines()
    # Summarized messages are found too (the summary covers messages 0..3).
    assert "  turn 2  slot default  message 4  user: how often?" in found
    assert "  turn 1  slot default  message 2  user: backups?" in found
    report = json.loads(
        run_cli("sessions", "show", "s1", "--db", str(db), "--find", "ünïcödé", "--json").stdout
    )
    assert report["found"][0]["slot"] == "notes" and report["found"][0]["turn"] == 3
    nothing = run_cli("sessions", "show", "s1", "--db", str(db), "--find", "zebra")
    assert nothing.stdout.endswith("found 'zebra'\n  (no stored message matches)\n")
    bad = run_cli("sessions", "show", "s1", "--db", str(db), "--find", "x", "--limit", "0")
    assert bad.returncode != 0 and "limit from 1 to 100" in bad.stderr


def test_export_jsonl(run_cli: RunCli, db: Path) -> None:
    result = run_cli("sessions", "export", "s1", "--db", str(db))
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["slot"], r["index"]) for r in records] == [("default", i) for i in range(6)] + [
        ("notes", 0),
        ("notes", 1),
    ]
    first = {key: value for key, value in records[0].items() if key not in ("slot", "index")}
    assert message_from_dict(first).text == "hello"
    assert records[6]["content"][0]["text"] == "a note with ünïcödé"


def test_export_one_slot(run_cli: RunCli, db: Path) -> None:
    result = run_cli("sessions", "export", "s1", "--slot", "notes", "--db", str(db))
    assert [json.loads(line)["slot"] for line in result.stdout.splitlines()] == ["notes"] * 2


def test_export_unknown_slot(run_cli: RunCli, db: Path) -> None:
    result = run_cli("sessions", "export", "s1", "--slot", "nope", "--db", str(db))
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "agentcore sessions export: error: session 's1' has no slot 'nope' (slots: default, notes)"
    )


@pytest.mark.parametrize("command", ["show", "export"])
def test_unknown_session_exits_1(run_cli: RunCli, db: Path, command: str) -> None:
    result = run_cli("sessions", command, "nope", "--db", str(db))
    assert result.returncode == 1
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert "no session 'nope'" in result.stderr


@pytest.mark.parametrize("command", [["list"], ["show", "s1"], ["export", "s1"]])
def test_missing_database_exits_1_and_is_not_created(
    run_cli: RunCli, tmp_path: Path, command: list[str]
) -> None:
    missing = tmp_path / "missing.db"
    result = run_cli("sessions", *command, "--db", str(missing))
    assert result.returncode == 1
    assert f"no database at {missing}" in result.stderr
    assert "Traceback" not in result.stderr
    assert not missing.exists()


def test_default_database_comes_from_agentcore_home(
    run_cli: RunCli, db: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    db.rename(home / "agentcore.db")
    result = run_cli("sessions", "list", "--json")
    assert result.returncode == 0, result.stderr
    assert [row["session"] for row in json.loads(result.stdout)] == ["s1", "s2"]


def test_not_a_database(run_cli: RunCli, tmp_path: Path) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("not sqlite at all " * 100)
    result = run_cli("sessions", "list", "--db", str(bogus))
    assert result.returncode == 1
    assert "is not an SQLite database" in result.stderr
    assert "Traceback" not in result.stderr


def test_empty_database(run_cli: RunCli, tmp_path: Path) -> None:
    path = tmp_path / "empty.db"

    async def create() -> None:
        await SqliteStore(path).close()

    asyncio.run(create())
    result = run_cli("sessions", "list", "--db", str(path))
    assert result.returncode == 0
    assert result.stdout == ""
    assert "no sessions in" in result.stderr


@pytest.mark.parametrize("command", [["list"], ["show", "s1"], ["export", "s1"]])
def test_an_empty_file_is_read_not_written(
    run_cli: RunCli, tmp_path: Path, command: list[str]
) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    result = run_cli("sessions", *command, "--db", str(empty))
    assert "Traceback" not in result.stderr
    if command == ["list"]:
        assert result.returncode == 0
        assert "no sessions in" in result.stderr
    else:
        assert result.returncode == 1
        assert "no session 's1'" in result.stderr
    assert empty.stat().st_size == 0  # no schema was written into it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"]  # no -wal, no -shm


def test_an_sqlite_file_of_another_program_is_not_written(run_cli: RunCli, tmp_path: Path) -> None:
    import sqlite3

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()
    before = other.read_bytes()
    result = run_cli("sessions", "list", "--db", str(other))
    assert result.returncode == 1
    assert "is not an agentcore database" in result.stderr
    assert other.read_bytes() == before


def test_delete(run_cli: RunCli, db: Path) -> None:
    result = run_cli("sessions", "delete", "s1", "--db", str(db), "--yes")
    assert result.returncode == 0, result.stderr
    assert "deleted session 's1' (8 messages)" in result.stderr
    listed = json.loads(run_cli("sessions", "list", "--db", str(db), "--json").stdout)
    assert [row["session"] for row in listed] == ["s2"]
    assert run_cli("sessions", "show", "s1", "--db", str(db)).returncode == 1
    exported = run_cli("sessions", "export", "s2", "--db", str(db))
    assert len(exported.stdout.splitlines()) == 2  # the other session is untouched

    again = run_cli("sessions", "delete", "s1", "--db", str(db), "--yes")
    assert again.returncode == 1
    assert "no session 's1'" in again.stderr


def test_delete_asks_first(run_cli: RunCli, db: Path) -> None:
    refused = run_cli("sessions", "delete", "s1", "--db", str(db), input="y\n")
    assert refused.returncode == 2  # stdin is not a terminal: --yes is required
    assert "needs --yes" in refused.stderr
    listed = json.loads(run_cli("sessions", "list", "--db", str(db), "--json").stdout)
    assert [row["session"] for row in listed] == ["s1", "s2"]


def test_delete_at_a_terminal(
    cli_env: dict[str, str], db: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    import sys

    from pty_session import PtySession

    argv = [sys.executable, "-m", "agentcore", "sessions", "delete", "s2", "--db", str(db)]
    for answer, code, left in ((b"n\r", 1, ["s1", "s2"]), (b"y\r", 0, ["s1"])):
        terminal = PtySession(argv, cli_env, str(tmp_path))
        try:
            terminal.read_until(b"delete session 's2' and its 2 messages? [y/N] ")
            terminal.send(answer)
            assert terminal.finish() == code
        finally:
            terminal.kill()
        listed = json.loads(run_cli("sessions", "list", "--db", str(db), "--json").stdout)
        assert [row["session"] for row in listed] == left


def test_messages_keep_their_time_and_model(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> None:
    db = tmp_path / "times.db"
    chat = ["chat", "--base-url", openai_server.base_url, "--db", str(db), "--cid", "t"]
    assert run_cli(*chat, "-p", "first").returncode == 0
    assert run_cli(*chat, "-m", "openai:gpt-4o", "-p", "second").returncode == 0

    shown = json.loads(run_cli("sessions", "show", "t", "--db", str(db), "--json").stdout)
    [slot] = shown["slots"]
    records = slot["message_log"]
    assert [r["index"] for r in records] == [0, 1, 2, 3]
    assert [r["model"] for r in records] == ["openai:gpt-4o-mini"] * 2 + ["openai:gpt-4o"] * 2
    times = [datetime.fromisoformat(r["at"]) for r in records]
    assert all(t.tzinfo is not None for t in times)
    assert times == sorted(times)
    assert slot["models"] == ["openai:gpt-4o", "openai:gpt-4o-mini"]
    assert slot["first_message_at"] == records[0]["at"]
    assert slot["last_message_at"] == records[-1]["at"]
    text = run_cli("sessions", "show", "t", "--db", str(db)).stdout
    assert f"  last message    {records[-1]['at']}" in text
    assert "  models          openai:gpt-4o, openai:gpt-4o-mini" in text
