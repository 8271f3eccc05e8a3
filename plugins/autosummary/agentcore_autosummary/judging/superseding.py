"""Which identifiers of the previous summary a new summary kept, and which it lost.

The identifiers are those :func:`~agentcore_autosummary.text.identifiers.find_identifiers`
finds (links, paths, dates and times, amounts and sizes, versions, codes,
names, long numbers). An identifier of the previous summary is

- **kept** when the new summary :func:`~agentcore_autosummary.text.identifiers.holds`
  it (verbatim, or in another spelling of the same value);
- **superseded** when the new summary drops it but the covered messages
  mention it (they had the chance to change or retire it), or give its
  subject a new value: its subject (see :mod:`agentcore_autosummary.text.subjects`)
  is followed in a covered message, within the four words (split at white space)
  after it and in the same sentence, by another identifier (``port 8443`` is
  superseded by ``port 9000``, ``the launch date is April 14`` by ``the launch
  date is now May 5``); in Chinese, within the 16 characters after it
  (``预算是12万元`` by ``预算现在是15万元``);
- **lost** otherwise.

A value is also superseded when the last later statement of its subject gives
another (see :mod:`agentcore_autosummary.text.statements`): "I have requested a
refund of 102.75 euros" by "the refund is now 62.50 euros", the later clause naming
nothing the earlier one does not.

A value of one subject is not superseded by the value of another subject of the
same pattern: when the clause that gave the value names a topic (see
:func:`~agentcore_autosummary.text.subjects.topic`: ``auth`` in ``note that the auth
service listens on port 8440``, the word of that clause the conversation says least
often), only a later clause that names it again gives the subject a new value (``note
that the billing service listens on port 8441`` does not). And a value is
withdrawn (:func:`withdraws`) when a later clause negates its name before it: ``we
are not using Redis after all`` withdraws ``Redis 7.2``; in Chinese, ``不``, ``没``,
``别``, ``取消`` or ``放弃`` before it.
"""

from __future__ import annotations

import re
from itertools import islice

from agentcore_autosummary.judging.withdrawals import withdraws
from agentcore_autosummary.text.identifiers import find_identifiers, holds
from agentcore_autosummary.text.sentences import SENTENCE_END
from agentcore_autosummary.text.statements import restated_otherwise
from agentcore_autosummary.text.subjects import (
    Topic,
    WordUses,
    names_topic,
    subject,
    subjects_after,
    topic,
    word_uses,
)
from agentcore_autosummary.text.words import starts_cjk, word_ends

_SPLIT_WORD = re.compile(r"\S+")
_LOOK_AHEAD_WORDS = 4
_LOOK_AHEAD_CHARS = 16


def gets_new_value(identifier: str, word: str, transcript: str, about: Topic | None = None) -> bool:
    """Whether ``transcript`` gives ``word`` an identifier other than ``identifier``.

    An identifier within the words after a use of ``word`` (four, or 16
    characters in Chinese), in the same sentence. With ``about`` (the topic of
    the clause that gave ``identifier``), only a use of ``word`` in a clause
    that names that topic counts.
    """
    cjk = starts_cjk(word)
    for end in word_ends(word, transcript):
        if about is not None and not names_topic(about, end, transcript):
            continue
        if cjk:
            window = transcript[end : end + _LOOK_AHEAD_CHARS]
        else:
            after = islice(_SPLIT_WORD.finditer(transcript, end), _LOOK_AHEAD_WORDS)
            window = " ".join(word.group() for word in after)
        sentence_end = SENTENCE_END.search(window)
        if sentence_end is not None:  # the next sentence's values are not this subject's
            window = window[: sentence_end.start()]
        if any(found != identifier for found in find_identifiers(window)):
            return True
    return False


def is_superseded(identifier: str, sentence: str, later: str, uses: WordUses | None = None) -> bool:
    """Whether ``identifier``'s subject in ``sentence`` gets a new value in ``later``.

    The subject is the word before the value (``the launch date is April 14``)
    or, without one, a word right after it (``April 14 launch date``); a
    later use of it counts only in a clause that names the same topic
    (``uses``: the conversation's words counted, see
    :func:`~agentcore_autosummary.text.subjects.word_uses`; by default those of
    ``sentence`` and ``later``). A value ``later`` withdraws (:func:`withdraws`) is
    superseded too.
    """
    return restated_otherwise(identifier, sentence, later) or gets_new_subject_value(
        identifier, sentence, later, uses
    )


def gets_new_subject_value(
    identifier: str, sentence: str, later: str, uses: WordUses | None = None
) -> bool:
    """:func:`is_superseded` by its subject word and its withdrawal, not by statements.

    The rules that read a value named again in ``later`` as live (pruning asks
    :func:`~agentcore_autosummary.text.statements.restated_otherwise` apart).
    """
    if withdraws(identifier, later):
        return True
    word = subject(identifier, sentence)
    counted = word_uses(f"{sentence}\n{later}") if uses is None else uses
    about = topic(identifier, sentence, counted)
    words = [word] if word is not None else subjects_after(identifier, sentence)
    return any(gets_new_value(identifier, each, later, about) for each in words)


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
    uses: WordUses | None = None
    for identifier in find_identifiers(previous):
        if holds(summary, identifier):
            kept.append(identifier)
        elif holds(transcript, identifier):
            continue
        else:
            if withdraws(identifier, transcript) or restated_otherwise(
                identifier, previous, transcript
            ):
                continue
            word = subject(identifier, previous)
            if uses is None:
                uses = word_uses(f"{previous}\n{transcript}")
            about = topic(identifier, previous, uses)
            if word is None or not gets_new_value(identifier, word, transcript, about):
                lost.append(identifier)
    return tuple(kept), tuple(lost)
