"""BM25 over token lists: how the in-memory store ranks what a search finds.

The same ranking FTS5's ``bm25()`` gives (k1 = 1.2, b = 0.75, an IDF that never
goes below a small positive floor), over the messages searched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from agentcore.stores._search_text import SearchTerm

_K1 = 1.2
_B = 0.75
_MIN_IDF = 1e-6


def term_count(term: SearchTerm, tokens: Sequence[str]) -> int:
    """How many times ``term`` occurs in ``tokens``."""
    if len(term.tokens) == 1:
        (wanted,) = term.tokens
        if term.prefix:
            return sum(1 for token in tokens if token.startswith(wanted))
        return sum(1 for token in tokens if token == wanted)
    size = len(term.tokens)
    first = term.tokens[0]
    return sum(
        1
        for at, token in enumerate(tokens)
        if token == first and tuple(tokens[at : at + size]) == term.tokens
    )


def bm25_scores(
    terms: Sequence[SearchTerm],
    documents: Sequence[Sequence[str]],
    *,
    total: int | None = None,
) -> list[float]:
    """Each document's BM25 score for ``terms`` (0 for one that holds none of them).

    ``total`` is how many documents were searched when ``documents`` are only those
    that hold a term (every document that holds one must be there, or the terms'
    document frequencies are wrong); None: ``documents`` are all of them.
    """
    if not documents or not terms:
        return [0.0] * len(documents)
    counts = [[term_count(term, document) for term in terms] for document in documents]
    total = max(total or 0, len(documents))
    average = sum(len(document) for document in documents) / total or 1.0
    idf = []
    for column in range(len(terms)):
        holding = sum(1 for row in counts if row[column])
        idf.append(max(_MIN_IDF, math.log((total - holding + 0.5) / (holding + 0.5) + 1)))
    scores = []
    for document, row in zip(documents, counts, strict=True):
        norm = _K1 * (1 - _B + _B * len(document) / average)
        scores.append(
            sum(
                weight * count * (_K1 + 1) / (count + norm)
                for weight, count in zip(idf, row, strict=True)
                if count
            )
        )
    return scores
