"""Subjects: the word an identifier is the value of.

In ``the launch date is April 14`` the subject of ``April 14`` is ``date``: the last
content word (3 or more letters, not a digit run, not a stop word) among the
:data:`_LOOK_BACK_WORDS` words before the value. A value written before what it
names (``April 14 launch date``) has its subjects after it (:func:`subjects_after`).
In Chinese, where words are not split by spaces, the subject is the two characters
before the value, a verb such as 是, 为 or 改为 aside (``预算是12万元``: ``预算``).

A subject word alone does not tell apart facts of one pattern: in ``the auth
service listens on port 8440`` and ``the billing service listens on port 8441``
both values are of ``port``. The clause's *topic* (:func:`topic`) does: of its
content words, the one the conversation's clauses about the same subject word say
least often (``auth``, ``billing``; the words of the pattern, ``service`` and
``listens``, come back with every value, and so does a lead such as ``note
that``), then the one the whole conversation says least often, then the first;
in Chinese its first two characters, a leading pronoun aside. A later statement of
the same subject names it again (``auth now listens on port 9000``). Counting in the
subject's clauses first keeps apart ``the checkout module is owned by Priya
Brandt`` and ``the localization module is now owned by Silas Fischer`` in a
conversation whose advice names the checkout page at every turn: among the clauses
about who owns what, ``module`` comes back with every owner, ``checkout`` does not.
"""

from __future__ import annotations

import re
from collections import Counter

from attrs import frozen

from agentcore_autosummary.text.words import (
    CJK,
    folded_words,
    has_cjk,
    starts_cjk,
    word_ends,
    words,
)

_CJK_RUN = re.compile(f"[{CJK}]+")

_LOOK_BACK_WORDS = 4
_CLAUSE_WORDS = 8
_CLAUSE_END = re.compile(r"[.;:!?,，。；：！？()（）\n]")
_CJK_LEAD_WORDS = "我们|咱们|你们|他们|她们|我|你|他|她|它|现在|目前|另外|还有|然后|那么"
_CJK_LEAD = re.compile(rf"^(?:{_CJK_LEAD_WORDS})?的?(?=[{CJK}]{{2}})")
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


def is_content_word(word: str) -> bool:
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
        if is_content_word(word):
            return word.casefold()
    return None


def clause_before(at: int, text: str) -> str:
    """The clause that ends at ``at`` in ``text``: back to a punctuation mark, at most 8 words.

    A short label before a colon stays with the clause after it (see :func:`last_clause`).
    """
    clause = last_clause(text[max(0, at - 160) : at])
    return clause if has_cjk(clause) else " ".join(clause.split()[-_CLAUSE_WORDS:])


_LABEL_WORDS = 5
_WORD_RUN = re.compile(r"\w+")
_BARE_WORDS = 2


def last_clause(head: str, ends: re.Pattern[str] = _CLAUSE_END) -> str:
    """The last clause of ``head`` (the text before a value), back to a mark of ``ends``.

    A list item's label stays with it: in ``- Auth: port 8001`` the clause before the
    value is ``- Auth: port``, so ``- Billing: port 8002`` is another service's port.
    The label is the text before the colon, back to the mark before it (at most five
    words; a key path such as ``Containers > app > Limits > memory`` counts its words
    only), kept when the clause after the colon is bare (at most two words, no verb
    such as "is" or "now"); "Updated: the refund is now" is a clause of its own.
    """
    marks = list(ends.finditer(head))
    if not marks:
        return head
    clause = head[marks[-1].end() :]
    if (
        marks[-1].group() not in ":："
        or len(clause.split()) > _BARE_WORDS
        or _COPULA.search(clause.rstrip())
    ):
        return clause
    label = head[marks[-2].end() if len(marks) > 1 else 0 : marks[-1].start()]
    if not label.strip() or len(_WORD_RUN.findall(label)) > _LABEL_WORDS:
        return clause
    return f"{label}: {clause}"


@frozen
class Topic:
    """The words that can tell apart the subject a value was given to (see :func:`topic`).

    ``words``: the content words of the clause that gave the value, its subject
    aside, in their order (in Chinese, the clause's first two characters);
    ``uses``: how often the conversation says each, as ``(in the clauses about the
    subject word, in all)`` (see :meth:`WordUses.near`).
    """

    words: tuple[str, ...]
    uses: tuple[tuple[int, int], ...]

    def named_in(self, clause: str) -> bool:
        """Whether ``clause`` (a later statement of the subject) names this topic.

        The topic is the word the rest of the conversation says least often,
        ``clause`` aside (it may be an update naming the word once more), the
        first of them on a tie. (A clause that names nothing of its own, ``the rate
        limit is now 2,800`` after ``the public API's rate limit is 6,750``, is a
        later statement of the same subject: see
        :mod:`~agentcore_autosummary.text.statements`.)
        """
        if starts_cjk(self.words[0]):
            return self.words[0] in clause
        named = [each.casefold() for each in words(clause)]
        rest = [
            (near - named.count(word), total - named.count(word))
            for word, (near, total) in zip(self.words, self.uses, strict=True)
        ]
        return self.words[rest.index(min(rest))] in named


def topic(identifier: str, text: str, uses: WordUses | None = None) -> Topic | None:
    """What tells apart the subject ``identifier`` is the value of in ``text``.

    The content words of the clause that gives the value, its subject aside, with
    how often the conversation says each (``uses``: the case-folded words of the
    conversation counted, see :func:`word_uses`; ``text`` alone without it): the
    words of a pattern (``service``, ``listens``, a lead such as ``note that``) come
    back with every value, its topic (``auth``) does not. In Chinese, the clause's
    first two characters, a leading pronoun or linking word (``我们``, ``现在``...)
    and ``的`` aside. None without one (nothing more to tell the value's subject by).
    """
    at = text.find(identifier)
    if at < 0:
        return None
    clause = clause_before(at, text)
    cjk = _CJK_RUN.search(clause)
    named = subject(identifier, text)
    if cjk is not None and cjk.start() == len(clause) - len(clause.lstrip()):
        run = _CJK_LEAD.sub("", cjk.group())
        return Topic((run[:2],), ((0, 0),)) if len(run) >= 2 and run[:2] != named else None
    candidates: list[str] = []
    for word in words(clause):
        folded = word.casefold()
        if is_content_word(word) and folded != named and folded not in candidates:
            candidates.append(folded)
    if not candidates:
        return None
    counted = word_uses(text) if uses is None else uses
    near = counted.near(named) if named is not None else Counter[str]()
    return Topic(
        tuple(candidates),
        tuple((near.get(word, 0), max(1, counted.get(word, 0))) for word in candidates),
    )


class WordUses(Counter[str]):
    """How often a text says each word, case-folded (the ``uses`` of :func:`topic`).

    :meth:`near` counts them again in the clauses about one subject word.
    """

    def __init__(self, text: str) -> None:
        super().__init__(folded_words(text))
        self.text = text
        self._near: dict[str, Counter[str]] = {}

    def near(self, subject_word: str) -> Counter[str]:
        """How often each word is said in the clauses of the text that end with ``subject_word``.

        The clause before each use of the word (:func:`clause_before`): in a
        conversation that names the checkout page at every turn, the clauses about
        who owns a module say ``module`` with every owner and ``checkout`` once.
        """
        found = self._near.get(subject_word)
        if found is None:
            found = Counter[str]()
            for end in word_ends(subject_word, self.text):
                found.update(folded_words(clause_before(end, self.text)))
            self._near[subject_word] = found
        return found


def word_uses(text: str) -> WordUses:
    """How often ``text`` says each word, case-folded (the ``uses`` of :func:`topic`)."""
    return WordUses(text)


def names_topic(about: Topic, at: int, text: str) -> bool:
    """Whether the clause ending at ``at`` (a subject's end) in ``text`` names topic ``about``."""
    return about.named_in(clause_before(at, text))


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
    return [word.casefold() for word in words(rest)[:_LOOK_BACK_WORDS] if is_content_word(word)]


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
