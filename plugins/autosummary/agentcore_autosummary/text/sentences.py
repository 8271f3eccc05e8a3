"""Sentences: where a text's sentences, lines and clauses end, and which are statements."""

from __future__ import annotations

import re

from agentcore_autosummary.text.words import CJK, has_cjk

__all__ = [
    "SENTENCE_END",
    "clauses",
    "inline_sentences",
    "is_statement",
    "sentences",
    "whole_sentences",
]

_SENTENCE_MARK = re.compile(r"[.!?;。！？；\n]")  # one class: scanned faster than an alternation
_LINE_ENDS = re.compile(r"\n+")
_WIDE_ENDS = "。！？；"
_SPACES = re.compile(r"\s+")
_RUN_ON = r"(?<=[a-z0-9])\s+(?=(?:The|We|Our|This|It)\s+[a-z])"
_RUN_ON_START = re.compile(_RUN_ON)
_INLINE_END = re.compile(rf"(?<=[.!?])\s+|(?<=[。！？])|{_RUN_ON}")
SENTENCE_END = re.compile(r"[.!?](?=\s|$)|[。！？]|\n")
"""Where a sentence ends: ``.!?`` before a space or the end, ``。！？``, a line end."""
_QUESTION = re.compile(r"[^.!?。！？\n]*[?？]")
_CLAUSE_END = re.compile(rf"(?<=[,;:])\s+|(?<=[，；：])|(?<=[,;:])(?=[{CJK}])")
_CLAUSE_JOINER = re.compile(r"^(?:and|but|or|so|while|which|而且|并且|而|并)\s*", re.IGNORECASE)
_CODE_CHARACTERS = re.compile(r"[=\{\}\[\]`|<>]")
_PLAIN_WORD = re.compile(r"^[(\"']?[^\W\d_]+(?:[-'’][^\W\d_]+)*[.,;:!?)\"']*$")
_MIN_PLAIN_WORDS = 3
_OPENERS = "(\"'"
_CLOSERS = ".,;:!?)\"'"


def sentences(text: str) -> list[str]:
    """``text`` cut at line ends and sentence ends (English and Chinese punctuation).

    Each sentence comes stripped, without a leading list dash; a part cut at a
    semicolon loses it (it stands as a sentence of its own). Empty parts are left out.
    A run-on sentence, its full stop missing before a sentence's usual first word
    (``the lead is Victor Keller The budget is 53,000``), is cut there too.
    """
    out = []
    for cut in _sentence_parts(text):
        for part in _RUN_ON_START.split(cut):
            part = part.strip().removeprefix("- ").rstrip(";；").rstrip()
            if part:
                out.append(part)
    return out


def without_questions(text: str) -> str:
    """``text`` less its questions: each run of text that ends with ``?`` or ``？``.

    A question names a subject but gives it no value ("What is the budget?",
    "预算是多少？"): read as a statement, its question word would be taken for a new
    value, and the subject's value for a changed one.
    """
    if "?" not in text and "？" not in text:
        return text
    return _QUESTION.sub("", text)


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


def inline_sentences(line: str) -> list[str]:
    """The sentences of one ``line``, cut after ``.!?`` and a space or after ``。！？``.

    Unlike :func:`sentences`, a semicolon does not end one, and the parts come
    as they were written (the space after a cut left out). A run-on sentence is
    cut where its full stop is missing, as :func:`sentences` does.
    """
    return _INLINE_END.split(line)


def whole_sentences(text: str) -> str:
    """``text`` up to the end of its last whole sentence (or line): a reply cut at its cap."""
    ends = [match.end() for match in SENTENCE_END.finditer(text)]
    return text[: ends[-1]].rstrip() if ends else ""


def clauses(sentence: str) -> list[str]:
    """The clauses of ``sentence``, each without its closing mark or a leading "and".

    Clauses end at a comma, semicolon or colon followed by a space or by a Chinese
    character (a number's thousands separator is not one) and at their Chinese forms.
    """
    return [
        _CLAUSE_JOINER.sub("", clause.strip()).rstrip(",;:，；：。.")
        for clause in _CLAUSE_END.split(sentence)
    ]


def is_statement(sentence: str) -> bool:
    """Whether ``sentence`` reads as a statement worth quoting.

    Not a question, not a line that introduces a block (it ends in a colon),
    not code or a log line: no ``=``, brackets, backticks, pipes or angle
    brackets, and (outside Chinese and Japanese text, which has no spaces
    between words) at least three words of letters, half of its words or more.
    """
    if sentence.endswith(("?", "？", ":", "：")) or _CODE_CHARACTERS.search(sentence):
        return False
    if has_cjk(sentence):
        return True
    words = sentence.split()
    plain = 0
    for word in words:  # a word of letters alone (most are) is told without a call
        if word.isalpha() or _is_plain_word(word):
            plain += 1
    return plain >= _MIN_PLAIN_WORDS and 2 * plain >= len(words)


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
