"""What chat CLIs taught users to expect: one-shot prompts, --continue, --json, --no-stream,
multi-line input, an up-front missing-key message and ``python -m agentcore``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_runner import RunCli, run_cli_process
from fake_openai import FakeOpenAIServer

from agentcore import __version__


@pytest.fixture
def chat_args(
    openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> list[str]:
    return [
        "chat",
        "--base-url",
        openai_server.base_url,
        "--db",
        str(tmp_path / "chat.db"),
    ]


def _user_texts(run_cli: RunCli, db: Path, session: str) -> list[str]:
    exported = run_cli("sessions", "export", session, "--db", str(db))
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    return [r["content"][0]["text"] for r in records if r["role"] == "user"]


def test_one_shot_prompt_argument(
    run_cli: RunCli, chat_args: list[str], openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    result = run_cli(*chat_args, "What is WAL?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("You said: What is WAL?.")
    assert len(result.stdout.splitlines()) == 1
    assert result.stderr == ""  # no meter, no notes: just the answer
    assert len(openai_server.requests) == 1
    listed = run_cli("sessions", "list", "--json", "--db", str(tmp_path / "chat.db"))
    [session] = [row["session"] for row in json.loads(listed.stdout)]
    assert session.startswith("chat-")
    assert _user_texts(run_cli, tmp_path / "chat.db", session) == ["What is WAL?"]


def test_each_one_shot_prompt_is_a_new_session(
    run_cli: RunCli, chat_args: list[str], openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    sessions = []
    for prompt in ("first question", "second question", "third question"):
        result = run_cli(*chat_args, "--json", "-p", prompt)
        assert result.returncode == 0, result.stderr
        sessions.append(json.loads(result.stdout)["session"])
    assert len(set(sessions)) == 3
    # Each prompt went alone with the system prompt, as a new conversation.
    assert [len(r["messages"]) for r in openai_server.requests] == [2, 2, 2]
    listed = run_cli("sessions", "list", "--json", "--db", str(tmp_path / "chat.db"))
    assert sorted(row["session"] for row in json.loads(listed.stdout)) == sorted(sessions)

    # -c continues the last one-shot session; --cid chooses one.
    result = run_cli(*chat_args, "--json", "-c", "-p", "a follow-up")
    assert json.loads(result.stdout)["session"] == sessions[-1]
    assert len(openai_server.requests[-1]["messages"]) == 4
    assert _user_texts(run_cli, tmp_path / "chat.db", sessions[-1]) == [
        "third question",
        "a follow-up",
    ]
    for _ in range(2):
        assert run_cli(*chat_args, "--cid", "notes", "-p", "remember").returncode == 0
    assert _user_texts(run_cli, tmp_path / "chat.db", "notes") == ["remember", "remember"]


def test_piped_text_is_joined_to_the_prompt(
    run_cli: RunCli, chat_args: list[str], openai_server: FakeOpenAIServer
) -> None:
    notes = "line one of the notes\nline two\n"
    result = run_cli(*chat_args, "-p", "summarize this", input=notes)
    assert result.returncode == 0, result.stderr
    sent = openai_server.requests[-1]["messages"][-1]["content"]
    assert sent == "summarize this\n\nline one of the notes\nline two"
    # Empty piped input leaves the prompt alone.
    assert run_cli(*chat_args, "-p", "just this", input="\n").returncode == 0
    assert openai_server.requests[-1]["messages"][-1]["content"] == "just this"


def test_one_shot_prompt_option(run_cli: RunCli, chat_args: list[str]) -> None:
    result = run_cli(*chat_args, "-p", "hello there")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("You said: hello there.")


def test_prompt_twice_is_a_usage_error(run_cli: RunCli, chat_args: list[str]) -> None:
    result = run_cli(*chat_args, "-p", "one", "two")
    assert result.returncode == 2
    assert "not both" in result.stderr


def test_json_output(run_cli: RunCli, chat_args: list[str]) -> None:
    result = run_cli(*chat_args, "--json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["session"].startswith("chat-")
    assert record["turn"] == 1
    assert record["reply"].startswith("You said: hi.")
    assert record["usage"]["total_tokens"] > 0
    assert result.stderr == ""

    lines = run_cli(*chat_args, "--json", input="one\ntwo\n")
    assert lines.returncode == 0, lines.stderr
    records = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [r["session"] for r in records] == ["chat", "chat"]
    assert [r["turn"] for r in records] == [1, 2]
    assert [r["reply"].split(".")[0] for r in records] == ["You said: one", "You said: two"]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "no-stream"])
def test_json_usage_the_server_did_not_send_is_null(
    run_cli: RunCli, chat_args: list[str], openai_server: FakeOpenAIServer, stream: bool
) -> None:
    openai_server.send_usage = False
    flags = [] if stream else ["--no-stream"]
    result = run_cli(*chat_args, "--json", *flags, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["usage"] == {
        "input_tokens": None,
        "output_tokens": None,
        "cached_input_tokens": None,
        "total_tokens": None,
    }


def test_no_stream(run_cli: RunCli, chat_args: list[str], openai_server: FakeOpenAIServer) -> None:
    result = run_cli(*chat_args, "--no-stream", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("You said: hi.")
    assert [r.get("stream", False) for r in openai_server.requests] == [False]


def test_continue_resumes_the_last_session(
    run_cli: RunCli, chat_args: list[str], openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    assert run_cli(*chat_args, "--session", "trip", "-p", "plan a trip").returncode == 0
    assert run_cli(*chat_args, "--session", "work", "-p", "plan a sprint").returncode == 0
    result = run_cli(*chat_args, "--continue", "-p", "and the budget?")
    assert result.returncode == 0, result.stderr
    assert len(openai_server.requests[-1]["messages"]) == 1 + 2 + 1  # system, turn 1, new
    assert _user_texts(run_cli, tmp_path / "chat.db", "work") == [
        "plan a sprint",
        "and the budget?",
    ]
    assert run_cli(*chat_args, "-c", "--session", "trip", "-p", "x").returncode == 2


def test_continue_without_an_earlier_chat(run_cli: RunCli, chat_args: list[str]) -> None:
    result = run_cli(*chat_args, "--continue", "-p", "hi")
    assert result.returncode == 1
    assert "no earlier chat to continue" in result.stderr


def test_multi_line_input(run_cli: RunCli, chat_args: list[str], tmp_path: Path) -> None:
    typed = 'first line \\\nsecond line\n"""\ndef f():\n    return 1\n"""\nlast\n'
    result = run_cli(*chat_args, input=typed)
    assert result.returncode == 0, result.stderr
    assert _user_texts(run_cli, tmp_path / "chat.db", "chat") == [
        "first line \nsecond line",
        "def f():\n    return 1",
        "last",
    ]


@pytest.mark.parametrize(
    "model,variable",
    [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-3-5-haiku-latest", "ANTHROPIC_API_KEY"),
    ],
)
def test_missing_api_key_is_named_before_anything_runs(
    run_cli: RunCli, model: str, variable: str, tmp_path: Path, require_openai_provider: None
) -> None:
    result = run_cli("chat", "--model", model, "-p", "hi")
    assert result.returncode == 1
    assert result.stderr.startswith(f"agentcore chat: error: no API key for {model.split(':')[0]}")
    assert f"set the environment variable {variable}" in result.stderr
    assert "api_key=" not in result.stderr  # the CLI speaks in variables and flags
    assert not (tmp_path / "home").exists()  # nothing was created


def test_local_server_needs_no_key(run_cli: RunCli, chat_args: list[str]) -> None:
    result = run_cli(*chat_args, "-p", "hi")  # --base-url given, no OPENAI_API_KEY
    assert result.returncode == 0, result.stderr


def test_python_dash_m_agentcore(cli_env: dict[str, str], tmp_path: Path) -> None:
    version = run_cli_process(["--version"], env=cli_env, cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"agentcore {__version__}"
    # python -m agentcore.cli too; the exit code main() returns is the process's.
    command = [sys.executable, "-m", "agentcore.cli"]
    usage = run_cli_process(["nope"], env=cli_env, cwd=tmp_path, command=command)
    assert usage.returncode == 2
    assert usage.stderr.startswith("usage: agentcore")


@pytest.mark.parametrize(
    "args,expected",
    [
        (["--base-url", "localhost:11434"], "argument --base-url: must be an http:// or https://"),
        (
            ["--session", ""],
            "argument --cid/--conversation/--session: the session id must not be empty",
        ),
    ],
)
def test_errors_speak_in_flags(
    run_cli: RunCli, args: list[str], expected: str, require_openai_provider: None
) -> None:
    result = run_cli("chat", *args, "-p", "hi", env={"OPENAI_API_KEY": "sk-test"})
    assert result.returncode == 2
    assert expected in result.stderr
    for api_name in ("base_url", "session_id", "OpenAIProvider", "api_key="):
        assert api_name not in result.stderr


def test_llm_s_flags_s_is_the_system_prompt_and_cid_the_session(
    run_cli: RunCli, chat_args: list[str], openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    result = run_cli(*chat_args, "-s", "You are a pirate", "--cid", "ship", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # a prompt with spaces is clearly a prompt: no note
    system = openai_server.requests[-1]["messages"][0]
    assert system == {"role": "system", "content": "You are a pirate"}
    assert _user_texts(run_cli, tmp_path / "chat.db", "ship") == ["hi"]
    for spelling in ("--conversation", "--session"):
        assert run_cli(*chat_args, spelling, "ship", "-p", "again").returncode == 0
    assert _user_texts(run_cli, tmp_path / "chat.db", "ship") == ["hi", "again", "again"]


def test_an_old_s_session_habit_gets_a_note_naming_cid(
    run_cli: RunCli, chat_args: list[str], openai_server: FakeOpenAIServer
) -> None:
    result = run_cli(*chat_args, "-s", "notes", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "-s is the system prompt" in result.stderr and "--cid notes" in result.stderr
    assert openai_server.requests[-1]["messages"][0]["content"] == "notes"
