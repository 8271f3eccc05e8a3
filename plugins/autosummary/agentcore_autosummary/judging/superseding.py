"""Which identifiers of the previous summary a new summary kept, and which it lost.

The identifiers are those :func:`~agentcore_autosummary.judging.identifiers.find_identifiers`
finds (links, paths, dates and times, amounts and sizes, versions, codes,
names, long numbers). An identifier of the previous summary is

- **kept** when the new summary :func:`~agentcore_autosummary.judging.identifiers.holds`
  it (verbatim, or in another spelling of the same value);
- **superseded** when the new summary drops it but the covered messages
  mention it (they had the chance to change or retire it), or give its
  subject a new value: its subject is the last content word (3 or more
  letters, not a stop word) among the four words before it in the previous
  summary, and a new value is another identifier within the four words (split at
  white space) after that word in a covered message (``port 8443`` is superseded by
  ``port 9000``, ``the launch date is April 14`` by ``the launch date is now May 5``).
  In Chinese, where words are not split by spaces, the subject is the two
  characters before the value, a verb such as 是, 为 or 改为 aside (``预算是12万元``:
  ``预算``), and a new value is an identifier within the 16 characters after it
  (``预算现在是15万元``);
- **lost** otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice

from agentcore_autosummary.judging.retention import find_identifiers, holds

_WORD = re.compile(r"\w+")
_SPLIT_WORD = re.compile(r"\S+")
_LOOK_BACK_WORDS = 4
_LOOK_AHEAD_WORDS = 4
_LOOK_AHEAD_CHARS = 16
_CJK = re.compile(r"[\u4e00-\u9fff]")
_CJK_SUBJECT = re.compile(
    r"([\u4e00-\u9fff]{2})(?:现在|目前|已经|改成|改为|换成|定为|调整为|先用|改用|用|是|为|在|：|:|\s)*$"
)
_STOP_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "was",
        "were",
        "are",
        "now",
        "from",
        "with",
        "that",
        "this",
        "into",
        "onto",
        "about",
        "has",
        "have",
        "had",
        "been",
        "its",
        "their",
        "then",
        "than",
        "also",
        "which",
        "will",
        "would",
        "set",
        "new",
        "old",
        "still",
        "our",
        "your",
        "his",
        "her",
        "they",
        "them",
        "there",
        "here",
        "when",
        "where",
        "what",
        "who",
        "whose",
        "all",
        "any",
        "each",
        "per",
        "via",
    ]
)


def subject(identifier: str, text: str) -> str | None:
    """The word ``identifier`` is a value of in ``text`` (see the module), or None."""
    at = text.find(identifier)
    if at < 0:
        return None
    cjk = _CJK_SUBJECT.search(text[max(0, at - 24) : at])
    if cjk is not None:
        return cjk.group(1)
    before: list[str] = _WORD.findall(text[:at])[-_LOOK_BACK_WORDS:]
    for word in reversed(before):
        if len(word) >= 3 and not word.isdigit() and word.casefold() not in _STOP_WORDS:
            return word.casefold()
    return None


def subjects_after(identifier: str, text: str) -> list[str]:
    """The content words right after ``identifier`` in ``text``, up to a punctuation mark.

    The subject of a value written before what it names (``April 14 launch
    date``, ``25 MB upload limit``): at most :data:`_LOOK_BACK_WORDS` words,
    those of 3 or more letters that are not stop words, case-folded.
    """
    at = text.find(identifier)
    if at < 0:
        return []
    rest = re.split(r"[^\w\s-]", text[at + len(identifier) :], maxsplit=1)[0]
    words: list[str] = _WORD.findall(rest)[:_LOOK_BACK_WORDS]
    return [
        word.casefold()
        for word in words
        if len(word) >= 3 and not word.isdigit() and word.casefold() not in _STOP_WORDS
    ]


def gets_new_value(identifier: str, word: str, transcript: str) -> bool:
    """Whether ``transcript`` gives ``word`` an identifier other than ``identifier``."""
    cjk = _CJK.match(word) is not None
    for end in word_ends(word, transcript):
        if cjk:
            window = transcript[end : end + _LOOK_AHEAD_CHARS]
        else:
            after = islice(_SPLIT_WORD.finditer(transcript, end), _LOOK_AHEAD_WORDS)
            window = " ".join(word.group() for word in after)
        if any(found != identifier for found in find_identifiers(window)):
            return True
    return False


def word_ends(word: str, text: str) -> Iterator[int]:
    r"""Where each use of ``word`` in ``text`` ends, first to last, none overlapping.

    A word that starts with a Chinese character is found as it is written;
    any other is found in any case and as a whole word, as the pattern
    ``(?<!\w)word(?!\w)`` with ``re.IGNORECASE`` finds it. In ASCII text
    (the case of an ASCII word is then its lower case alone) that is a plain
    search of the lowered text, several times faster than the pattern.
    """
    if _CJK.match(word):
        yield from (match.end() for match in re.finditer(re.escape(word), text))
    elif word and word.isascii() and text.isascii():
        needle, lowered = word.lower(), text.lower()
        at = lowered.find(needle)
        while at >= 0:
            end = at + len(needle)
            if not (_is_word_character(lowered, at - 1) or _is_word_character(lowered, end)):
                yield end
                at = lowered.find(needle, end)
            else:
                at = lowered.find(needle, at + 1)
    else:
        pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)
        yield from (match.end() for match in pattern.finditer(text))


def _is_word_character(text: str, at: int) -> bool:
    """Whether ``text[at]`` is a letter, a digit or ``_`` (False out of bounds)."""
    if at < 0 or at >= len(text):
        return False
    character = text[at]
    return character.isalnum() or character == "_"


def compare_identifiers(
    previous: str | None, summary: str, transcript: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The identifiers of ``previous`` that ``summary`` kept, and those it lost.

    ``transcript`` is the covered messages as the summary request read them.
    """
    if not previous:
        return (), ()
    kept: list[str] = []
    lost: list[str] = []
    for identifier in find_identifiers(previous):
        if holds(summary, identifier):
            kept.append(identifier)
        elif holds(transcript, identifier):
            continue
        else:
            word = subject(identifier, previous)
            if word is None or not gets_new_value(identifier, word, transcript):
                lost.append(identifier)
    return tuple(kept), tuple(lost)
