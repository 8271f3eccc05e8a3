from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import RunCli
from fake_openai import FakeOpenAIServer

from agentcore.cli.chat_command import explain_llm_error
from agentcore.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    LlmTimeoutError,
    ServiceUnavailableError,
)

METER = re.compile(r"^context +[\d,]+ / [\d,]+ tokens  \[[#-]{12}\]!?$")


def test_unreachable_server_is_one_clear_line(
    run_cli: RunCli, closed_port: int, require_openai_provider: None, tmp_path: Path
) -> None:
    result = run_cli(
        "chat",
        "--base-url",
        f"http://127.0.0.1:{closed_port}/v1",
        "--max-retries",
        "0",
        "--db",
        str(tmp_path / "chat.db"),
        input="hello\n",
    )
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("agentcore chat: error: ")
    assert "--base-url" in lines[0]
    assert "Traceback" not in result.stderr


def test_unreachable_server_with_default_retries(
    run_cli: RunCli, closed_port: int, require_openai_provider: None
) -> None:
    result = run_cli("chat", "--base-url", f"http://127.0.0.1:{closed_port}/v1", input="hi\n")
    assert result.returncode == 1
    assert "agentcore chat: error: " in result.stderr
    assert "Traceback" not in result.stderr
    assert "retrying" not in result.stderr  # retries are logged only with -v


def test_unknown_provider_prefix_is_a_usage_error(run_cli: RunCli) -> None:
    result = run_cli("chat", "--model", "nosuch:model", input="hi\n")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: agentcore chat")
    assert "no provider is registered for 'nosuch'" in result.stderr


def test_missing_anthropic_key(run_cli: RunCli, require_openai_provider: None) -> None:
    result = run_cli("chat", "--model", "anthropic:claude-3-5-haiku-latest", input="hi\n")
    assert result.returncode == 1
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_chat_streams_replies_and_shows_the_meter(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> None:
    db = tmp_path / "chat.db"
    args = ["chat", "--base-url", openai_server.base_url, "--db", str(db)]
    result = run_cli(*args, "--session", "t1", input="hello\n\nsecond line\n/quit\nignored\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("You said: hello.")
    assert result.stdout.splitlines()[1].startswith("You said: second line.")
    meters = [line for line in result.stderr.splitlines() if METER.match(line)]
    assert len(meters) == 2
    # gpt-4o-mini's window, from the table of known windows.
    assert all("/ 128,000 tokens" in line for line in meters)
    assert [r.get("stream") for r in openai_server.requests] == [True, True]

    resumed = run_cli(*args, "--session", "t1", input="third\n")
    assert resumed.returncode == 0, resumed.stderr
    assert len(openai_server.requests[-1]["messages"]) == 1 + 4 + 1  # system, history, new

    exported = run_cli("sessions", "export", "t1", "--db", str(db))
    texts = [json.loads(line)["content"][0]["text"] for line in exported.stdout.splitlines()]
    assert texts[0::2] == ["hello", "second line", "third"]


def test_empty_input_ends_cleanly(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None
) -> None:
    result = run_cli("chat", "--base-url", openai_server.base_url, input="")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert openai_server.requests == []


def test_explanations_carry_hints() -> None:
    auth = explain_llm_error(AuthenticationError("HTTP 401: bad key"), "openai")
    assert "OPENAI_API_KEY" in auth
    assert "ANTHROPIC_API_KEY" in explain_llm_error(AuthenticationError("401"), "anthropic")
    assert "--base-url" in explain_llm_error(
        ServiceUnavailableError("connection refused"), "openai"
    )
    assert "--timeout" in explain_llm_error(LlmTimeoutError("slow"), "openai")
    too_long = ContextWindowExceededError("HTTP 400: too long")
    assert "window of 2,048 tokens" in explain_llm_error(too_long, "openai", window=2048)
    failed = ServiceUnavailableError("HTTP 500", status_code=500)
    assert "server failed" in explain_llm_error(failed, "openai")


def test_a_model_the_server_does_not_know_gets_one_hint() -> None:
    from agentcore.providers._errors import ServerError, error_for_status

    said = ServerError(message="The model `gpt-9` does not exist", code="model_not_found")
    exc = error_for_status("OpenAI API", 404, said, key_env="OPENAI_API_KEY")
    line = explain_llm_error(exc, "openai")
    assert "gpt-9" in line and "HTTP 404" in line
    assert line.count("check the model name") == 1, line
    assert "--model" in line and "ollama pull" not in line
    assert "ollama pull MODEL" in explain_llm_error(exc, "ollama")


def _chat_error(run_cli: RunCli, openai_server: FakeOpenAIServer, *flags: str) -> str:
    args = ["chat", "--base-url", openai_server.base_url, "--max-retries", "0", *flags]
    result = run_cli(*args, "-p", "hi", env={"OPENAI_API_KEY": "sk-wrong"})
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    return line


def test_a_refused_key_names_the_variable_once(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None
) -> None:
    openai_server.fail_status = 401
    line = _chat_error(run_cli, openai_server)
    assert "HTTP 401" in line
    assert line.count("OPENAI_API_KEY") == 2  # the variable, and how to set it
    assert "missing or wrong" in line
    assert "api_key=" not in line and "--base-url" not in line


def test_a_server_error_says_the_server_failed(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None
) -> None:
    openai_server.fail_status = 500
    line = _chat_error(run_cli, openai_server)
    assert "HTTP 500" in line
    assert "the server failed" in line
    assert "is the server running" not in line


@pytest.mark.parametrize("flags", [[], ["--no-stream"]], ids=["stream", "no-stream"])
def test_a_length_refusal_is_named(
    run_cli: RunCli,
    openai_server: FakeOpenAIServer,
    require_openai_provider: None,
    flags: list[str],
) -> None:
    openai_server.window_tokens = 10
    line = _chat_error(run_cli, openai_server, *flags)
    assert "too long for the model's context window of 10 tokens" in line
    assert "start a new session" in line
    assert "connection" not in line


def test_the_window_is_learned_from_a_refusal_and_kept(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> None:
    openai_server.window_tokens = 2048
    # A model no table knows, on a server that reports no window.
    args = ["chat", "--base-url", openai_server.base_url, "--db", str(tmp_path / "w.db")]
    args += ["--model", "openai:local-model", "--cid", "w"]
    long_line = "tell me more about this " * 60 + "\n"
    result = run_cli(*args, input=long_line * 6)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    meters = [line for line in lines if line.startswith("context ")]
    assert meters and all(line.endswith("tokens  (window not known)") for line in meters)
    assert "the server's context window is 2,048 tokens (learned from its refusal" in lines[-2]
    assert "too long for the model's context window of 2,048 tokens" in lines[-1]

    # The next chat in the session starts with the learned window.
    again = run_cli(*args, "--max-retries", "0", input="a short one\n")
    assert "window of 2,048 tokens" in again.stderr
    given = run_cli(*args, "--max-context-tokens", "4096", input="short\n")
    assert "window of 2,048 tokens" in given.stderr  # the server's figure, in the hint


def test_verbose_logs_retries(
    run_cli: RunCli, closed_port: int, require_openai_provider: None
) -> None:
    result = run_cli(
        "-v",
        "chat",
        "--base-url",
        f"http://127.0.0.1:{closed_port}/v1",
        "--max-retries",
        "1",
        input="hi\n",
    )
    assert result.returncode == 1
    assert "retrying" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("agentcore chat: error: ")
