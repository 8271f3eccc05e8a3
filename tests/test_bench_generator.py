"""The quality bench's conversation generator, its scoring and its answer scorer (no model)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the bench is not installed

from bench.quality import generator, report
from bench.quality.answers import ask_all, judge, question_request, tally
from bench.quality.conversations import Script
from bench.quality.facts import Fact, denies, mentions, score
from bench.quality.systems import no_turns

ALL_SEEDS = [seed for seeds in generator.SEEDS.values() for seed in seeds]
EVERY_SCRIPT = [(kind, seed) for kind in generator.KINDS for seed in ALL_SEEDS]
SAME_PATTERN = {"project": " owner", "incident": " port", "support": " price", "mixed": " port"}
"""The key ending of each kind's facts of one pattern (the Chinese kind's end in 模块)."""


def _turn_texts(script: Script, turn: int, *, tools: bool = True) -> str:
    step_texts = []
    for step in script.turns[turn].steps:
        step_texts.append(step.text)
        if tools:
            step_texts.extend(call.output for call in step.calls)
    return "\n".join([script.turns[turn].user, *step_texts])


def _values(script: Script) -> set[str]:
    return {fact.value[0] for fact in script.facts}


@pytest.mark.parametrize("kind", list(generator.KINDS))
def test_a_seed_gives_the_same_conversation_and_another_seed_other_words(kind: str) -> None:
    first = generator.generate(kind, 101)
    assert generator.generate(kind, 101) == first
    other = generator.generate(kind, 102)
    assert other.texts() != first.texts()
    # Not only shuffled: the values planted (names, numbers, services) are not the same set.
    assert _values(other) != _values(first)
    assert first.key == "gen-" + kind + "-101"
    assert generator.build(first.key) == first


@pytest.mark.parametrize(("kind", "seed"), EVERY_SCRIPT)
def test_each_value_is_said_at_its_turn_and_the_old_ones_before(kind: str, seed: int) -> None:
    script = generator.generate(kind, seed)
    assert len(script.facts) >= 10
    for fact in script.facts:
        assert fact.said_at is not None and fact.question, fact.key
        assert mentions(_turn_texts(script, fact.said_at), fact.value), fact.key
        assert len(fact.old_at) == len(set(fact.old_at)), fact.key
        assert list(fact.old_at) == sorted(fact.old_at), fact.key
        for turn in (*fact.old_at, *fact.retracted_at):
            assert turn < fact.said_at, fact.key
        for turn in fact.old_at:
            assert mentions(_turn_texts(script, turn), fact.old), fact.key
        for turn in fact.retracted_at:
            assert mentions(_turn_texts(script, turn), fact.retracted), fact.key
        # The final value is news at its turn: no earlier turn states it of its subject.
        earlier = [_turn_texts(script, turn) for turn in range(fact.said_at)]
        assert fact.key not in score(earlier, [fact], set()).retained, fact.key
        assert (
            fact.key in score([*earlier, _turn_texts(script, fact.said_at)], [fact], set()).retained
        )
    assert script.turns[-1].steps[-1].calls == ()


@pytest.mark.parametrize("seed", ALL_SEEDS)
def test_the_incident_has_values_only_in_tool_output_past_character_500(seed: int) -> None:
    script = generator.generate("incident", seed)
    in_tools = [fact for fact in script.facts if fact.in_tool_output]
    assert {fact.key for fact in in_tools} == {"memory limit", "image tag", "pool size"}
    spoken = "\n".join(
        text
        for turn in range(len(script.turns))
        for text in [_turn_texts(script, turn, tools=False)]
    )
    for fact in in_tools:
        assert not mentions(spoken, fact.value), fact.key
        assert fact.said_at is not None
        outputs = [call.output for step in script.turns[fact.said_at].steps for call in step.calls]
        assert any(mentions(output, fact.value) for output in outputs), fact.key
    memory = next(fact for fact in in_tools if fact.key == "memory limit")
    assert memory.said_at is not None and memory.old_at  # raised later, in tool output again
    for turn, values in ((memory.said_at, memory.value), (memory.old_at[0], memory.old)):
        outputs = [call.output for step in script.turns[turn].steps for call in step.calls]
        describe = next(output for output in outputs if "Limits:" in output)
        assert describe.index(values[0]) > 500


@pytest.mark.parametrize(("kind", "seed"), EVERY_SCRIPT)
def test_the_hard_cases_are_there(kind: str, seed: int) -> None:
    script = generator.generate(kind, seed)
    ending = SAME_PATTERN.get(kind, "模块")
    alike = [fact for fact in script.facts if fact.key.endswith(ending)]
    assert len(alike) >= (10 if kind == "incident" else 4)
    assert len({fact.subject for fact in alike}) == len(alike)
    assert len({fact.value for fact in alike}) == len(alike)
    # A value updated twice, and a retraction whose turn denies the withdrawn value.
    assert any(len(fact.old_at) >= 2 for fact in script.facts)
    retracted = [fact for fact in script.facts if fact.retracted]
    assert retracted
    for fact in retracted:
        assert fact.said_at is not None
        withdrawal = _turn_texts(script, fact.said_at)
        assert mentions(withdrawal, fact.retracted) and denies(withdrawal)


def test_the_seed_sets_are_disjoint_and_name_every_kind() -> None:
    assert not set(generator.SEEDS["tuning"]) & set(generator.SEEDS["evaluation"])
    keys = generator.keys("evaluation")
    assert len(keys) == len(generator.KINDS) * len(generator.SEEDS["evaluation"])
    assert generator.keys("tuning", ["incident"]) == [
        "gen-incident-101",
        "gen-incident-102",
        "gen-incident-103",
    ]
    with pytest.raises(ValueError, match="gen-KIND-SEED"):
        generator.parse("gen-poem-1")
    with pytest.raises(ValueError, match="seed set"):
        generator.keys("holdout")


RATE = Fact("rate limit", ("rate limit",), ("2,500",), ("5,000",))
CACHE = Fact(
    "session cache", ("session cache", "缓存"), ("process memory", "本地内存"), (), None, ("Redis",)
)


@pytest.mark.parametrize(
    ("texts", "retained", "contradicted"),
    [
        (["The rate limit is 5,000 requests.", "Quoted: the rate limit is now 2,500."], True, True),
        (["The rate limit moved from 5,000 to 2,500 per minute."], True, False),
        (["The rate limit is 2,500."], True, False),
        (["The rate limit is 2,500.", "Later: the rate limit is 5,000."], False, True),
    ],
)
def test_an_old_and_a_new_value_both_left_count_as_contradicted(
    texts: list[str], retained: bool, contradicted: bool
) -> None:
    found = score(texts, [RATE], set())
    assert ("rate limit" in found.retained) is retained
    assert ("rate limit" in found.contradicted) is contradicted


@pytest.mark.parametrize(
    ("text", "retained", "as_true"),
    [
        ("The session cache uses Redis.", False, True),
        (
            "We are not using Redis after all; the session cache stays in process memory.",
            True,
            False,
        ),
        ("Session cache: process memory (Redis was dropped).", True, False),
        ("The session cache is process memory. The session cache is Redis.", False, True),
        ("缓存用Redis。", False, True),
        ("我们最后不用Redis了，缓存还是放在本地内存。", True, False),
    ],
)
def test_a_retracted_value_counts_only_where_it_is_stated_as_true(
    text: str, retained: bool, as_true: bool
) -> None:
    found = score([text], [CACHE], set())
    assert ("session cache" in found.retained) is retained
    assert ("session cache" in found.retracted_as_true) is as_true


@pytest.mark.parametrize(
    ("fact", "answer", "verdict"),
    [
        (RATE, "The rate limit is 2,500 requests per minute.", "right"),
        (RATE, "It is 2500.", "right"),
        (RATE, "The rate limit is 5,000 requests per minute.", "stale"),
        (RATE, "It went from 5,000 to 2,500.", "right"),
        (RATE, "It is 25,000.", "missing"),
        (RATE, "I don't know.", "missing"),
        (CACHE, "The session cache is Redis.", "retracted"),
        (CACHE, "Process memory; Redis was dropped.", "right"),
        (CACHE, "It lives in process memory, with Redis in front.", "retracted"),
    ],
)
def test_the_answer_scorer(fact: Fact, answer: str, verdict: str) -> None:
    assert judge(answer, fact) == verdict


def test_a_question_replaces_the_final_user_message() -> None:
    final = [
        ("system", "rules"),
        ("user", "hi"),
        ("assistant", "run"),
        ("tool", "out"),
        ("user", "end"),
    ]
    messages = question_request(final, "What is the rate limit?")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "user"]
    assert messages[3]["content"] == "[tool result]\nout"
    assert messages[-1]["content"].startswith("What is the rate limit?")
    assert "end" not in json.dumps(messages)
    chinese = question_request(final, "预算是多少？", "zh")[-1]["content"]
    assert chinese.startswith("预算是多少？") and "对话" in chinese


def test_a_question_turn_request_keeps_what_recall_put_before_the_question() -> None:
    turn_request = [("system", "rules"), ("user", "Recalled: the port is 8444.\n\nWhat port?")]
    messages = question_request(turn_request, "What port?")
    assert messages[-1]["content"].startswith("Recalled: the port is 8444.\n\nWhat port? ")
    assert len(messages) == 2


@pytest.fixture
def answering_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A loopback chat-completions server that answers by the question, 500 for a cache one."""
    seen: list[dict[str, Any]] = []
    replies = {"rate": "The rate limit is 5,000 requests.", "tool": "ok"}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            question = body["messages"][-1]["content"]
            if "cache" in question:
                self.send_response(500)
                self.end_headers()
                return
            text = replies["rate"] if "rate" in question else "No idea."
            content = json.dumps({"choices": [{"message": {"content": text}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def test_each_fact_is_asked_from_the_final_context(
    answering_server: tuple[str, list[dict[str, Any]]],
) -> None:
    base_url, seen = answering_server
    ticket = Fact("ticket", ("ticket",), ("SUP-1",), question="Which ticket is it?")
    final = [("system", "summary: the rate limit is 2,500"), ("user", "last turn")]
    answers = ask_all([RATE, CACHE, ticket], "en", final, base_url, "bench-model")
    assert [a["verdict"] for a in answers] == ["stale", "failed", "missing"]
    assert answers[0]["question"] == "What is the rate limit?"  # made from the key
    assert "500" in answers[1]["error"]
    assert tally(answers)["stale"] == ["rate limit"]
    assert all(body["messages"][0]["content"] == final[0][1] for body in seen)
    assert all(body["max_tokens"] == 64 for body in seen)


def _result(retained: list[str], right: list[str] | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "status": "ok",
        "facts": 3,
        "retained": retained,
        "stale": ["b"],
        "contradicted": ["b"],
        "retracted_as_true": [],
        "invented": [],
        "in_last_summary": [],
        "copied": [],
        "identical": [],
        "truncated": [],
        "echoed": [],
        "summary_calls": 2,
        "summary_seconds": [1.0, 2.0],
        "final_tokens": 900,
        "total_tokens": 5000,
        "turn_tokens": 4000,
        "summary_tokens": 1000,
        "capped": True,
    }
    if right is not None:
        result["answer_verdicts"] = {"right": right, "stale": ["b"], "retracted": []}
    return result


def test_the_report_shows_answers_beside_matches_and_sums_each_kind() -> None:
    data = {
        "meta": {
            "date": "d",
            "cpu_count": 2,
            "command": "c",
            "model_title": "m",
            "model_file": "f",
            "model_sha256": "s",
            "llama_cpp": "0",
            "n_ctx": 1,
            "budget": 2048,
            "cap": 256,
        },
        "results": {
            "gen-incident-901": {"agentcore": _result(["a", "c"], ["a"])},
            "gen-incident-902": {"agentcore": _result(["a"], ["a", "c"])},
            "project": {"agentcore": _result(["a"], None)},
        },
    }
    text = report.body(data, {})
    assert "| Answers right |" in text and "| Old and new both |" in text
    row = next(line for line in text.splitlines() if "defaults | 2 |" in line)
    assert "**3** / 6" in row and row.count("**3** / 6") == 2  # kept 3 of 6, answered 3 of 6
    assert "| 2 | 2 | 0 | 10,000 |" in row  # stale, old and new both, retracted, tokens
    # A run without answers shows none rather than zero.
    assert "| agentcore autosummary defaults | **1** / 3 | – | 1 | 1 | 0 | – / – |" in text


def test_the_dry_run_builds_a_seed_set_and_checks_the_scorers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench.quality.run import main

    assert main(["--dry-run", "--set", "tuning", "--kinds", "incident", "mixed"]) == 0
    out = capsys.readouterr().out
    assert "gen-incident-101: " in out and "gen-mixed-103: " in out and "gen-project" not in out
    assert "3 only in tool output" in out and "NOT RETAINED" not in out
    with pytest.raises(SystemExit):
        main(["--dry-run", "--kinds", "incident"])  # --kinds needs a --set
    assert "--kinds chooses among" in capsys.readouterr().err


@pytest.fixture
def summarizer() -> Iterator[str]:
    """A loopback chat-completions server: a fixed summary, and "SEV-1" to every question."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = "It is SEV-1." if body.get("max_tokens") == 64 else "Work on the incident."
            content = json.dumps(
                {
                    "choices": [
                        {"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 4},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_agentcore_replays_a_generated_conversation_and_is_asked_from_its_final_context(
    summarizer: str,
) -> None:
    pytest.importorskip(
        "agentcore_autosummary", reason="the agentcore system summarizes with autosummary"
    )
    from bench.quality import server as servers
    from bench.quality.run import run_one
    from bench.quality.systems import Settings

    script = generator.generate("incident", 901)
    proxy = servers.Proxy(summarizer)
    try:
        settings = Settings(budget=2048, cap=256, base_url=proxy.base_url)
        result = run_one("agentcore-no-recall", script, settings, proxy)
    finally:
        proxy.close()
    assert result["status"] == "ok" and "warning" not in result
    asked = [call for call in proxy.calls if call.system.endswith("/answers")]
    assert len(asked) == len(script.facts)
    assert result["summary_calls"] == len(proxy.calls) - len(asked) > 0
    final = result["final_context"]
    assert final[-1][0] == "user"
    for call, fact in zip(asked, script.facts, strict=True):
        # The final context as the system would send it, its last user message the question.
        assert call.messages == question_request(final, fact.question, script.language)
    verdicts = result["answer_verdicts"]
    assert sum(len(keys) for keys in verdicts.values()) == len(script.facts)
    # "SEV-1" is the final severity of this conversation or an old one: right or stale.
    severity = next(fact for fact in script.facts if fact.key == "severity")
    expected = (
        "right" if "SEV-1" in severity.value else "stale" if "SEV-1" in severity.old else "missing"
    )
    assert "severity" in verdicts[expected]


def test_with_automatic_recall_each_question_is_asked_from_the_request_its_turn_sends(
    summarizer: str,
) -> None:
    pytest.importorskip(
        "agentcore_autosummary", reason="the agentcore system summarizes with autosummary"
    )
    from agentcore_autosummary.recalling.automatic import RECALL_LABEL
    from bench.quality import server as servers
    from bench.quality.run import run_one
    from bench.quality.systems import Settings

    script = generator.generate("incident", 901)
    proxy = servers.Proxy(summarizer)
    try:
        settings = Settings(budget=2048, cap=256, base_url=proxy.base_url)
        result = run_one("agentcore", script, settings, proxy)
    finally:
        proxy.close()
    assert result["status"] == "ok" and "warning" not in result
    asked = [call for call in proxy.calls if call.system.endswith("/answers")]
    assert len(asked) == len(script.facts)
    final = result["final_context"]
    recalled = [
        call
        for call in asked
        if any(RECALL_LABEL in message["content"] for message in call.messages)
    ]
    assert recalled, "no question brought back a summarized message"
    for call, fact in zip(asked, script.facts, strict=True):
        # Each ends with its question; the questions' turns stored nothing.
        question = question_request(final, fact.question, script.language)[-1]
        assert call.messages[-1]["role"] == "user"
        assert call.messages[-1]["content"].endswith(question["content"])
    assert result["turn_calls"] == no_turns(script.turns)


def test_a_run_is_billed_with_its_cache_reads_and_its_summaries() -> None:
    from bench.measure import TokenMeter
    from bench.quality.billed import billed

    meter = TokenMeter()
    system = ("system", "You help. " + "Context. " * 700)  # past the 1,024 tokens cached
    first = [system, ("user", "first question")]
    second = [*first, ("assistant", "first answer"), ("user", "second question")]
    extended = billed("agentcore", [(0, first), (1, second)], [1.0, 2.0], [], meter)
    fresh = [("system", "Another prompt. " + "Other. " * 700), ("user", "second question")]
    rewritten = billed("agentcore", [(0, first), (1, fresh)], [1.0, 2.0], [], meter)
    # The second request read the first's prefix from the cache at both providers.
    assert 0 < extended["openai"] < rewritten["openai"]
    assert 0 < extended["anthropic"] < rewritten["anthropic"]
    summary = (1.5, [*first, ("user", "Summarize.")], 200)
    with_summary = billed("agentcore", [(0, first), (1, second)], [1.0, 2.0], [summary], meter)
    assert with_summary["openai"] > extended["openai"]  # its input and its 200 tokens
