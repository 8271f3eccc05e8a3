"""Searching a session's stored history: the contract a searchable store keeps.

Every message a session writes stays in its store, in its context or not. A store that
also implements :class:`SearchableStore` finds them again by what they say: the
in-memory store by a search in process, :class:`~agentcore.stores.PostgresStore` by a
``tsvector`` column with a GIN index kept up to date in the turn's write, and
:class:`~agentcore.stores.SqliteStore` by an FTS5 index that follows the writes (the
store indexes what it wrote in a worker thread now and then, and a search indexes
what is left first). Either way a search sees every stored message.

All three read a message and a query the same way (letters and digits, case and
accents aside; CJK text by its characters; see :func:`~agentcore.stores.search.search_terms`):
a message holding any content word of the query (a word of four letters or more
also as the start of a longer one) matches, ranked by how many of the query's words
it holds and how rare they are. Scores compare hits of one search, not searches.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs
from attrs import frozen

from agentcore.errors import StoreError
from agentcore.messages import Message
from agentcore.stores._codec import check_session_id
from agentcore.stores._search_rank import bm25_scores, term_count
from agentcore.stores._search_text import SearchTerm, message_tokens, search_terms
from agentcore.validators import is_int

__all__ = [
    "MAX_SEARCH_LIMIT",
    "MessageHit",
    "SearchTerm",
    "SearchableStore",
    "matching_terms",
    "search_terms",
]

MAX_SEARCH_LIMIT = 100
"""The most hits one search returns."""


@frozen
class MessageHit:
    """A stored message a search found: where it is, what it is, how well it matched."""

    slot_id: str
    """The slot whose raw history holds the message."""
    index: int
    """Its position in that history (0 is the slot's first message)."""
    message: Message
    """The message, as stored."""
    score: float
    """How well it matched: higher is better, comparable within one search only."""
    turn_index: int | None = None
    """The turn that wrote it, as :attr:`agentcore.TurnContext.turn_index` counts (0 for
    the first); None for a message written without a turn id (an imported history)."""


@runtime_checkable
class SearchableStore(Protocol):
    """A store that can search the messages it keeps (see the module)."""

    async def search_messages(
        self,
        session_id: str,
        query: str,
        *,
        slot_id: str | None = None,
        before: int | None = None,
        limit: int = 5,
    ) -> list[MessageHit]:
        """The stored messages of ``session_id`` that best match ``query``, best first.

        ``slot_id`` keeps to that slot's messages; ``before`` (with a ``slot_id``)
        to those at an index below it, such as the part of a history the context
        no longer holds. At most ``limit`` hits (1 to :data:`MAX_SEARCH_LIMIT`); hits of
        equal score come newest first. A query without a content word finds
        nothing. Another session's messages are never returned.

        :raises StoreError: a bad argument (named), or the store failed.
        """
        ...


def matching_terms(query: str, message: Message) -> list[SearchTerm]:
    """The terms of ``query`` that ``message`` holds, as every store matches them.

    A caller that wants more than "holds any term" (a hit that answers most of a
    question) counts them: scores of different engines do not compare, these do.
    """
    tokens = message_tokens(message)
    return [term for term in search_terms(query) if term_count(term, tokens)]


def rank_hits(
    terms: list[SearchTerm], hits: list[MessageHit], total: int, limit: int
) -> list[MessageHit]:
    """The best ``limit`` of ``hits`` by BM25, equal scores newest first, scored.

    ``hits`` are every message that holds a term (or the best of them), ``total``
    how many messages the search covered.
    """
    documents = [message_tokens(hit.message) for hit in hits]
    scores = bm25_scores(terms, documents, total=total)
    ranked = sorted(
        (attrs.evolve(hit, score=score) for hit, score in zip(hits, scores, strict=True)),
        key=lambda hit: (-hit.score, -hit.index),
    )
    return ranked[:limit]


def check_search(
    session_id: object, query: object, slot_id: object, before: object, limit: object
) -> list[SearchTerm]:
    """The terms of a search's ``query``, its arguments checked; :class:`StoreError` if bad."""
    check_session_id(session_id)
    if not isinstance(query, str):
        raise StoreError(f"search_messages needs a query string, got {type(query).__name__}")
    if slot_id is not None and not isinstance(slot_id, str):
        raise StoreError(f"search_messages needs a slot id string or None, got {slot_id!r}")
    if before is not None:
        if slot_id is None:
            raise StoreError("search_messages: before= needs a slot_id (an index of which slot?)")
        if not is_int(before) or before < 0:
            raise StoreError(f"search_messages needs before >= 0 or None, got {before!r}")
    if not is_int(limit) or not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise StoreError(
            f"search_messages needs a limit from 1 to {MAX_SEARCH_LIMIT}, got {limit!r}"
        )
    return search_terms(query)
