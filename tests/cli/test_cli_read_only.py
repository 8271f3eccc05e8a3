"""A database file or folder this process may not write is named as such, never "not a database".

Two ways in. Where the file system can refuse this process (``chmod`` for a
user, ``chattr +i`` for root, who ignores permissions), the commands meet the
real refusal. Everywhere (CI runs as root, maybe without ``chattr``), the
errors SQLite raises for each refusal are injected into the commands' own
SQLite calls and must give the same messages: SQLITE_READONLY_DIRECTORY for a
folder where the ``-wal`` and ``-shm`` files cannot be created,
SQLITE_READONLY for a file that cannot be written, SQLITE_CANTOPEN for a
folder that cannot be written even by root, and the bare texts Python 3.10's
sqlite3 gives, without a code.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import RunCli
from fake_openai import FakeOpenAIServer

from agentcore import Agent, AgentBuilder, AgentSession, SqliteStore
from agentcore.testing import MockProvider

NOT_A_DATABASE = "is not an SQLite database"


async def _fill(path: Path) -> None:
    store = SqliteStore(path)
    bundle = AgentBuilder().provider(MockProvider(["hi"])).store(store).load_plugins(False).build()
    await AgentSession(Agent("a"), "s1", bundle).submit_turn("hello")
    await store.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "sessions.db"
    asyncio.run(_fill(path))
    assert sorted(p.name for p in folder.iterdir()) == ["sessions.db"]  # no -wal, no -shm
    return path


def _chat(run_cli: RunCli, server: FakeOpenAIServer, db: Path) -> Any:
    return run_cli("chat", "--base-url", server.base_url, "--db", str(db), "--session", "s1", "hi")


def _names_the_folder(stderr: str, folder: Path) -> None:
    assert f"the folder {folder} is read-only" in stderr
    assert "permission denied" in stderr
    assert NOT_A_DATABASE not in stderr
    assert "Traceback" not in stderr


def _names_the_file(stderr: str, path: Path) -> None:
    assert f"{path} is read-only" in stderr
    assert "permission denied" in stderr
    assert NOT_A_DATABASE not in stderr
    assert "Traceback" not in stderr


# -- the file system refuses -------------------------------------------------------


@pytest.mark.parametrize("command", [["list"], ["show", "s1"], ["delete", "s1", "--yes"]])
def test_a_database_in_a_read_only_folder(
    run_cli: RunCli, db: Path, read_only: Callable[[Path], None], command: list[str]
) -> None:
    before = db.read_bytes()
    read_only(db.parent)
    result = run_cli("sessions", *command, "--db", str(db))
    assert result.returncode == 1
    _names_the_folder(result.stderr, db.parent)
    assert db.read_bytes() == before


def test_chat_with_a_database_in_a_read_only_folder(
    run_cli: RunCli,
    db: Path,
    read_only: Callable[[Path], None],
    openai_server: FakeOpenAIServer,
    require_openai_provider: None,
) -> None:
    read_only(db.parent)
    result = _chat(run_cli, openai_server, db)
    assert result.returncode == 1
    _names_the_folder(result.stderr, db.parent)
    assert openai_server.requests == []


def test_a_read_only_database_file_is_read_but_not_written(
    run_cli: RunCli,
    db: Path,
    read_only: Callable[[Path], None],
    openai_server: FakeOpenAIServer,
    require_openai_provider: None,
) -> None:
    before = db.read_bytes()
    read_only(db)
    listed = run_cli("sessions", "list", "--db", str(db))
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].split()[0] == "s1"

    deleted = run_cli("sessions", "delete", "s1", "--db", str(db), "--yes")
    assert deleted.returncode == 1
    _names_the_file(deleted.stderr, db)

    chat = _chat(run_cli, openai_server, db)
    assert chat.returncode == 1
    assert f"{db} is read-only" in chat.stderr
    assert openai_server.requests == []
    assert db.read_bytes() == before


def test_a_folder_that_cannot_be_entered(run_cli: RunCli, db: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root enters any folder")
    db.parent.chmod(0o600)
    try:
        result = run_cli("sessions", "list", "--db", str(db))
    finally:
        db.parent.chmod(0o700)
    assert result.returncode == 1
    assert "Permission denied" in result.stderr and str(db.parent) in result.stderr
    assert "Traceback" not in result.stderr


# -- SQLite's own errors, injected: these run as root too -----------------------------


def _error(text: str, code: int | None, name: str | None) -> sqlite3.OperationalError:
    """The exception sqlite3 raises: on Python 3.11+ with SQLite's error code and name."""
    error = sqlite3.OperationalError(text)
    if code is not None:
        error.sqlite_errorcode = code  # type: ignore[attr-defined]
        error.sqlite_errorname = name  # type: ignore[attr-defined]
    return error


READONLY_DIRECTORY = ("attempt to write a readonly database", 1544, "SQLITE_READONLY_DIRECTORY")
READONLY = ("attempt to write a readonly database", 8, "SQLITE_READONLY")
CANTOPEN = ("unable to open database file", 14, "SQLITE_CANTOPEN")


def _real_readonly_error(tmp_path: Path) -> sqlite3.OperationalError:
    """SQLite's own error for a write to a file it opened read-only."""
    path = tmp_path / "probe.db"
    sqlite3.connect(path).close()
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        conn.execute("CREATE TABLE t (x)")
    except sqlite3.OperationalError as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError("a read-only connection wrote")


@pytest.fixture
def inject(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path, sqlite3.Error, str], None]:
    """Make SQLite raise ``error`` on the first statement ``sql`` starts with, for ``db``."""

    def arm(db: Path, error: sqlite3.Error, sql: str) -> None:
        real_connect = sqlite3.connect

        class Refusing(sqlite3.Connection):
            def execute(self, statement: str, *args: Any) -> sqlite3.Cursor:
                if statement.lstrip().upper().startswith(sql):
                    raise error
                return super().execute(statement, *args)

        def connect(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
            if str(db.name) in os.fspath(database):
                kwargs["factory"] = Refusing
            conn: sqlite3.Connection = real_connect(database, *args, **kwargs)
            return conn

        monkeypatch.setattr(sqlite3, "connect", connect)

    return arm


@pytest.mark.parametrize("command", [["list"], ["show", "s1"], ["delete", "s1", "--yes"]])
def test_sqlites_read_only_folder_error(
    run_cli: RunCli, db: Path, inject: Callable[..., None], command: list[str]
) -> None:
    inject(db, _error(*READONLY_DIRECTORY), "SELECT")
    result = run_cli("sessions", *command, "--db", str(db))
    assert result.returncode == 1
    _names_the_folder(result.stderr, db.parent)
    assert "SQLite must create sessions.db-wal and sessions.db-shm" in result.stderr


def test_sqlites_read_only_folder_error_in_chat(
    run_cli: RunCli,
    db: Path,
    inject: Callable[..., None],
    openai_server: FakeOpenAIServer,
    require_openai_provider: None,
) -> None:
    inject(db, _error(*READONLY_DIRECTORY), "PRAGMA SCHEMA_VERSION")
    result = _chat(run_cli, openai_server, db)
    assert result.returncode == 1
    _names_the_folder(result.stderr, db.parent)
    assert openai_server.requests == []


def test_sqlites_read_only_file_error(
    run_cli: RunCli, db: Path, inject: Callable[..., None], tmp_path: Path
) -> None:
    error = _real_readonly_error(tmp_path)
    assert "readonly database" in str(error)
    inject(db, error, "DELETE")
    result = run_cli("sessions", "delete", "s1", "--db", str(db), "--yes")
    assert result.returncode == 1
    _names_the_file(result.stderr, db)
    assert "s1" in run_cli("sessions", "list", "--db", str(db)).stdout  # nothing deleted


@pytest.mark.parametrize("code", [True, False], ids=["python3.11", "python3.10"])
@pytest.mark.parametrize("error", [READONLY, CANTOPEN], ids=["readonly", "cantopen"])
def test_a_folder_the_file_system_calls_read_only(
    run_cli: RunCli,
    db: Path,
    inject: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
    error: tuple[str, int, str],
    code: bool,
) -> None:
    # What root meets in a folder made immutable, and what Python 3.10 says anywhere:
    # SQLite's code does not name the folder, the file system does.
    text, number, name = error
    inject(db, _error(text, number if code else None, name), "SELECT")
    folder = str(db.parent)
    real_access = os.access

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if os.fspath(path) == folder and mode & os.W_OK:
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)  # the module the store's checks call
    result = run_cli("sessions", "list", "--db", str(db))
    assert result.returncode == 1
    _names_the_folder(result.stderr, db.parent)


def test_a_file_that_is_not_a_database_is_still_named_so(run_cli: RunCli, tmp_path: Path) -> None:
    bogus = tmp_path / "notes.db"
    bogus.write_text("not sqlite at all " * 100)
    result = run_cli("sessions", "list", "--db", str(bogus))
    assert result.returncode == 1
    assert NOT_A_DATABASE in result.stderr
    assert "read-only" not in result.stderr
