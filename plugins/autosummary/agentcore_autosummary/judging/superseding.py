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
  after it, by another identifier (``port 8443`` is superseded by ``port 9000``,
  ``the launch date is April 14`` by ``the launch date is now May 5``); in
  Chinese, within the 16 characters after it (``预算是12万元`` by ``预算现在是15万元``);
- **lost** otherwise.
"""

from __future__ import annotations

import re
from itertools import islice

from agentcore_autosummary.text.identifiers import find_identifiers, holds
from agentcore_autosummary.text.subjects import subject, subjects_after
from agentcore_autosummary.text.words import starts_cjk, word_ends

_SPLIT_WORD = re.compile(r"\S+")
_LOOK_AHEAD_WORDS = 4
_LOOK_AHEAD_CHARS = 16


def gets_new_value(identifier: str, word: str, transcript: str) -> bool:
    """Whether ``transcript`` gives ``word`` an identifier other than ``identifier``."""
    cjk = starts_cjk(word)
    for end in word_ends(word, transcript):
        if cjk:
            window = transcript[end : end + _LOOK_AHEAD_CHARS]
        else:
            after = islice(_SPLIT_WORD.finditer(transcript, end), _LOOK_AHEAD_WORDS)
            window = " ".join(word.group() for word in after)
        if any(found != identifier for found in find_identifiers(window)):
            return True
    return False


def is_superseded(identifier: str, sentence: str, later: str) -> bool:
    """Whether ``identifier``'s subject in ``sentence`` gets a new value in ``later``.

    The subject is the word before the value (``the launch date is April 14``)
    or, without one, a word right after it (``April 14 launch date``).
    """
    word = subject(identifier, sentence)
    words = [word] if word is not None else subjects_after(identifier, sentence)
    return any(gets_new_value(identifier, each, later) for each in words)


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
