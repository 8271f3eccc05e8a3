"""Seeded conversations of five kinds, split into a tuning set and an evaluation set.

``generate(kind, seed)`` builds one conversation (a
:class:`~bench.quality.conversations.Script`, the shape every system of the
bench replays) with its fact table. Its key is ``gen-{kind}-{seed}``. The
seeds are fixed here: defaults and heuristics are chosen by measuring the
**tuning** set; published figures come from the **evaluation** set, which no
choice was made on. The two never share a seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bench.quality.conversations import Script
from bench.quality.kinds_en import project, support
from bench.quality.kinds_incident import incident
from bench.quality.kinds_zh import chinese, mixed

KINDS: dict[str, Callable[[int], Script]] = {
    "project": project,
    "incident": incident,
    "support": support,
    "chinese": chinese,
    "mixed": mixed,
}
"""Every kind of generated conversation, by name."""
SEEDS: dict[str, tuple[int, ...]] = {
    "tuning": (101, 102, 103),
    "evaluation": (901, 902, 903),
}
"""The seeds of each set, the same for every kind."""
PREFIX = "gen-"


def key(kind: str, seed: int) -> str:
    """The conversation key of a generated conversation: ``gen-{kind}-{seed}``."""
    return f"{PREFIX}{kind}-{seed}"


def parse(name: str) -> tuple[str, int]:
    """``(kind, seed)`` of a key made by :func:`key`; ValueError naming the problem."""
    kind, _, seed = name.removeprefix(PREFIX).rpartition("-")
    if not name.startswith(PREFIX) or kind not in KINDS or not seed.isdigit():
        raise ValueError(
            f"{name!r} is not a generated conversation key: expected {PREFIX}KIND-SEED "
            f"with KIND one of {', '.join(KINDS)}"
        )
    return kind, int(seed)


def generate(kind: str, seed: int) -> Script:
    """The conversation of ``kind`` generated from ``seed``."""
    if kind not in KINDS:
        raise ValueError(f"unknown conversation kind {kind!r}: choose from {', '.join(KINDS)}")
    return KINDS[kind](seed)


def keys(set_name: str, kinds: Sequence[str] | None = None) -> list[str]:
    """The keys of a seed set (``tuning`` or ``evaluation``), kind by kind."""
    if set_name not in SEEDS:
        raise ValueError(f"unknown seed set {set_name!r}: choose from {', '.join(SEEDS)}")
    return [key(kind, seed) for kind in kinds or KINDS for seed in SEEDS[set_name]]


def build(name: str) -> Script:
    """The generated conversation a key names."""
    return generate(*parse(name))
