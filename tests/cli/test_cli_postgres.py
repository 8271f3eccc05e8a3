"""``--db postgresql://...`` and ``$AGENTCORE_DB`` for chat and sessions, end to end."""

from __future__ import annotations

import json
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from agentcore.cli.database import PostgresUrl, parse_database

psycopg = pytest.importorskip("psycopg")


@pytest.fixture
def postgres_url(postgres_server_dsn: str) -> Iterator[str]:
    """A postgresql:// URL whose search_path is a new, empty schema, dropped after the test."""
    if not postgres_server_dsn.startswith(("postgresql://", "postgres://")):
        pytest.skip("the CLI takes PostgreSQL URLs; AGENTCORE_TEST_POSTGRES_DSN is not one")
    schema = f"agentcore_cli_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
    option = urllib.parse.quote(f"-csearch_path={schema}")
    separator = "&" if "?" in postgres_server_dsn else "?"
    try:
        yield f"{postgres_server_dsn}{separator}options={option}"
    finally:
        with psycopg.connect(postgres_server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _tables(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchone()
    return int(row[0])


def test_chat_and_sessions_on_postgres(
    run_cli: Any, openai_server: Any, require_openai_provider: None, postgres_url: str
) -> None:
    chat = ["chat", "--base-url", openai_server.base_url, "--db", postgres_url]
    first = run_cli(*chat, "--session", "pg1", input="hello\nsecond line\n")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0].startswith("You said: hello.")

    # A second process resumes the session from the server.
    resumed = run_cli(*chat, "--session", "pg1", input="third\n")
    assert resumed.returncode == 0, resumed.stderr
    assert len(openai_server.requests[-1]["messages"]) == 1 + 4 + 1  # system, history, new

    listed = run_cli("sessions", "list", "--db", postgres_url, "--json")
    assert listed.returncode == 0, listed.stderr
    assert [row["session"] for row in json.loads(listed.stdout)] == ["pg1"]

    shown = run_cli("sessions", "show", "pg1", "--db", postgres_url, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["slots"][0]["messages"] == 6

    exported = run_cli("sessions", "export", "pg1", "--db", postgres_url)
    texts = [json.loads(line)["content"][0]["text"] for line in exported.stdout.splitlines()]
    assert texts[0::2] == ["hello", "second line", "third"]


def test_agentcore_db_names_the_database(
    run_cli: Any, openai_server: Any, require_openai_provider: None, postgres_url: str
) -> None:
    env = {"AGENTCORE_DB": postgres_url}
    chat = run_cli("chat", "--base-url", openai_server.base_url, input="hi\n", env=env)
    assert chat.returncode == 0, chat.stderr
    listed = run_cli("sessions", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert [row["session"] for row in json.loads(listed.stdout)] == ["chat"]
    # --db wins over the variable.
    other = run_cli("sessions", "list", "--db", "missing.db", env=env)
    assert other.returncode == 1
    assert "no database at missing.db" in other.stderr


def test_sessions_never_create_tables_on_postgres(run_cli: Any, postgres_url: str) -> None:
    result = run_cli("sessions", "list", "--db", postgres_url)
    assert result.returncode == 1
    assert "holds no agentcore tables" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert _tables(postgres_url) == 0


def test_an_unreachable_server_is_one_line_without_the_password(
    run_cli: Any, tmp_path: Any
) -> None:
    url = f"postgresql://someone:s3cret-pw@/agentcore?host={tmp_path}"
    for args in (["sessions", "list", "--db", url], ["chat", "--db", url]):
        result = run_cli(*args, input="hi\n", env={"OPENAI_API_KEY": "sk-test"})
        assert result.returncode == 1
        assert "cannot connect" in result.stderr, result.stderr
        assert str(tmp_path) in result.stderr
        assert "s3cret-pw" not in result.stderr
        assert "Traceback" not in result.stderr


def test_database_values() -> None:
    assert parse_database("postgresql://u@h/db") == PostgresUrl("postgresql://u@h/db")
    assert parse_database("postgres://u@h/db") == PostgresUrl("postgres://u@h/db")
    assert str(parse_database("chat.db")) == "chat.db"
    assert str(PostgresUrl("postgresql://u:pw@h:5432/db?x=1")) == "postgresql://u:***@h:5432/db?x=1"
    assert str(PostgresUrl("postgresql://u@/db?host=/tmp")) == "postgresql://u@/db?host=/tmp"


def test_sessions_delete_on_postgres(
    run_cli: Any, openai_server: Any, require_openai_provider: None, postgres_url: str
) -> None:
    chat = ["chat", "--base-url", openai_server.base_url, "--db", postgres_url]
    for session in ("gone", "kept"):
        result = run_cli(*chat, "--session", session, input="hello\n")
        assert result.returncode == 0, result.stderr
    deleted = run_cli("sessions", "delete", "gone", "--db", postgres_url, "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert "deleted session 'gone' (2 messages)" in deleted.stderr
    listed = run_cli("sessions", "list", "--db", postgres_url, "--json")
    assert [row["session"] for row in json.loads(listed.stdout)] == ["kept"]
    again = run_cli("sessions", "delete", "gone", "--db", postgres_url, "--yes")
    assert again.returncode == 1
    assert "no session 'gone'" in again.stderr
