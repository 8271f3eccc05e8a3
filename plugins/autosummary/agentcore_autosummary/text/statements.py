"""Statements: a value with the words of the clause that gives it, read as a ledger.

"I have requested a refund of 102.75 euros" and, later, "the refund is now 62.50
euros" state two values of one subject, although the first sentence's subject word
(the one before the value) is not the second's. The later statement names nothing
the earlier clause does not (``refund``): it gives the same subject a new value.
"The billing service listens on port 8441" names ``billing``, which "the auth
service listens on port 8440" does not: another subject of the same pattern.

So a statement is a value and its *subject words*: the content words (3 or more
letters, no stop word, see :mod:`~agentcore_autosummary.text.subjects`) of the
clause before it, back to a punctuation mark or the value before it; in Chinese,
the character pairs of that clause, its leading pronoun, its verb before the value
(``改到``, ``现在是``) and ``的`` aside. Words are compared by their stems
(``owned`` and ``ownership`` are one, :func:`stem`). A number or a date may follow
its noun directly (``port 9000``); a name, a link or a path is given a value only
by a verb before it (``the database is now PostgreSQL 16``, ``owned by Maren Kim``,
``改用 SQS``): "a small VM from any provider" mentions a VM and states nothing.

A value's subject, read as a ledger (:func:`restated_otherwise`), takes the value
of its *last* later statement whose subject words the value's own clause names
(before the value or, up to a punctuation mark, after it: "Chloe Holm owns the
help center module"), among values of its kind (:func:`value_kind`: a date does not
replace an amount). When that value is another, the earlier one is replaced, even
if the later text mentions it again in passing ("Chloe Holm moves to another team,
the help center module is now owned by Maren Kim").
"""

from __future__ import annotations

import re
from functools import lru_cache

from attrs import frozen

from agentcore_autosummary.text.identifiers import find_identifiers, holds, value_kind
from agentcore_autosummary.text.subjects import is_content_word, last_clause
from agentcore_autosummary.text.words import CJK

__all__ = ["SubjectWords", "restated_otherwise", "stem", "subject_words"]

_CLAUSE_END = re.compile(r"[.;:!?,，。；：！？、()（）\n]")
_CLAUSE_CHARS = 160
_AFTER_WORDS = 6
_AFTER_END = re.compile(r"[.;:!?,，。；：！？、()（）\n]|\b(?:and|but|while|whereas|then)\b|和|但")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")
_CJK_RUN = re.compile(f"[{CJK}]+")
_CJK_LEAD = re.compile(
    r"^(?:我们|咱们|你们|他们|她们|我|你|他|她|它|现在|目前|另外|还有|然后|那么"
    r"|用户(?=需要|要|想|希望|把|将)|需要|要|把|将)+"
)
_CJK_VERB = re.compile(
    r"(?:现在|目前|已经|也|还)?"
    r"(?:调整|推迟|提前|延期|延|改|换|调|降|升|提高|增加|减少|变|定|设|设置|移|搬|迁)?"
    r"(?:成|为|到|在|用|至)?(?:是)?$"
)
_NAMED_KINDS = ("name", "where")
_STATES = re.compile(
    r"(?:\b(?:is|are|was|were|be|been|becomes?|became|now|to|by|equals|as)\W*|[:：=]\s*"
    r"|(?:是|为|在|到|用|成)\s*)$",
    re.IGNORECASE,
)
"""How a clause gives a name its value: "the database is now", "owned by", "改用", "换成"."""
_SUFFIXES = ("ership", "ing", "ed", "es", "s", "er", "e")


def stem(word: str) -> str:
    """``word`` case-folded, less one common suffix when 3 letters stay (``owned``: ``own``)."""
    folded = word.casefold()
    for suffix in _SUFFIXES:
        if folded.endswith(suffix) and len(folded) - len(suffix) >= 3:
            return folded[: -len(suffix)]
    return folded


@frozen
class SubjectWords:
    """The words that name a value's subject: Latin stems and Chinese character pairs."""

    stems: frozenset[str]
    pairs: frozenset[str]

    def __bool__(self) -> bool:
        return bool(self.stems or self.pairs)

    def named_by(self, clause: SubjectWords) -> bool:
        """Whether every word of these is among ``clause``'s."""
        return self.stems <= clause.stems and self.pairs <= clause.pairs


def _words_of(text: str, cjk_verb: bool) -> SubjectWords:
    stems = frozenset(stem(word) for word in _LATIN_WORD.findall(text) if is_content_word(word))
    pairs: set[str] = set()
    for run in _CJK_RUN.findall(text):
        run = _CJK_LEAD.sub("", run)
        if cjk_verb:
            run = _CJK_VERB.sub("", run)
        run = run.replace("的", "")
        pairs.update(run[at : at + 2] for at in range(len(run) - 1))
    return SubjectWords(stems, frozenset(pairs))


def _clause_before(text: str, at: int, start: int = 0) -> str:
    """The clause of ``text`` before position ``at``, no further back than ``start``."""
    return last_clause(text[max(start, at - _CLAUSE_CHARS) : at], _CLAUSE_END)


def subject_words(
    identifier: str, text: str, at: int, after: bool = False, until: int | None = None
) -> SubjectWords:
    """The subject words of ``identifier`` where ``text`` gives it, at position ``at``.

    The clause before it (back to a punctuation mark); with ``after``, also the
    words after it up to a punctuation mark, a conjunction or position ``until``
    (at most six), as an earlier statement is read ("Chloe Holm for the help
    center module").
    """
    before = _clause_before(text, at)
    words = _words_of(before, cjk_verb=not after)
    if not after:
        return words
    after_value = at + len(identifier)
    limit = len(text) if until is None else until
    rest = text[after_value : min(after_value + _CLAUSE_CHARS, limit)]
    stop = _AFTER_END.search(rest)
    tail = " ".join((rest[: stop.start()] if stop else rest).split()[:_AFTER_WORDS])
    following = _words_of(tail, cjk_verb=False)
    return SubjectWords(words.stems | following.stems, words.pairs | following.pairs)


@frozen
class _Statement:
    value: str
    kind: str
    words: SubjectWords


@lru_cache(maxsize=4096)
def _line_statements(line: str) -> tuple[_Statement, ...]:
    """Every value of one line with its subject words, in the order the line gives them.

    A clause ends at a line end, so a text's statements are its lines' (each line
    read once however many texts it ends).
    """
    statements: list[_Statement] = []
    previous_end = 0
    for start, identifier in _value_positions(line):
        before = _clause_before(line, start, max(previous_end, start - _CLAUSE_CHARS))
        kind = value_kind(identifier)
        # "a small VM from any provider" names a VM; it gives nothing a value
        if kind not in _NAMED_KINDS or _STATES.search(before):
            words = _words_of(before, cjk_verb=True)
            if words:
                statements.append(_Statement(identifier, kind, words))
        previous_end = max(previous_end, start + len(identifier))
    return tuple(statements)


def _value_positions(text: str) -> list[tuple[int, str]]:
    """``(start, identifier)`` of every use of each identifier of ``text``, in order."""
    found: list[tuple[int, str]] = []
    for identifier in find_identifiers(text):
        start = text.find(identifier)
        while start >= 0:
            found.append((start, identifier))
            start = text.find(identifier, start + len(identifier))
    return sorted(found)


@lru_cache(maxsize=8)
def _statements(later: str) -> tuple[_Statement, ...]:
    """Every statement of ``later``, in order (a text read against many values is read once)."""
    return tuple(statement for line in later.split("\n") for statement in _line_statements(line))


def _last_statement(later: str, kind: str, own: SubjectWords) -> _Statement | None:
    """The last statement of ``later`` of a value of ``kind`` that ``own`` names."""
    for statement in reversed(_statements(later)):
        if statement.kind == kind and statement.words.named_by(own):
            return statement
    return None


def _between_values(identifier: str, sentence: str, at: int) -> tuple[int, int]:
    """Where the values of ``sentence`` around ``identifier`` (at ``at``) end and start."""
    start, end = 0, len(sentence)
    for where, other in _value_positions(sentence):
        if where + len(other) <= at:
            start = max(start, where + len(other))
        elif where >= at + len(identifier):
            end = min(end, where)
    return start, end


def restated_otherwise(identifier: str, sentence: str, later: str) -> bool:
    """Whether ``later``'s last statement of ``identifier``'s subject gives another value.

    The subject is read from ``sentence`` (see the module). False when ``later``
    states nothing of it, or when its last statement gives ``identifier`` again.
    """
    at = sentence.find(identifier)
    if at < 0 or not later.strip():
        return False
    start, end = _between_values(identifier, sentence, at)
    own = subject_words(identifier, sentence[start:], at - start, after=True, until=end - start)
    if not own:
        return False
    last = _last_statement(later, value_kind(identifier), own)
    return last is not None and not holds(last.value, identifier)
