"""Withdrawals: a later clause that negates what was stated, by its name or in its words.

A value is *withdrawn* (:func:`withdraws`) when a later clause negates its name
before it: ``we are not using Redis after all`` withdraws ``Redis 7.2``; in Chinese,
``不``, ``没``, ``别``, ``取消`` or ``放弃`` before it. :func:`retracts` is the stricter
reading for a value the later text names again: the negated use's sentence also
says that a decision changed (``after all``, ``no longer``, ``instead``, ``不再``...).

A statement with no value to name is withdrawn in its own words
(:func:`withdraws_statement`): "My guess: the root cause is a slow upstream cache"
by "it is not a slow upstream cache after all", a later sentence that says a
decision changed and negates two words in a row of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from agentcore_autosummary.text.sentences import SENTENCE_END
from agentcore_autosummary.text.subjects import clause_before, is_content_word
from agentcore_autosummary.text.words import CJK, has_cjk

__all__ = ["retracts", "withdraws", "withdraws_statement"]

_NAME = re.compile(r"[^\W\d_][\w.+#-]*[\w+#]|[^\W\d_]")
_NEGATION = re.compile(
    r"\b(?:not|no|never|no longer|instead of|rather than|without|drop(?:ped|ping)?|"
    r"remov(?:e|ed|ing)|scrap(?:ped|ping)?|cancel(?:l?ed|ling)?|abandon(?:ed|ing)?)\b|n't\b",
    re.IGNORECASE,
)
_CJK_NEGATION = re.compile("不|没|别|取消|放弃")
_CHANGED = re.compile(
    r"\b(?:after all|no longer|any ?more|instead|drop(?:ped|s)?|cancel(?:l?ed|s)?|"
    r"scrap(?:ped|s)?|abandon(?:ed|s)?|revert(?:ed|s)?|won't|will not|not going to)\b|"
    r"不再|取消|放弃|改为|改成|改用|换成|最后|终究|还是",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[,;:，；：、]|[.!?](?=\s|$)|[\n。！？]")
_WORD = re.compile(rf"[A-Za-z][A-Za-z0-9'-]*|[{CJK}]+")


def withdraws(identifier: str, later: str) -> bool:
    """Whether ``later`` negates the name of ``identifier`` (``not using Redis``).

    The name is the identifier's first word of letters (``Redis`` of ``Redis
    7.2``); a clause of ``later`` that holds it after a negation (see the
    module) withdraws the value. An identifier without letters (a number, a
    date) has no name to withdraw.
    """
    return next(_negated_uses(identifier, later), None) is not None


def retracts(identifier: str, later: str) -> bool:
    """Whether ``later`` withdraws ``identifier`` in so many words, naming it as it does.

    Stricter than :func:`withdraws`, for a value ``later`` names again: the
    negated use's sentence also says that a decision changed (``after all``,
    ``no longer``, ``instead``, ``dropped``, ``不再``, ``取消``...). Advice that
    merely mentions the value in a negative clause (``don't serve them from
    Caddy``, ``on disk, not in SQLite``) does not withdraw it.
    """
    for at in _negated_uses(identifier, later):
        if _CHANGED.search(later[_sentence_start(later, at) : _sentence_end(later, at)]):
            return True
    return False


_SENTENCE_LOOK_BACK = 2_000
"""Characters before a position searched first for the end of the sentence before it."""


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding position ``at`` of ``text`` starts (after the last end).

    Only the text just before ``at`` is read, unless no sentence ends there: the work
    does not grow with the text's length, as it would by finding every end first.
    """
    low = max(0, at - _SENTENCE_LOOK_BACK)
    while True:
        start = low
        for found in SENTENCE_END.finditer(text, low):
            if found.end() > at:
                break
            start = found.end()
        if start > low or low == 0:
            return start
        low = 0  # no end in the stretch read: the sentence is longer than it


def _sentence_end(text: str, at: int) -> int:
    """Where the sentence holding position ``at`` of ``text`` ends (its end mark's end)."""
    found = SENTENCE_END.search(text, at)
    return len(text) if found is None else found.end()


def _negated_uses(identifier: str, later: str) -> Iterator[int]:
    """Where ``later`` names ``identifier``'s name in a clause after a negation."""
    name = _NAME.search(identifier)
    if name is None or len(name.group()) < 3:
        return
    # A whole word among Latin letters; a CJK character may touch it (不用Redis).
    uses = re.finditer(rf"(?<![A-Za-z0-9_]){re.escape(name.group())}(?![A-Za-z0-9_])", later, re.I)
    for use in uses:
        clause = clause_before(use.start(), later)
        negation = _CJK_NEGATION if has_cjk(clause) else _NEGATION
        if negation.search(clause):
            yield use.start()


def withdraws_statement(sentence: str, later: str) -> bool:
    """Whether a sentence of ``later`` withdraws ``sentence`` in its own words.

    That sentence says a decision changed (as for :func:`retracts`) and negates
    a phrase of two or more content words side by side (``not a slow upstream
    cache``: the words right after the negation, articles aside; in Chinese,
    three characters in a row), and two of those words stand side by side in
    ``sentence`` too. A sentence that says a decision changed itself ("the graphs
    rule out a slow upstream cache after all") reports the change, and stays.
    """
    withdrawn = _withdrawn_pairs(later)
    if not withdrawn or _CHANGED.search(sentence):
        return False
    return bool(_pairs(sentence) & withdrawn)


@lru_cache(maxsize=64)
def _withdrawn_pairs(text: str) -> frozenset[str]:
    """The word pairs negated in the sentences of ``text`` that say a decision changed."""
    pairs: set[str] = set()
    start = 0
    for end in [*(found.end() for found in SENTENCE_END.finditer(text)), len(text)]:
        sentence = text[start:end]
        start = end
        if not _CHANGED.search(sentence):
            continue
        negation = _CJK_NEGATION if has_cjk(sentence) else _NEGATION
        for found in negation.finditer(sentence):
            rest = sentence[found.end() :]
            clause_end = _CLAUSE_END.search(rest)
            pairs |= _pairs(rest if clause_end is None else rest[: clause_end.start()], first=True)
    return frozenset(pairs)


def _pairs(text: str, *, first: bool = False) -> set[str]:
    """Content words side by side in ``text`` ("slow upstream"), and Chinese character triples.

    ``first``: only those of the first phrase, the words before it that are not
    content words (an article, a verb such as "is") aside.
    """
    found: set[str] = set()
    previous: str | None = None
    for match in _WORD.finditer(text):
        word = match.group()
        if has_cjk(word):
            found.update(word[at : at + 3] for at in range(len(word) - 2))
            if first:
                break
            previous = None
            continue
        current = word.casefold() if is_content_word(word) else None
        if previous is not None and current is not None:
            found.add(f"{previous} {current}")
        elif first and previous is not None:
            break  # the first phrase ended
        previous = current
    return found
