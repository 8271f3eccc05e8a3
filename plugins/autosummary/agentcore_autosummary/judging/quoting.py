"""``retention_check="quote"``: the sentences that state what a summary left out, kept verbatim.

A small summarizer drops facts, or keeps a value the conversation later
changed. After each summary, every sentence of its input that states an
identifier the summary does not hold (see
:func:`~agentcore_autosummary.text.identifiers.find_identifiers` and
:func:`~agentcore_autosummary.text.identifiers.holds`) is a candidate to quote: the
sentences of the previous summary (with its own quotes), then those the user
and the assistant wrote in the covered messages. Tool results are not quoted
(their identifiers are mostly log lines and output); the summary request read
them. Only statements are quoted (see
:func:`~agentcore_autosummary.text.sentences.is_statement`): not questions, not a
line that introduces a block (ending in a colon), not code or log lines.

A candidate whose missing identifiers all got another value later is
dropped (see :mod:`~agentcore_autosummary.judging.superseding`: a later sentence of
the input gives the identifier's subject a new value), so a quote is never
made for a superseded value; when a sentence states live and superseded values
("the Python version is 3.11, the branch is fix/x"), only its clauses that state
a live value and no superseded one are quoted (see :func:`live_clauses`).
Of the :data:`MAX_CANDIDATES` newest sentences (among the :data:`MAX_SENTENCES`
newest of the messages) that state a missing identifier still live, those that give
it as the value of a subject ("the Python version is now 3.12", see
:func:`~agentcore_autosummary.text.subjects.states_value`) are looked at first, then
the others, newest first in each group; a sentence is kept when it states a missing
identifier no kept sentence states, while the summary and its quotes fit in the
summary's cap and half of it more. A sentence of the previous summary is also
dropped when the new summary gives its subject another value (the new summary was
written from newer messages). The kept sentences follow the summary in the
conversation's order, under :data:`QUOTED`, one per line, so the newest statement of
a fact is the last one a reader meets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import accumulate

from attrs import frozen

from agentcore import Message, TextBlock
from agentcore.plugin_api import TokenCounter
from agentcore_autosummary.judging.superseding import is_superseded
from agentcore_autosummary.text.identifiers import find_identifiers, holds
from agentcore_autosummary.text.sentences import (
    clauses,
    inline_sentences,
    is_statement,
    sentences,
)
from agentcore_autosummary.text.subjects import states_value, word_uses
from agentcore_autosummary.text.words import folded

__all__ = [
    "MAX_CANDIDATES",
    "MAX_QUOTE_CHARS",
    "MAX_SENTENCES",
    "QUOTED",
    "fitting_lines",
    "live_clauses",
    "quote_missing",
    "without_quotes",
    "without_repeats",
    "written_text",
]

QUOTED = "Quoted from the conversation:"
"""The line that starts the quotes ``retention_check="quote"`` adds to a summary."""

MAX_QUOTE_CHARS = 400
"""Sentences longer than this are never quoted (a pasted block, not a statement)."""

MAX_CANDIDATES = 200
"""The newest sentences that could be quoted (stating a missing value still live), at most."""

MAX_SENTENCES = 5_000
"""The sentences of the newest messages looked at, at most (see :func:`quote_missing`)."""

MIN_QUOTE_TOKENS = 8
"""Room under the cap below which no more quotes are looked for."""


def live_clauses(sentence: str, live: Sequence[str], superseded: Sequence[str]) -> str:
    """The clauses of ``sentence`` that state a ``live`` identifier and no ``superseded`` one.

    The clauses are those :func:`~agentcore_autosummary.text.sentences.clauses` cuts.
    ``sentence`` comes back whole when no identifier is superseded.
    """
    if not superseded:
        return sentence
    kept = []
    for clause in clauses(sentence):
        if any(holds(clause, value) for value in superseded):
            continue
        if any(holds(clause, value) for value in live):
            kept.append(clause)
    return "; ".join(kept)


def without_quotes(summary: str) -> str:
    """``summary`` without the quotes :func:`quote_missing` added (what a summarizer is shown).

    A summary request shows the previous summary without its quotes: a small model
    asked to update it copies them into its reply and runs into its cap, while the
    quotes come back anyway (they are candidates of the next summary's quotes).
    """
    return summary.split(f"\n{QUOTED}")[0].rstrip()


_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
MIN_REPEAT_CHARS = 12
"""Sentences shorter than this (a heading, a label) are never dropped as repeats."""


def without_repeats(summary: str) -> str:
    """``summary`` without the sentences that repeat an earlier one of it word for word.

    Small models repeat themselves when asked to update a summary (a paragraph or a
    list item written twice); every repeat is sent again with every turn. A
    sentence is a repeat when, case and white space aside, it equals an earlier
    sentence of the summary; a line left empty by its repeats is dropped, list
    markers and the other lines stay as they were.
    """
    seen: set[str] = set()
    lines: list[str] = []
    for line in summary.split("\n"):
        marker = _LIST_MARKER.match(line)
        prefix = marker.group() if marker else ""
        body = line[len(prefix) :]
        if not body.strip():
            lines.append(line)
            continue
        kept: list[str] = []
        for part in inline_sentences(body):
            key = folded(part)
            if not key:
                continue
            if len(key) >= MIN_REPEAT_CHARS and key in seen:
                continue
            seen.add(key)
            kept.append(part.strip())
        if kept:
            joined = kept[0]
            for part in kept[1:]:
                joined += part if joined.endswith(("。", "！", "？")) else f" {part}"
            lines.append(prefix + joined)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def written_text(message: Message) -> str:
    """What the user or the assistant wrote in ``message`` (tool results left out)."""
    if message.role not in ("user", "assistant"):
        return ""
    content = message.content
    if len(content) == 1 and type(content[0]) is TextBlock:  # most messages: one text
        return content[0].text
    return "\n".join(block.text for block in content if isinstance(block, TextBlock))


def _newest_sentences(messages: Sequence[Message]) -> list[str]:
    """The sentences of what the user and the assistant wrote, oldest first.

    At most those of the newest messages that hold :data:`MAX_SENTENCES` sentences
    (a summary of the whole history, ``strategy="full"``, would read every one).
    """
    newest: list[list[str]] = []
    count = 0
    end = len(messages)
    while end > 0 and count < MAX_SENTENCES:
        # A group of messages at a time, their texts cut as one: a line end parts them,
        # so the cuts are each text's own. A group that reaches the cap is cut again
        # message by message, to stop at the same message.
        start = max(0, end - _GROUP)
        texts = [written_text(message) for message in messages[start:end]]
        parts = sentences("\n".join(texts))
        if count + len(parts) < MAX_SENTENCES:
            newest.append(parts)
            count += len(parts)
            end = start
            continue
        for text in reversed(texts):
            parts = sentences(text)
            newest.append(parts)
            count += len(parts)
            if count >= MAX_SENTENCES:
                break
        break
    return [part for parts in reversed(newest) for part in parts]


_GROUP = 64
"""How many messages :func:`_newest_sentences` cuts into sentences at once."""


@frozen
class _Candidate:
    """A sentence that could be quoted: where it is, what to quote, what it states."""

    index: int
    quote: str
    live: list[str]
    valued: bool


def quote_missing(
    summary: str,
    previous: str | None,
    messages: Sequence[Message],
    counter: TokenCounter,
    max_tokens: int,
) -> str:
    """``summary`` followed by the quotes of what it left out (see the module).

    The summary and its quotes take at most ``max_tokens`` tokens
    (:attr:`~agentcore_autosummary.SummaryConfig.summary_room`: the cap and half of it
    more). Quotes the summarizer copied from the previous summary are made again from
    their sentences (and dropped when superseded). Without a sentence to quote,
    ``summary`` comes back as it was, less any copied quotes.
    """
    summary = without_repeats(without_quotes(summary))  # copied quotes, repeated sentences
    recalled = [part for part in sentences(previous or "") if part != QUOTED]
    texts = [*recalled, *_newest_sentences(messages)]
    found = [
        (index, part)
        for index, part in enumerate(texts)
        if len(part) <= MAX_QUOTE_CHARS and is_statement(part)
    ]
    joined = "\n".join(part for _, part in found)
    starts = list(accumulate((len(part) + 1 for _, part in found), initial=0))
    candidates: list[_Candidate] = []
    uses = word_uses(f"{joined}\n{summary}")  # what tells facts of one pattern apart
    for position in range(len(found) - 1, -1, -1):
        if len(candidates) == MAX_CANDIDATES:
            break
        index, sentence = found[position]
        missing = [i for i in find_identifiers(sentence) if not holds(summary, i)]
        if not missing:
            continue
        later = joined[starts[position + 1] :]  # the sentences after this one
        if index < len(recalled):
            # The previous summary's own statement: the new summary, written from newer
            # messages, may have changed the value (or the previous one was wrong).
            later = f"{later}\n{summary}"
        live = [i for i in missing if not is_superseded(i, sentence, later, uses)]
        if not live:
            continue
        stale = [i for i in missing if i not in live]
        quote = live_clauses(sentence, live, stale)
        if quote:
            valued = any(states_value(i, quote) for i in live)
            candidates.append(_Candidate(index, quote, live, valued))
    # Sentences that give a missing identifier as the value of a subject first ("the
    # Python version is now 3.12"), then any other (" ... the warnings that 3.12 adds").
    ordered = [c for c in candidates if c.valued] + [c for c in candidates if not c.valued]
    used = counter.count_text(f"{summary}\n\n{QUOTED}")
    kept = fitting_lines(((c.index, c.quote, c.live) for c in ordered), counter, used, max_tokens)
    if not kept:
        return summary
    return "\n".join([summary, "", QUOTED, *kept])


def fitting_lines(
    candidates: Iterable[tuple[int, str, Sequence[str]]],
    counter: TokenCounter,
    used: int,
    max_tokens: int,
) -> list[str]:
    """The candidates kept as list lines (``- text``), in the order of their index.

    ``candidates`` are ``(index, text, identifiers)``, best first; each is kept
    while the lines fit ``max_tokens`` with the ``used`` tokens already taken, and
    one whose identifiers a kept line all states already is passed over.
    """
    stated: set[str] = set()
    kept: list[tuple[int, str]] = []
    for index, text, identifiers in candidates:
        if max_tokens - used < MIN_QUOTE_TOKENS:
            break
        if identifiers and all(identifier in stated for identifier in identifiers):
            continue
        line = f"- {text}"
        cost = counter.count_text(line) + 1
        if used + cost > max_tokens:
            continue
        used += cost
        stated.update(identifiers)
        kept.append((index, line))
    return [line for _, line in sorted(kept)]
