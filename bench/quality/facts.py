"""Planted facts with subjects, and the strict scoring of a final context.

A :class:`Fact` names its subject (the words a statement of it uses, any
spelling in ``subject``), its final value (any spelling in ``value``) and, for
a fact updated during the conversation, its superseded values (``old``); a
fact may also have *retracted* values, stated once and then withdrawn ("we
are not using Redis after all"). Generated facts also say where each value
was said (turn indices) and carry the question that asks for them.

Scoring reads the final context (what a system would send to the model at
the end) as a sequence of statements: the text is cut into segments at line
ends and sentence ends, and a segment states a fact when it holds one of the
subject's spellings with one of the fact's values close to it (within
:data:`BEFORE` characters before the subject or :data:`AFTER` after it). The
last statement of a fact in the context is what a reader of the context
believes: it is *retained* when that value is the final one, *stale* when it
is a superseded one. When one segment holds both ("from 5,000 to 2,500"), the
value written last counts. An *invented* value is one next to the subject,
of the fact's kind (its ``pattern``), that appears nowhere in the
conversation.

Beside the last statement, every statement counts too: a fact is
*contradicted* when the context holds one statement of its final value and
another of a superseded one (the reader is left with both), and a retracted
value is *stated as true* when a segment gives it next to the subject with no
word of negation (:data:`NEGATION`) in that segment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

BEFORE = 40
AFTER = 90
_SEGMENT = re.compile(r"(?<=[.!?;])\s+|[\n。；！？]+|(?<=\|)")
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d{3})")
NEGATION = re.compile(
    r"\b(?:not|no|no longer|never|dropped|instead|rather than|after all|cancell?ed|"
    r"scrapped|abandoned|ruled out|withdrawn|replac\w*|removed|switched from)\b|n't\b|"
    r"不|没|取消|放弃|排除|改用|改为|换成"
)
"""Words that make a segment deny a retracted value rather than state it (lower case)."""


@dataclass(frozen=True)
class Fact:
    """One planted fact: what it names, its final value, the values it replaced."""

    key: str
    subject: tuple[str, ...]
    value: tuple[str, ...]
    old: tuple[str, ...] = ()
    pattern: str | None = None
    """A regex of the values of this kind (numbers, dates, ids), to find invented ones."""
    retracted: tuple[str, ...] = ()
    """Values stated once and then withdrawn: they must not be stated as true at the end."""
    said_at: int | None = None
    """The turn (an index of ``Script.turns``) where the final value was said."""
    old_at: tuple[int, ...] = ()
    """The turns where the superseded values were said, oldest first (one per value)."""
    retracted_at: tuple[int, ...] = ()
    """The turns where the retracted values were said (one per value)."""
    question: str = ""
    """What a user would ask to get the fact back ("What port does billing listen on?")."""
    in_tool_output: bool = False
    """The final value is said only in a tool's output, never in a user or assistant message."""

    @property
    def updated(self) -> bool:
        """The fact's value changed during the conversation."""
        return bool(self.old)


def normalize(text: str) -> str:
    """Lower case, no thousands separators, single spaces, ASCII colons."""
    text = _DIGIT_COMMA.sub("", text.lower()).replace("：", ":").replace("，", ",")
    return re.sub(r"\s+", " ", text)


def segments(text: str) -> list[str]:
    """``text`` cut at line and sentence ends (English and Chinese punctuation)."""
    return [part for part in _SEGMENT.split(normalize(text)) if part and part.strip()]


def _find(haystack: str, needle: str) -> list[int]:
    """Start offsets of ``needle`` in ``haystack``, not inside a longer number or word."""
    needle = normalize(needle)
    out = []
    for match in re.finditer(re.escape(needle), haystack):
        start, end = match.start(), match.end()
        before = haystack[start - 1] if start else " "
        after = haystack[end] if end < len(haystack) else " "
        if needle[0].isalnum() and before.isascii() and before.isalnum():
            continue
        if needle[-1].isalnum() and after.isascii() and after.isalnum():
            continue
        out.append(start)
    return out


def mentions(text: str, spellings: Sequence[str]) -> bool:
    """One of ``spellings`` is in ``text`` as a whole word or number (both normalized)."""
    haystack = normalize(text)
    return any(_find(haystack, spelling) for spelling in spellings)


def _windows(segment: str, fact: Fact) -> list[tuple[str, int]]:
    """The text around each mention of the fact's subject, with the subject's offset in it."""
    out = []
    for spelling in fact.subject:
        for start in _find(segment, spelling):
            low = max(0, start - BEFORE)
            out.append((segment[low : start + len(normalize(spelling)) + AFTER], start - low))
    return out


def denies(segment: str) -> bool:
    """The segment holds a word of negation (it may withdraw a value rather than state it)."""
    return NEGATION.search(normalize(segment)) is not None


def statement(segment: str, fact: Fact) -> str | None:
    """``"final"``, ``"old"``, ``"retracted"`` or None: the value this segment gives the fact.

    A retracted value counts only in a segment that does not deny it (:func:`denies`).
    """
    best: tuple[int, str] | None = None
    kinds: list[tuple[str, tuple[str, ...]]] = [("final", fact.value), ("old", fact.old)]
    if fact.retracted and not denies(segment):
        kinds.append(("retracted", fact.retracted))
    for window, _ in _windows(segment, fact):
        for kind, spellings in kinds:
            for spelling in spellings:
                for offset in _find(window, spelling):
                    if best is None or offset > best[0]:
                        best = (offset, kind)
    return best[1] if best else None


def invented(segment: str, fact: Fact, known: set[str]) -> list[str]:
    """Values of the fact's kind next to its subject that the conversation never stated."""
    if fact.pattern is None:
        return []
    pattern = re.compile(fact.pattern, re.IGNORECASE)
    out = []
    for window, subject_at in _windows(segment, fact):
        after = [m for m in pattern.finditer(window) if m.start() >= subject_at]
        if after and normalize(after[0].group(0)) not in known:
            out.append(after[0].group(0))
    return out


def known_values(texts: Iterable[str], facts: Sequence[Fact]) -> set[str]:
    """Every value of any fact's kind that the conversation states anywhere."""
    joined = normalize("\n".join(texts))
    out: set[str] = set()
    for fact in facts:
        if fact.pattern is not None:
            out.update(m.group(0) for m in re.finditer(fact.pattern, joined, re.IGNORECASE))
    return out


@dataclass(frozen=True)
class Score:
    """What a text says about the planted facts."""

    retained: tuple[str, ...]
    stale: tuple[str, ...]
    invented: tuple[tuple[str, str], ...]
    """(fact key, value) pairs."""
    contradicted: tuple[str, ...] = ()
    """Facts stated with their final value and, elsewhere, with a superseded one."""
    retracted_as_true: tuple[str, ...] = ()
    """Facts one of whose retracted values some segment states without denying it."""

    def as_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "retained": list(self.retained),
            "stale": list(self.stale),
            "invented": [list(pair) for pair in self.invented],
            "contradicted": list(self.contradicted),
            "retracted_as_true": list(self.retracted_as_true),
        }


def score(texts: Sequence[str], facts: Sequence[Fact], known: set[str]) -> Score:
    """Score ``texts`` (the messages of a context, in order) strictly."""
    last: dict[str, str] = {}
    seen: dict[str, set[str]] = {fact.key: set() for fact in facts}
    made_up: list[tuple[str, str]] = []
    for text in texts:
        for segment in segments(text):
            for fact in facts:
                found = statement(segment, fact)
                if found is not None:
                    last[fact.key] = found
                    seen[fact.key].add(found)
                made_up.extend((fact.key, value) for value in invented(segment, fact, known))
    return Score(
        retained=tuple(f.key for f in facts if last.get(f.key) == "final"),
        stale=tuple(f.key for f in facts if last.get(f.key) == "old"),
        invented=tuple(dict.fromkeys(made_up)),
        contradicted=tuple(f.key for f in facts if {"final", "old"} <= seen[f.key]),
        retracted_as_true=tuple(f.key for f in facts if "retracted" in seen[f.key]),
    )
