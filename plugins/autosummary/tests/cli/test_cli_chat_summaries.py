"""What autosummary adds to ``agentcore chat``: summaries, their notices and their options."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import RunCli
from fake_openai import FakeOpenAIServer

from agentcore.cli.errors import EXIT_BROKEN_PIPE
from agentcore_autosummary import unfence_summary

DOCS = Path(__file__).resolve().parents[4] / "docs"


def test_chat_writes_a_summary(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> None:
    db = tmp_path / "chat.db"
    lines = "".join(f"question number {n}, please answer at some length\n" for n in range(8))
    result = run_cli(
        "chat",
        "--base-url",
        openai_server.base_url,
        "--db",
        str(db),
        "--max-context-tokens",
        "600",
        input=lines,
    )
    assert result.returncode == 0, result.stderr
    summary_lines = [line for line in result.stderr.splitlines() if "summary written" in line]
    assert summary_lines, result.stderr
    assert summary_lines[0].startswith("  -> summary written: covers messages 0..")
    assert any(not r.get("stream") for r in openai_server.requests)  # the summary call

    shown = json.loads(run_cli("sessions", "show", "chat", "--db", str(db), "--json").stdout)
    assert shown["slots"][0]["summary_override"]
    assert shown["slots"][0]["summary_covers"] > 0
    # The slot sends the summary fenced once; the session data holds it as written.
    override = shown["slots"][0]["summary_override"]
    assert override.startswith("<summary>\n") and override.count("<summary>") == 1
    assert shown["data"]["conversation_summary"] == unfence_summary(override)
    assert "<summary>" not in shown["data"]["conversation_summary"]


def test_summary_errors_name_the_flags(run_cli: RunCli) -> None:
    result = run_cli("demo", "--summary-model", "")
    assert result.returncode == 2
    assert "--summary-model must be" in result.stderr
    assert "summary_config" not in result.stderr
    provider = run_cli("demo", "--summary-provider", "gpt-4o-mini")
    assert provider.returncode == 2
    assert "--summary-provider must be an LlmProvider, a 'prefix:model' name" in provider.stderr
    ratio = run_cli("demo", "--trigger-ratio", "1.5")
    assert ratio.returncode == 2
    assert "argument --trigger-ratio: expected a ratio in (0, 1], got 1.5" in ratio.stderr
    assert "trigger_token_ratio" not in ratio.stderr


def test_summary_prompt_flag(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Summarize this conversation in English:\n\n{messages}", "utf-8")
    lines = "".join(f"question number {n}, please answer at some length\n" for n in range(8))
    result = run_cli(
        "chat",
        "--base-url",
        openai_server.base_url,
        "--db",
        str(tmp_path / "chat.db"),
        "--max-context-tokens",
        "600",
        "--summary-prompt",
        f"@{prompt}",
        input=lines,
    )
    assert result.returncode == 0, result.stderr
    summary_calls = [r for r in openai_server.requests if not r.get("stream")]
    assert summary_calls
    sent = summary_calls[0]["messages"][-1]["content"]
    assert sent.startswith("Summarize this conversation in English:")
    missing = run_cli("demo", "--summary-prompt", "@" + str(tmp_path / "none.txt"))
    assert missing.returncode == 2
    assert "argument --summary-prompt: cannot read" in missing.stderr


def test_piped_into_head(cli_env: dict[str, str], tmp_path: Path) -> None:
    shell = (
        f"{sys.executable} -m agentcore demo --no-summary | head -n 2; "
        'echo "exit=${PIPESTATUS[0]}"'
    )
    result = subprocess.run(
        ["bash", "-c", shell],
        capture_output=True,
        text=True,
        env=cli_env,
        cwd=tmp_path,
        timeout=120,
    )
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("agentcore demo:")
    assert lines[-1] in ("exit=0", f"exit={EXIT_BROKEN_PIPE}")
    assert "Traceback" not in result.stderr and "Exception" not in result.stderr
    assert result.stderr == ""


def test_plugins_shows_hooks_of_the_autosummary_plugin(run_cli: RunCli) -> None:
    listed = {plugin["name"]: plugin for plugin in json.loads(run_cli("plugins").stdout)}
    autosummary = listed["autosummary"]
    assert autosummary["distribution"] == "agentcore-autosummary"
    assert "post_turn_end" in autosummary["hooks"]


def test_the_english_summary_prompt_example_is_valid() -> None:
    text = (DOCS / "getting-started.md").read_text("utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "ENGLISH_PROMPT" in b]
    assert len(blocks) == 1
    namespace: dict[str, object] = {}
    exec(compile(blocks[0], "docs/getting-started.md", "exec"), namespace)
    assert namespace["config"].summary_prompt.endswith("{messages}")  # type: ignore[attr-defined]
    assert namespace["slot_mode"].summary_label.startswith("[Summary")  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "args",
    [
        ["demo", "--turns", "0"],
        ["demo", "--turns", "many"],
        ["demo", "--trigger", "sometimes"],
        ["chat", "--trigger-ratio", "1.5"],
        ["chat", "--summary-mode", "later"],
    ],
    ids=" ".join,
)
def test_bad_summary_arguments_exit_2_with_usage(args: list[str], run_cli: RunCli) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert result.stderr.startswith("usage: agentcore")
    assert "Traceback" not in result.stderr


def test_the_plugin_commands_have_help(run_cli: RunCli) -> None:
    for command in (["demo"], ["sessions", "compact"]):
        result = run_cli(*command, "--help")
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"usage: agentcore {' '.join(command)}")
    chat = run_cli("chat", "--help").stdout
    assert "settings of the autosummary plugin" in chat and "--summary-model" in chat
    sessions = run_cli("sessions", "--help").stdout
    assert re.search(r"compact +summarize a stored session now \(from autosummary\)", sessions)


def test_chat_learns_the_window_of_a_2048_token_server(
    run_cli: RunCli, openai_server: FakeOpenAIServer, require_openai_provider: None, tmp_path: Path
) -> None:
    openai_server.window_tokens = 2048
    # A model no table knows, on a server that reports no window: the first refusal
    # for length teaches it, the turn is fitted and the chat goes on.
    args = ["chat", "--base-url", openai_server.base_url, "--db", str(tmp_path / "w.db")]
    args += ["--model", "openai:local-model"]
    lines = "".join(f"question {n}: " + "tell me more about this " * 40 + "\n" for n in range(6))
    result = run_cli(*args, input=lines)
    assert result.returncode == 0, result.stderr
    stderr = result.stderr.splitlines()
    learned = "the server's context window is 2,048 tokens (learned from its refusal"
    assert any(learned in line for line in stderr), result.stderr
    after = stderr[next(i for i, line in enumerate(stderr) if learned in line) :]
    meters = [line for line in after if line.startswith("context ")]
    assert meters and all("/ 2,048 tokens" in line for line in meters)
    # Every question was answered (the server echoes the message, recalled lines and all).
    answers = [line for line in result.stdout.splitlines() if line.startswith("You said: ")]
    assert len(answers) == 6
