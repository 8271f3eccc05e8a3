from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_runner import RunCli

from agentcore.llm import LlmRequest
from agentcore.messages import Message
from agentcore.tokens import count_text_tokens
from agentcore_autosummary.cli.notices import summary_line
from agentcore_autosummary.demo import DemoResponder, load_script
from agentcore_autosummary.demo.responder import FALLBACK_REPLY, first_sentence
from agentcore_autosummary.recalling.automatic import NEW_MESSAGE_LABEL, RECALL_LABEL

NO_PLUGIN = {"AGENTCORE_DISABLED_PLUGINS": "autosummary"}
METER = re.compile(r"^turn +(\d+)  context +([\d,]+) / 1,500 tokens  \[[#-]{12}\]!?$")
SUMMARY = re.compile(
    r"summary written: covers messages 0\.\.(\d+) \(([\d,]+) tokens\); context now ([\d,]+) tokens"
)


def _tokens(text: str) -> int:
    return int(text.replace(",", ""))


# -- the shipped script and its responder ----------------------------------------


def test_script_is_a_long_realistic_conversation() -> None:
    script = load_script()
    assert len(script.turns) >= 40
    users = [turn.user for turn in script.turns]
    assert len(set(users)) == len(users)
    assert len({first_sentence(user) for user in users}) == len(users)
    assert all(len(turn.assistant.split()) >= 20 for turn in script.turns)


def test_responder_replies_from_the_script() -> None:
    script = load_script()
    responder = DemoResponder(script)
    turn = script.turns[5]
    request = LlmRequest([Message.system("sys"), Message.user(turn.user)])
    assert responder(request) == turn.assistant
    assert responder(LlmRequest([Message.user("something else")])) == FALLBACK_REPLY
    # A message automatic recall opened is answered by the user's own words.
    recalled = f"{RECALL_LABEL}\n[turn 1, user] earlier words\n\n{NEW_MESSAGE_LABEL}\n{turn.user}"
    assert responder(LlmRequest([Message.user(recalled)])) == turn.assistant


def test_responder_summarizes_the_user_lines_in_the_request() -> None:
    script = load_script()
    responder = DemoResponder(script, max_points=3)
    transcript = "\n".join(f"user: {t.user}\nassistant: {t.assistant}" for t in script.turns[:6])
    request = LlmRequest([Message.user(transcript)], purpose="summary", max_tokens=200)
    summary = responder(request)
    assert summary == responder(request)  # deterministic
    assert "(3 earlier points omitted)" in summary
    for turn in script.turns[3:6]:
        assert first_sentence(turn.user) in summary
    assert first_sentence(script.turns[0].user) not in summary
    assert count_text_tokens(summary) <= 200


def test_responder_summary_respects_max_tokens() -> None:
    script = load_script()
    transcript = " ".join(turn.user for turn in script.turns)
    request = LlmRequest([Message.user(transcript)], purpose="summary", max_tokens=40)
    assert count_text_tokens(DemoResponder(script)(request)) <= 60


# -- without the plugin ------------------------------------------------------------


def test_the_plugin_adds_the_demo_and_help_says_so(run_cli: RunCli) -> None:
    shown = run_cli("--help")
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"demo +watch autosummary .*\(from\s+autosummary\)", shown.stdout, re.S)
    without = run_cli("demo", "--turns", "12", env=NO_PLUGIN)
    assert without.returncode == 2 and "invalid choice: 'demo'" in without.stderr
    assert "demo" not in run_cli("--help", env=NO_PLUGIN).stdout


def test_demo_without_summaries_only_grows(run_cli: RunCli) -> None:
    result = run_cli("demo", "--turns", "12", "--no-summary")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "MockProvider" in out and "no model is called" in out
    meters = [METER.match(line) for line in out.splitlines() if line.startswith("turn ")]
    assert len(meters) == 12 and all(meters)
    sizes = [_tokens(m.group(2)) for m in meters if m]
    assert sizes == sorted(sizes)  # nothing summarized: the context only grows
    assert "summary written" not in out
    assert "The next request would carry" in out


def test_demo_no_summary_flag(run_cli: RunCli) -> None:
    result = run_cli("demo", "--turns", "3", "--no-summary", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "none (--no-summary)" in result.stdout
    assert not any(line.startswith("turn ") for line in result.stdout.splitlines())


def test_demo_refuses_an_existing_session(run_cli: RunCli, tmp_path: Path) -> None:
    db = str(tmp_path / "demo.db")
    assert run_cli("demo", "--turns", "2", "--no-summary", "--db", db).returncode == 0
    again = run_cli("demo", "--turns", "2", "--no-summary", "--db", db)
    assert again.returncode == 1
    assert "already holds a session 'demo'" in again.stderr
    assert "Traceback" not in again.stderr


# -- with the plugin ----------------------------------------------------------------


def test_demo_keeps_the_context_in_the_window(run_cli: RunCli, tmp_path: Path) -> None:
    pytest.importorskip("agentcore_autosummary")
    db = tmp_path / "demo.db"
    result = run_cli("demo", "--db", str(db))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "autosummary with" in result.stdout
    meters = [METER.match(line) for line in lines if line.startswith("turn ")]
    assert len(meters) == len(load_script().turns) and all(meters)
    summaries = [SUMMARY.search(line) for line in lines if "summary written" in line]
    assert len(summaries) >= 2 and all(summaries)
    covers = [int(m.group(1)) for m in summaries if m]
    assert covers == sorted(covers)
    assert all(_tokens(m.group(3)) <= 1500 for m in summaries if m)
    final = re.search(
        r"The next request would carry (\d+) messages, ([\d,]+) tokens", result.stdout
    )
    assert final and _tokens(final.group(2)) <= 1500
    assert "[上下文摘要]" in result.stdout  # the summary message is shown in the final context
    assert FALLBACK_REPLY.removeprefix("(MockProvider) ") not in result.stdout

    shown = run_cli("sessions", "show", "demo", "--db", str(db), "--json")
    assert shown.returncode == 0, shown.stderr
    slot = json.loads(shown.stdout)["slots"][0]
    assert slot["mode"] == "focused"
    assert slot["summary_covers"] == covers[-1] + 1
    assert slot["summary_override"]


def test_demo_quiet_prints_only_summaries(run_cli: RunCli) -> None:
    pytest.importorskip("agentcore_autosummary")
    result = run_cli("demo", "--quiet", "--turns", "20")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert not any(METER.match(line) for line in lines)
    assert any(re.match(r"^turn \d+: summary written", line) for line in lines)


def test_summary_line() -> None:
    assert summary_line(24, 412) == "summary written: covers messages 0..23 (412 tokens)"
    assert summary_line(24, 412, 1200).endswith("; context now 1,200 tokens")
    assert summary_line(0, 10) == "summary written (10 tokens)"
