"""The uncached turn tokens by cause (bench/quality/cache_breaks.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the bench is not installed

from bench.billing import BREAK_EVERY, RECALLED_OPENING, Bill
from bench.measure import Pair, TokenMeter
from bench.quality.cache_breaks import CAUSES, uncached_by_cause

SYSTEM = ("system", "You help with the migration. " * 5)
SUMMARY = ("user", "[Summary] " + "The team chose PostgreSQL 16 and a blue-green rollout. " * 100)
PRUNED = ("user", "[Summary] " + "The team chose PostgreSQL 16 and a blue-green rollout. " * 99)
NEWER = ("user", "[Summary] " + "The rollout is done and every index is built. " * 100)


def _turn(number: int) -> list[Pair]:
    return [
        ("user", f"Question {number}: what about the schema of table {number}? " * 3),
        ("assistant", f"Table {number} keeps its columns and gains an index. " * 3),
    ]


def _history(turns: int) -> list[Pair]:
    return [pair for number in range(turns) for pair in _turn(number)]


def _causes(requests: list[tuple[int, list[Pair]]], summaries: list[float]) -> dict[str, int]:
    times = [float(index) for index in range(len(requests))]
    return uncached_by_cause(requests, times, summaries, TokenMeter())


def test_each_kind_of_break_is_named_and_the_total_is_the_bill() -> None:
    short = [SYSTEM, ("user", "Hello")]
    first = [SYSTEM, SUMMARY, *_history(2), ("user", "Next?")]
    grown = [*first[:-1], ("user", "Next?"), ("assistant", "Yes."), ("user", "And then?")]
    opened = [*grown[:-1], ("user", f"{RECALLED_OPENING}: the schema.\nAnd then?")]
    after_recall = [*grown, ("assistant", "Done."), ("user", "Now?")]
    pruned = [SYSTEM, PRUNED, *after_recall[2:], ("assistant", "Ok."), ("user", "Later?")]
    after_summary = [SYSTEM, NEWER, ("user", "What is left?")]
    late = [*after_summary, ("assistant", "Back."), ("user", "After the break?")]
    requests = [
        (0, short),
        (1, first),
        (2, grown),
        (3, opened),
        (4, after_recall),
        (5, pruned),
        (6, after_summary),
        (BREAK_EVERY + 1, late),
    ]
    causes = _causes(requests, summaries=[5.5])

    assert list(causes) == list(CAUSES)
    meter = TokenMeter()
    tokens = [sum(meter.message(pair) for pair in pairs) for _, pairs in requests]
    assert causes["under 1,024"] == tokens[0]
    assert causes["first past 1,024"] == tokens[1]  # nothing of the short one was cached
    assert 0 < causes["extension"] < tokens[2] - 1024 + 128  # what follows the cached prefix
    assert causes["recalled message"] > 0  # the turn after the opened message
    assert causes["front changed"] == tokens[5]  # the summary rewritten: nothing read
    assert causes["after a summary"] == tokens[6]
    assert causes["cache expired"] == tokens[7]  # the break outlived every entry

    bill = Bill("agentcore")
    for turn, pairs in requests:
        bill.add(turn, pairs, [meter.message(pair) for pair in pairs])
    openai = bill.figures()["openai"]
    assert sum(causes.values()) == openai["input"] - openai["cache_read"]


def test_a_conversation_that_only_grows_pays_only_its_new_tokens() -> None:
    requests = [(turn, [SYSTEM, SUMMARY, *_history(turn + 1)]) for turn in range(8)]
    causes = _causes(requests, summaries=[])

    assert causes["front changed"] == causes["recalled message"] == 0
    assert causes["cache expired"] == causes["after a summary"] == 0
    assert causes["extension"] > 0
