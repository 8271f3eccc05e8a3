"""Two summary parts made one without a model: the sentences that carry their facts.

Under ``strategy="segments"`` the parts of a summary outgrow their room and the
two oldest become one. Asked to merge them, a model writes out about as much as
it reads, at the price of output tokens, and its merge can still drop a value.
:func:`condensed` keeps instead the parts' own sentences, read in order as a
ledger: a value a later sentence replaced or withdrew goes (the later statement
holds), and so do repeats and headings. Of the rest, first those that state an
identifier no newer kept sentence states (names, numbers, versions, dates,
paths; see :func:`~agentcore_autosummary.text.identifiers.find_identifiers`),
newest first, then the other sentences, newest first, while they fit the room.
What is kept reads in the order it was written, one sentence a line, so the
newest statement of a fact is still the last one a reader meets. What the room
leaves out is still in the stored history, where recall finds it.
"""

from __future__ import annotations

from attrs import frozen

from agentcore.plugin_api import TokenCounter
from agentcore_autosummary.judging.pruning import as_ledger
from agentcore_autosummary.judging.quoting import QUOTED, fitting_lines
from agentcore_autosummary.text.identifiers import find_identifiers
from agentcore_autosummary.text.sentences import sentences
from agentcore_autosummary.text.words import folded

__all__ = ["condensed"]


@frozen
class _Sentence:
    index: int
    text: str
    identifiers: tuple[str, ...]


def condensed(text: str, counter: TokenCounter, max_tokens: int) -> str:
    """The sentences of ``text`` that carry its facts, in ``max_tokens`` tokens at most.

    ``text``: summary parts, oldest first (their quotes included). The result is
    one sentence a line; it is empty only when no sentence fits.
    """
    distinct: list[str] = []
    seen: set[str] = set()
    for part in sentences(text):
        key = folded(part)
        if part == QUOTED or not key or key in seen or part.endswith((":", "：")):
            continue
        seen.add(key)
        distinct.append(part)
    current = as_ledger("\n".join(distinct)).split("\n")
    found = [
        _Sentence(index, text, tuple(find_identifiers(text)))
        for index, text in enumerate(line.strip() for line in current)
        if text
    ]
    newest_first = found[::-1]
    ordered = [s for s in newest_first if s.identifiers] + [
        s for s in newest_first if not s.identifiers
    ]
    candidates = ((sentence.index, sentence.text, sentence.identifiers) for sentence in ordered)
    return "\n".join(fitting_lines(candidates, counter, 0, max_tokens))
