"""/compact, /summary and /help in the chat, and ``agentcore sessions compact``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_runner import RunCli
from fake_openai import SUMMARY_REPLY, FakeOpenAIServer, is_summary_text

pytest.importorskip("agentcore_autosummary")

TURNS = "".join(
    f"question {index} about the port numbers of service {index}\n" for index in range(8)
)


@pytest.fixture
def base(
    openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> list[str]:
    return ["--base-url", openai_server.base_url, "--db", str(tmp_path / "chat.db")]


def _summary_requests(openai_server: FakeOpenAIServer) -> list[str]:
    texts = [str(request["messages"][-1]["content"]) for request in openai_server.requests]
    return [text for text in texts if is_summary_text(text)]


def test_chat_slash_commands(
    run_cli: RunCli, base: list[str], openai_server: FakeOpenAIServer
) -> None:
    typed = TURNS + "/summary\n/compact keep the port numbers\n/summary\n/help\n/etc/hosts?\n"
    result = run_cli("chat", *base, "--max-context-tokens", "2000", input=typed)
    assert result.returncode == 0, result.stderr
    err = result.stderr
    assert "no summary yet" in err
    notices = [line for line in err.splitlines() if "summary written" in line]
    assert len(notices) == 1 and notices[0].startswith("  -> summary written: covers messages 0..")
    # /compact says it started before the summary call, then what it wrote.
    lines = err.splitlines()
    progress = [
        i for i, line in enumerate(lines) if re.match(r"  -> summarizing \d+ messages\.\.\.$", line)
    ]
    assert len(progress) == 1 and progress[0] < lines.index(notices[0])
    assert f"summary of messages 0..{notices[0].split('0..')[1].split()[0]}:" in err
    assert SUMMARY_REPLY in err
    assert "<summary>" not in err  # /summary shows the summary as written, unfenced
    assert "/compact [INSTRUCTIONS]" in err
    (prompt,) = _summary_requests(openai_server)
    assert "keep the port numbers" in prompt
    # A line that only starts with a slash is a message, not a command.
    assert "You said: /etc/hosts?" in result.stdout


def test_sessions_compact(
    run_cli: RunCli, base: list[str], openai_server: FakeOpenAIServer
) -> None:
    chat = run_cli("chat", *base, "--no-summary", input=TURNS)
    assert chat.returncode == 0, chat.stderr
    # The incremental strategy: the second compaction asks for an update of the summary.
    options = [*base, "--max-context-tokens", "2000", "--strategy", "incremental"]
    result = run_cli("sessions", "compact", "chat", *options, "--instructions", "keep numbers")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == SUMMARY_REPLY
    assert "compacted session 'chat': the summary covers messages 0.." in result.stderr
    assert re.search(r"^summarizing \d+ messages\.\.\.$", result.stderr, re.MULTILINE)
    (prompt,) = _summary_requests(openai_server)
    assert "keep numbers" in prompt
    shown = run_cli("sessions", "show", "chat", "--db", base[-1])
    assert SUMMARY_REPLY in shown.stdout

    # Compacting again folds the rest but the last exchange; this fake summarizer answers
    # the same text again, which adds nothing from those messages: the gate refuses it,
    # asks for a re-summary (the new messages alone, then merged), and when that gives the
    # same summary again, the summary stands and now covers those messages too.
    covered = re.search(r"covers messages 0\.\.(\d+)", result.stderr)
    again = run_cli("sessions", "compact", "chat", *options)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == SUMMARY_REPLY
    covered_again = re.search(r"covers messages 0\.\.(\d+)", again.stderr)
    assert covered is not None and covered_again is not None
    assert int(covered_again.group(1)) > int(covered.group(1))
    assert len(_summary_requests(openai_server)) == 1 + 3
    missing = run_cli("sessions", "compact", "nope", *options)
    assert missing.returncode == 1 and "no session 'nope'" in missing.stderr


def test_summary_provider_sends_summaries_elsewhere(
    run_cli: RunCli, base: list[str], openai_server: FakeOpenAIServer
) -> None:
    # Ollama's provider reads OLLAMA_HOST; pointed at the same fake server, the summary
    # requests are told apart by the model they ask for.
    env = {"OLLAMA_HOST": openai_server.base_url.removesuffix("/v1")}
    options = ["--max-context-tokens", "2000", "--summary-provider", "ollama:summarizer"]
    result = run_cli("chat", *base, *options, input=TURNS + "/compact\n", env=env)
    assert result.returncode == 0, result.stderr
    models = {
        request["model"]
        for request in openai_server.requests
        if is_summary_text(str(request["messages"][-1]["content"]))
    }
    assert models == {"summarizer"}
