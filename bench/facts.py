"""Planted facts, the faithful summarizer every fake model uses, and the retention probes.

Facts of four kinds (a name, a number, a decision, an identifier) are each
stated once, in the user message of a known turn. Every fact is one sentence
starting with its marker (``Fact F03:``), so the faithful summarizer and the
probes can find it in any text without knowing the list.

The summarizer keeps the facts it is shown, in the order given, up to its
token cap, and nothing else: what a system's summaries retain then depends
only on what its policy lets the summarizer see. At the probe turns, late in
the conversation, the first request of the turn is searched for every fact
planted so far: present verbatim or in a summary, it counts as retained.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bench.conversations import Conversation

if TYPE_CHECKING:  # measure imports this module
    from bench.measure import Pair, TokenMeter

FACT_PATTERN = re.compile(r"Fact F(\d{2}): [^.]*\.")
"""One planted fact: its marker and its sentence, up to the first full stop."""

_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "name",
        (
            "the on-call owner of the billing service is Ingrid Halvorsen",
            "the customer contact at Norbeck Freight is Tomasz Wielgosz",
            "the reviewer for the schema change is Amara Oyelaran",
            "the release manager this quarter is Keiko Tanabe",
        ),
    ),
    (
        "number",
        (
            "the retry budget agreed for the payment client is 37 calls per minute",
            "the invoice table holds 4812377 rows as of the last audit",
            "the latency objective for checkout is 245 milliseconds at p99",
            "the cache holds 9614 entries at most per region",
        ),
    ),
    (
        "decision",
        (
            "we decided to move the order queue from Redis to Postgres",
            "we decided to roll back the pricing feature flag on Friday",
            "we decided to shard the events table by customer id",
            "we decided to keep the legacy export endpoint until March",
        ),
    ),
    (
        "identifier",
        (
            "the failing build is pipeline run BLD-58213-QX",
            "the incident ticket for the outage is INC-20931-KV",
            "the staging cluster is called eu-west-7b-orchid",
            "the migration file is 0047_split_invoice_lines",
        ),
    ),
)


@dataclass(frozen=True)
class Fact:
    """One planted fact: its number, kind, sentence and the turn that states it."""

    number: int
    kind: str
    sentence: str
    turn: int


def _sentences() -> list[tuple[str, str]]:
    """The facts' kinds and texts, the kinds interleaved: name, number, decision, identifier."""
    out = []
    for index in range(len(_KINDS[0][1])):
        for kind, texts in _KINDS:
            out.append((kind, texts[index]))
    return out


FACT_COUNT = len(_sentences())
PLANT_FROM = 0.03
"""The first fact is stated at this fraction of the conversation, the last at :data:`PLANT_TO`."""
PLANT_TO = 0.80
PROBES = (0.85, 0.92, 1.0)
"""Probe turns as fractions of the conversation (1.0: the last turn)."""


def plant_turns(turns: int) -> list[int]:
    """The turns that state the facts, spread evenly from 3% to 80% of ``turns``."""
    first, last = PLANT_FROM * (turns - 1), PLANT_TO * (turns - 1)
    step = (last - first) / (FACT_COUNT - 1)
    return [round(first + index * step) for index in range(FACT_COUNT)]


def probe_turns(turns: int) -> list[int]:
    """The turns whose first request is searched for the planted facts."""
    return sorted({min(turns - 1, round(fraction * (turns - 1))) for fraction in PROBES})


def plant(conversation: Conversation) -> tuple[Conversation, list[Fact]]:
    """``conversation`` with one fact stated at the start of each planting turn's user message."""
    turns = list(conversation.turns)
    facts = []
    for number, ((kind, text), turn) in enumerate(
        zip(_sentences(), plant_turns(len(turns)), strict=True), start=1
    ):
        sentence = f"Fact F{number:02d}: {text}."
        facts.append(Fact(number, kind, sentence, turn))
        turns[turn] = replace(turns[turn], user=f"{sentence} {turns[turn].user}")
    return replace(conversation, turns=tuple(turns)), facts


def found(texts: Iterable[str]) -> list[str]:
    """The planted fact sentences in ``texts``, in order of first appearance, each once."""
    seen: dict[str, None] = {}
    for text in texts:
        for match in FACT_PATTERN.finditer(text):
            seen.setdefault(match.group(0), None)
    return list(seen)


def fact_numbers(texts: Iterable[str]) -> set[int]:
    """The numbers of the planted facts stated in ``texts``."""
    return {int(match.group(1)) for text in texts for match in FACT_PATTERN.finditer(text)}


SUMMARY_HEADER = "Summary of the conversation so far."
"""Every summary starts with this line, facts or none."""


def faithful_summary(pairs: Sequence[Pair], cap: int, meter: TokenMeter) -> str:
    """The summary of a summarizer request: the facts it shows, in order, within ``cap`` tokens.

    Facts are kept whole, from the first shown, while the summary (counted as
    one assistant message) stays within ``cap``; the rest are dropped.
    """
    text = SUMMARY_HEADER
    for sentence in found(content for _, content in pairs):
        longer = f"{text} {sentence}"
        if meter.request([("assistant", longer)]) > cap:
            break
        text = longer
    return text


def retention(seen: dict[int, set[int]], facts: Sequence[Fact]) -> dict[str, object]:
    """Per probe turn, the facts planted before it and those its request carried."""
    probes = []
    kept_total = planted_total = 0
    by_kind: dict[str, list[int]] = {}
    for turn, present in sorted(seen.items()):
        planted = [fact for fact in facts if fact.turn < turn]
        kept = [fact for fact in planted if fact.number in present]
        kept_total += len(kept)
        planted_total += len(planted)
        for fact in planted:
            counts = by_kind.setdefault(fact.kind, [0, 0])
            counts[0] += fact.number in present
            counts[1] += 1
        probes.append(
            {"turn": turn, "planted": len(planted), "kept": sorted(f.number for f in kept)}
        )
    return {
        "probes": probes,
        "retention": kept_total / planted_total if planted_total else None,
        "by_kind": {kind: kept / total for kind, (kept, total) in by_kind.items()},
    }
