"""``agentcore chat --model openai-responses:MODEL``: a chat over OpenAI's Responses API."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_runner import RunCli
from fake_openai import FakeOpenAIServer

from agentcore.cli.chat_command import explain_llm_error
from agentcore.errors import AuthenticationError

METER = re.compile(r"^context +[\d,]+ / ([\d,]+) tokens  \[[#-]{12}\]!?$")


@pytest.mark.parametrize("flags", [[], ["--no-stream"]], ids=["stream", "no-stream"])
def test_a_chat_over_the_responses_api(
    run_cli: RunCli, openai_server: FakeOpenAIServer, tmp_path: Path, flags: list[str]
) -> None:
    args = ["chat", "--model", "openai-responses:gpt-4.1-mini", *flags]
    args += ["--base-url", openai_server.base_url, "--db", str(tmp_path / "r.db"), "--cid", "r"]

    result = run_cli(*args, input="hello\nagain\n")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("You said: hello.") and lines[1].startswith("You said: again.")
    meters = [METER.match(line) for line in result.stderr.splitlines()]
    windows = {match.group(1) for match in meters if match}
    assert windows == {"1,047,576"}  # gpt-4.1-mini's, from the table
    first, second = openai_server.requests
    assert first["model"] == "gpt-4.1-mini"
    assert first["store"] is False and "include" not in first  # gpt-4.1 does not reason
    assert first.get("stream", False) is (not flags)
    assert [item["role"] for item in second["input"]] == ["system", "user", "assistant", "user"]
    assert second["input"][2]["content"][0]["type"] == "output_text"
    assert second["input"][2]["content"][0]["text"].startswith("You said: hello.")


def test_a_responses_chat_resumes_its_session(
    run_cli: RunCli, openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    args = ["chat", "--model", "openai-responses:gpt-5-mini", "--base-url"]
    args += [openai_server.base_url, "--db", str(tmp_path / "r.db"), "--cid", "s"]
    assert run_cli(*args, input="one\n").returncode == 0
    resumed = run_cli(*args, "-p", "two")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith("You said: two.")
    last = openai_server.requests[-1]
    assert len(last["input"]) == 1 + 2 + 1  # system, the first turn, the new prompt
    assert last["include"] == ["reasoning.encrypted_content"]  # gpt-5 reasons


def test_the_key_is_needed_without_a_base_url(run_cli: RunCli) -> None:
    result = run_cli("chat", "--model", "openai-responses:gpt-5-mini", "-p", "hi")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert "no API key for openai-responses" in line and "OPENAI_API_KEY" in line
    assert "--base-url" in line


def test_a_refused_key_names_the_variable() -> None:
    line = explain_llm_error(AuthenticationError("HTTP 401: bad key"), "openai-responses")
    assert "export OPENAI_API_KEY=" in line
