"""``retention_check="quote"``: the sentences that state what a summary left out, kept verbatim.

A small summarizer drops facts, or keeps a value the conversation later
changed. After each summary, every sentence of its input that states an
identifier the summary does not hold (see
:func:`~agentcore_autosummary.judging.identifiers.find_identifiers` and
:func:`~agentcore_autosummary.judging.identifiers.holds`) is a candidate to quote: the
sentences of the previous summary (with its own quotes), then those the user
and the assistant wrote in the covered messages. Tool results are not quoted
(their identifiers are mostly log lines and output); the summary request read
them. Only statements are quoted (see :func:`is_statement`): not questions, not
a line that introduces a block (ending in a colon), not code or log lines.

A candidate whose missing identifiers all got another value later is
dropped (see :mod:`~agentcore_autosummary.judging.superseding`: a later sentence of
the input gives the identifier's subject a new value), so a quote is never
made for a superseded value; when a sentence states live and superseded values
("the Python version is 3.11, the branch is fix/x"), only its clauses that state
a live value and no superseded one are quoted (see :func:`live_clauses`).
Of the :data:`MAX_CANDIDATES` newest sentences (among the
:data:`MAX_SENTENCES` newest of the messages) that state a missing identifier
still live, those that give it as the value of a subject ("the Python version is
now 3.12", see :func:`states_value`) are looked at first, then the others, newest
first in each group; a sentence is kept when it states a missing identifier no
kept sentence states, while the summary and its quotes fit in the summary's cap
and half of it more. A sentence of the previous summary is also dropped when
the new summary gives its subject another value (the new summary was written
from newer messages). The kept sentences follow the summary in the
conversation's order, under :data:`QUOTED`, one per line, so the newest
statement of a fact is the last one a reader meets.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate

from attrs import frozen

from agentcore import Message, TextBlock
from agentcore.plugin_api import TokenCounter
from agentcore_autosummary.judging.identifiers import find_identifiers, holds
from agentcore_autosummary.judging.superseding import gets_new_value, subject, subjects_after

__all__ = [
    "MAX_CANDIDATES",
    "MAX_QUOTE_CHARS",
    "MAX_SENTENCES",
    "QUOTED",
    "is_statement",
    "live_clauses",
    "quote_missing",
    "sentences",
    "states_value",
    "whole_sentences",
    "without_quotes",
    "without_repeats",
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

_CODE_CHARACTERS = re.compile(r"[=\{\}\[\]`|<>]")
_PLAIN_WORD = re.compile(r"^[(\"']?[^\W\d_]+(?:[-'’][^\W\d_]+)*[.,;:!?)\"']*$")
_CJK = re.compile(r"[\u3400-\u9fff]")
_MIN_PLAIN_WORDS = 3
_CLAUSE_END = re.compile(r"(?<=[,;:])\s+|(?<=[，；：])")
_CLAUSE_JOINER = re.compile(r"^(?:and|but|or|so|while|which|而且|并且|而|并)\s*", re.IGNORECASE)
_SENTENCE_MARK = re.compile(r"[.!?;。！？；\n]")  # one class: scanned faster than an alternation
_LINE_ENDS = re.compile(r"\n+")
_WIDE_ENDS = "。！？；"
_SPACES = re.compile(r"\s+")


def sentences(text: str) -> list[str]:
    """``text`` cut at line ends and sentence ends (English and Chinese punctuation).

    A part cut at a semicolon loses it: it is quoted as a sentence of its own.
    """
    out = []
    for part in _sentence_parts(text):
        part = part.strip().removeprefix("- ").rstrip(";；").rstrip()
        if part and part != QUOTED:
            out.append(part)
    return out


def _sentence_parts(text: str) -> list[str]:
    r"""``text`` cut where its sentences and lines end (empty parts included).

    The cuts are those of ``re.split(r"(?<=[.!?;])\s+|\n+|(?<=[。！？；])", text)``:
    after ``.!?;`` and the whitespace that follows it, at each run of line
    ends, and right after a Chinese full stop, question or exclamation mark or
    semicolon. Only the characters that can end a sentence are looked for (one
    character class), not every position tried against the lookbehinds: a few
    times faster.
    """
    parts = []
    start = skip = 0
    for mark in _SENTENCE_MARK.finditer(text):
        at = mark.start()
        if at < skip:  # inside the whitespace or line ends of the last cut
            continue
        char = text[at]
        if char == "\n":
            parts.append(text[start:at])
            ends = _LINE_ENDS.match(text, at)
            assert ends is not None  # text[at] is a line end
            start = skip = ends.end()
        elif char in _WIDE_ENDS:
            parts.append(text[start : at + 1])
            start = skip = at + 1
        else:
            spaces = _SPACES.match(text, at + 1)
            if spaces is not None:
                parts.append(text[start : at + 1])
                start = skip = spaces.end()
    parts.append(text[start:])
    return parts


def is_statement(sentence: str) -> bool:
    """Whether ``sentence`` reads as a statement worth quoting.

    Not a question, not a line that introduces a block (it ends in a colon),
    not code or a log line: no ``=``, brackets, backticks, pipes or angle
    brackets, and (outside Chinese and Japanese text, which has no spaces
    between words) at least three words of letters, half of its words or more.
    """
    if sentence.endswith(("?", "？", ":", "：")) or _CODE_CHARACTERS.search(sentence):
        return False
    if not sentence.isascii() and _CJK.search(sentence):
        return True
    words = sentence.split()
    plain = sum(1 for word in words if _is_plain_word(word))
    return plain >= _MIN_PLAIN_WORDS and 2 * plain >= len(words)


_OPENERS = "(\"'"
_CLOSERS = ".,;:!?)\"'"


def _is_plain_word(word: str) -> bool:
    r"""Whether ``word`` matches :data:`_PLAIN_WORD`: letters, maybe hyphenated or punctuated.

    A word of letters, after at most one opening mark and before closing marks
    (``(so``, ``well,``), always matches: those are told without the pattern,
    which is asked only about the others. Letters (``str.isalpha``) are
    characters of ``[^\W\d_]``.
    """
    core = word.rstrip(_CLOSERS)
    if core and core[0] in _OPENERS:
        core = core[1:]
    return core.isalpha() or _PLAIN_WORD.match(word) is not None


def live_clauses(sentence: str, live: Sequence[str], superseded: Sequence[str]) -> str:
    """The clauses of ``sentence`` that state a ``live`` identifier and no ``superseded`` one.

    Clauses end at a comma, semicolon or colon followed by a space (a number's
    thousands separator is not one) and at their Chinese forms; a leading "and"
    is dropped. ``sentence`` comes back whole when no identifier is superseded.
    """
    if not superseded:
        return sentence
    kept = []
    for clause in _CLAUSE_END.split(sentence):
        clause = _CLAUSE_JOINER.sub("", clause.strip()).rstrip(",;:，；：。.")
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
_SENTENCE_PARTS = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
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
        for part in _SENTENCE_PARTS.split(body):
            key = " ".join(part.split()).casefold()
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


_LAST_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？]|\n")


def whole_sentences(text: str) -> str:
    """``text`` up to the end of its last whole sentence (or line): a reply cut at its cap."""
    ends = [match.end() for match in _LAST_SENTENCE_END.finditer(text)]
    return text[: ends[-1]].rstrip() if ends else ""


def _written_text(message: Message) -> str:
    """What the user or the assistant wrote in ``message`` (tool results left out)."""
    if message.role not in ("user", "assistant"):
        return ""
    return "\n".join(block.text for block in message.content if isinstance(block, TextBlock))


def _newest_sentences(messages: Sequence[Message]) -> list[str]:
    """The sentences of what the user and the assistant wrote, oldest first.

    At most those of the newest messages that hold :data:`MAX_SENTENCES` sentences
    (a summary of the whole history, ``strategy="full"``, would read every one).
    """
    newest: list[list[str]] = []
    count = 0
    for message in reversed(messages):
        parts = sentences(_written_text(message))
        newest.append(parts)
        count += len(parts)
        if count >= MAX_SENTENCES:
            break
    return [part for parts in reversed(newest) for part in parts]


def _superseded(identifier: str, sentence: str, later: str) -> bool:
    """Whether ``identifier``'s subject in ``sentence`` gets a new value in ``later``.

    The subject is the word before the value (``the launch date is April 14``)
    or, without one, a word right after it (``April 14 launch date``).
    """
    word = subject(identifier, sentence)
    words = [word] if word is not None else subjects_after(identifier, sentence)
    return any(gets_new_value(identifier, each, later) for each in words)


@frozen
class _Candidate:
    """A sentence that could be quoted: where it is, what to quote, what it states."""

    index: int
    quote: str
    live: list[str]
    valued: bool


_COPULA = re.compile(
    r"(?:\b(?:is|are|was|were|be|now|to|at|equals|becomes)\W*|[:：]\s*|(?:是|为|在|到|改为|调整为)\s*)$",
    re.IGNORECASE,
)


def states_value(identifier: str, sentence: str) -> bool:
    """Whether ``identifier`` follows a verb such as "is", "now" or "是" in ``sentence``.

    "The Python version is now 3.12" states 3.12 as the value of its subject;
    "the deprecation warnings that 3.12 adds" mentions it.
    """
    at = sentence.find(identifier)
    return at > 0 and _COPULA.search(sentence[max(0, at - 16) : at]) is not None


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
    recalled = sentences(previous or "")
    texts = [*recalled, *_newest_sentences(messages)]
    found = [
        (index, part)
        for index, part in enumerate(texts)
        if len(part) <= MAX_QUOTE_CHARS and is_statement(part)
    ]
    joined = "\n".join(part for _, part in found)
    starts = list(accumulate((len(part) + 1 for _, part in found), initial=0))
    candidates: list[_Candidate] = []
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
        live = [i for i in missing if not _superseded(i, sentence, later)]
        if not live:
            continue
        stale = [i for i in missing if i not in live]
        quote = live_clauses(sentence, live, stale)
        if quote:
            valued = any(states_value(i, quote) for i in live)
            candidates.append(_Candidate(index, quote, live, valued))
    stated: set[str] = set()
    kept: list[tuple[int, str]] = []
    used = counter.count_text(f"{summary}\n\n{QUOTED}")
    # Sentences that give a missing identifier as the value of a subject first ("the
    # Python version is now 3.12"), then any other (" ... the warnings that 3.12 adds").
    for candidate in [c for c in candidates if c.valued] + [c for c in candidates if not c.valued]:
        if max_tokens - used < MIN_QUOTE_TOKENS:
            break
        if all(identifier in stated for identifier in candidate.live):
            continue
        cost = counter.count_text(f"- {candidate.quote}") + 1
        if used + cost > max_tokens:
            continue
        used += cost
        stated.update(candidate.live)
        kept.append((candidate.index, candidate.quote))
    if not kept:
        return summary
    lines = [f"- {quote}" for _, quote in sorted(kept)]
    return "\n".join([summary, "", QUOTED, *lines])
