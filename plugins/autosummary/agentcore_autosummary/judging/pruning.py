"""Older summary text without the values later text replaced.

A summary kept as parts (``strategy="segments"``) holds what each stretch of
the conversation said. When a later stretch gives a subject a new value
("the rate limit is now 2,800"), the older part still states the old one, and
a small model asked to merge the two keeps both. Before a new part is added,
every older part loses the sentences (or, in a sentence that also states a
live value, the clauses) whose value a later part or the new messages replace
or withdraw (see :func:`~agentcore_autosummary.judging.superseding.is_superseded`;
a value named again in its own withdrawal, "we are not rolling back to v4.21.0
after all", is withdrawn all the same: see
:func:`~agentcore_autosummary.judging.withdrawals.retracts`); a sentence a later
one withdraws in its own words ("it is not a slow upstream cache after all", see
:func:`~agentcore_autosummary.judging.withdrawals.withdraws_statement`) goes too;
the older part never states a value the conversation changed.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from agentcore import Message
from agentcore_autosummary.judging.quoting import QUOTED, live_clauses, written_text
from agentcore_autosummary.judging.superseding import gets_new_subject_value
from agentcore_autosummary.judging.withdrawals import retracts, withdraws_statement
from agentcore_autosummary.keeping.state import Segment
from agentcore_autosummary.text.identifiers import find_identifiers, holds
from agentcore_autosummary.text.sentences import inline_sentences, without_questions
from agentcore_autosummary.text.statements import restated_otherwise
from agentcore_autosummary.text.subjects import WordUses, word_uses
from agentcore_autosummary.text.words import has_cjk

__all__ = ["TAIL_CHARS", "current_parts", "newest_tail", "without_superseded"]

_ENDS = ".!?。！？;；:：,，"

TAIL_CHARS = 200_000
"""The most characters of the verbatim tail a summary part is pruned against (about
50,000 tokens).

The tail is short while summaries succeed; when they keep failing it grows with every
turn, and the pruning reads only its newest messages, so its work stays bounded."""


def newest_tail(messages: Sequence[Message], start: int) -> list[Message]:
    """The newest of ``messages[start:]`` whose texts hold at most :data:`TAIL_CHARS`.

    Walks back from the newest message, so the work is bounded whatever the
    length of ``messages``.
    """
    kept: list[Message] = []
    size = 0
    for index in range(len(messages) - 1, start - 1, -1):
        size += len(messages[index].text or "")
        if size > TAIL_CHARS and kept:
            break
        kept.append(messages[index])
    return kept[::-1]


def current_parts(
    earlier: Sequence[Segment],
    newest: Segment,
    messages: Sequence[Message],
    tail: Sequence[Message] = (),
) -> tuple[Segment, ...]:
    """Every part, ``newest`` last, less the values what came after it replaced.

    An older part is pruned against the parts after it, the new messages and
    the verbatim ``tail`` (the messages after the summary); the newest part
    against the tail (see :func:`without_superseded`); a part
    left with nothing keeps its text (what it covers stays accounted for).
    """
    covered = "\n".join(written_text(message) for message in messages)
    after = "\n".join(written_text(message) for message in tail)
    parts = (*earlier, newest)
    texts = [segment.text for segment in parts]
    uses = word_uses("\n".join([*texts, covered, after]))
    current: list[Segment] = []
    for index, segment in enumerate(parts):
        later = "\n".join([*texts[index + 1 :], covered if segment is not newest else "", after])
        if not later.strip():
            current.append(segment)
            continue
        pruned = without_superseded(segment.text, later, uses)
        current.append(attrs.evolve(segment, text=pruned) if pruned.strip() else segment)
    return tuple(current)


def without_superseded(text: str, later: str, uses: WordUses | None = None) -> str:
    """``text`` less what ``later`` replaced: its values given a new one, or withdrawn.

    Line by line, sentence by sentence: a sentence keeps its clauses that state a
    value still live when another of its values is replaced, and goes when none is
    left; a value ``later`` states again is live. The questions of ``later`` count
    for neither (:func:`~agentcore_autosummary.text.sentences.without_questions`). A
    quotes heading left with no quote after it goes too. ``uses``: the
    conversation's words counted (see
    :func:`~agentcore_autosummary.text.subjects.word_uses`), by default those of
    ``text`` and ``later``.
    """
    later = without_questions(later)  # a question changes no value
    counted = word_uses(f"{text}\n{later}") if uses is None else uses
    lines: list[str] = []
    for line in text.split("\n"):
        kept = _pruned_line(line, later, counted)
        if kept is not None:
            lines.append(kept)
    return _joined_lines(lines)


def as_ledger(text: str, uses: WordUses | None = None) -> str:
    """``text`` read in order, as a ledger: each line less what its later lines replaced.

    A summary may state a value and, further on, its update ("the help center
    module is owned by Chloe Holm", then "now owned by Maren Kim"); the later
    statement holds (see :func:`without_superseded`, here with each line's own
    later lines). ``uses``: as for :func:`without_superseded`, by default those of ``text``.
    """
    lines = text.split("\n")
    counted = word_uses(text) if uses is None else uses
    kept: list[str] = []
    for at, line in enumerate(lines):
        later = without_questions("\n".join(lines[at + 1 :]))
        pruned = _pruned_line(line, later, counted) if later.strip() else line
        if pruned is not None:
            kept.append(pruned)
    return _joined_lines(kept)


def _joined_lines(lines: list[str]) -> str:
    """``lines`` as one text, less the empty lines and quotes heading left at its end."""
    while lines and lines[-1].strip() in ("", QUOTED):
        lines.pop()
    return "\n".join(lines)


def _pruned_line(line: str, later: str, uses: WordUses) -> str | None:
    """``line`` less its replaced sentences and clauses; None when nothing of it is left."""
    body = line.lstrip()
    marker = "- " if body.startswith("- ") else ""
    indent = line[: len(line) - len(body)]
    body = body[len(marker) :]
    parts = [part for part in inline_sentences(body) if part.strip()]
    if not parts:
        return line
    kept: list[str] = []
    changed = False
    for part in parts:
        if withdraws_statement(part, later):  # "it is not a slow upstream cache after all"
            changed = True
            continue
        values = find_identifiers(part)
        replaced = [
            value
            for value in values
            if retracts(value, later)  # named again in its own withdrawal
            or restated_otherwise(value, part, later)  # named again, then replaced
            or (not holds(later, value) and gets_new_subject_value(value, part, later, uses))
        ]
        if not replaced:
            kept.append(part.strip())
            continue
        changed = True
        live = [value for value in values if value not in replaced]
        rest = live_clauses(part, live, replaced) if live else ""
        if rest:
            kept.append(rest.strip())
    if not changed:
        return line
    if not kept:
        return None
    return indent + marker + _joined(kept)


def _joined(parts: list[str]) -> str:
    """``parts`` as one line; a part cut from a run-on sentence gets its full stop back.

    The full stop of its script: ``。`` after a Chinese character.
    """
    ended = [part if part[-1] in _ENDS else _full_stop(part) for part in parts[:-1]]
    return " ".join([*ended, parts[-1]])


def _full_stop(part: str) -> str:
    """``part`` ended by a full stop of its script."""
    return f"{part}。" if has_cjk(part[-1]) else f"{part}."
