"""Subjects: the word an identifier is the value of.

In ``the launch date is April 14`` the subject of ``April 14`` is ``date``: the last
content word (3 or more letters, not a digit run, not a stop word) among the
:data:`_LOOK_BACK_WORDS` words before the value. A value written before what it
names (``April 14 launch date``) has its subjects after it (:func:`subjects_after`).
In Chinese, where words are not split by spaces, the subject is the two characters
before the value, a verb such as 是, 为 or 改为 aside (``预算是12万元``: ``预算``).
"""

from __future__ import annotations

import re

from agentcore_autosummary.text.words import CJK, words

_LOOK_BACK_WORDS = 4
_CJK_SUBJECT = re.compile(
    rf"([{CJK}]{{2}})(?:现在|目前|已经|改成|改为|换成|定为|调整为|先用|改用|用|是|为|在|：|:|\s)*$"
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


def _is_content_word(word: str) -> bool:
    """Whether ``word`` can be a subject: 3 or more characters, not digits, not a stop word."""
    return len(word) >= 3 and not word.isdigit() and word.casefold() not in _STOP_WORDS


def subject(identifier: str, text: str) -> str | None:
    """The word ``identifier`` is a value of in ``text`` (see the module), or None."""
    at = text.find(identifier)
    if at < 0:
        return None
    cjk = _CJK_SUBJECT.search(text[max(0, at - 24) : at])
    if cjk is not None:
        return cjk.group(1)
    for word in reversed(words(text[:at])[-_LOOK_BACK_WORDS:]):
        if _is_content_word(word):
            return word.casefold()
    return None


def subjects_after(identifier: str, text: str) -> list[str]:
    """The content words right after ``identifier`` in ``text``, up to a punctuation mark.

    The subject of a value written before what it names (``April 14 launch
    date``, ``25 MB upload limit``): at most :data:`_LOOK_BACK_WORDS` words,
    the content words among them, case-folded.
    """
    at = text.find(identifier)
    if at < 0:
        return []
    rest = re.split(r"[^\w\s-]", text[at + len(identifier) :], maxsplit=1)[0]
    return [word.casefold() for word in words(rest)[:_LOOK_BACK_WORDS] if _is_content_word(word)]


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
