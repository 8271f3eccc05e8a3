r"""What a stored message is found by, and what a search looks for: one vocabulary for every store.

Each store indexes a message as its **tokens** (:func:`message_tokens`), joined by
spaces, so SQLite's FTS5 (``unicode61``), PostgreSQL's ``simple`` text search and the
in-memory search all see the same words:

- a token is a run of letters or digits, case-folded, accents removed
  (``État_v2`` gives ``etat`` and ``v2``);
- a CJK character (Chinese, Japanese kana, Korean) is a token of its own, since
  those scripts put no spaces between words.

A query becomes :class:`SearchTerm`\ s (:func:`search_terms`): its content tokens
(stop words and single characters left out), a word of four letters or more as a
prefix (``service`` finds ``services``), and a run of CJK characters as its
overlapping two-character phrases (``预算是多少`` looks for ``预算``, ``算是`` ...).
A message matches a query when it holds one of its terms; how well is each
engine's ranking (BM25). SQLite and PostgreSQL key each indexed word by its session
(:func:`keyed_document`), so a search's cost follows the session, not the store.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from itertools import islice, pairwise

from attrs import frozen

from agentcore.messages import FileBlock, Message, TextBlock, ToolUseBlock

__all__ = [
    "SearchTerm",
    "fts5_query",
    "keyed_document",
    "keyed_terms",
    "message_tokens",
    "search_document",
    "search_terms",
    "session_key",
    "tokens",
    "tsquery",
]

_CJK = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
"""Kana, CJK unified ideographs (with extension A), Hangul syllables, compatibility ideographs."""
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_CJK_CHARACTER = re.compile(f"[{_CJK}]")
_MAX_QUERY_TERMS = 32
_PREFIX_LETTERS = 4
MAX_TOKEN_CHARS = 40
"""Longer runs (a base64 blob, a hash dump) are not indexed: nobody searches for them.
Forty characters hold a SHA-1 in hexadecimal (a full git commit id)."""
MAX_DOCUMENT_TOKENS = 10_000
"""A message is indexed by its first tokens only (a huge tool result stays findable by
them). With :data:`MAX_TOKEN_CHARS` this keeps a PostgreSQL ``tsvector`` far below its
1 MB limit."""

_STOP_WORDS = frozenset(
    re.findall(
        r"\w+",
        """
        a about after again all also am an and any are as at be been before being both
        but by can could did do does doing done each else for from had has have having
        he her here hers him his how i if in into is it its itself just me more most my
        no nor not now of off on once only or other our ours out over own please same
        she should so some such than that the their theirs them then there these they
        this those through to too under until up very was we were what when where which
        while who whom why will with would you your yours tell said say says know
        remember recall still use used using
        """,
    )
)


@frozen
class SearchTerm:
    """One thing a query looks for: a token, a prefix of tokens, or a phrase of tokens."""

    tokens: tuple[str, ...]
    """One token, or consecutive tokens (a CJK phrase) that must follow each other."""
    prefix: bool = False
    """Whether the (single) token matches any token that starts with it."""


def _plain(text: str) -> str:
    """``text`` case-folded, its accents removed (``É`` is ``e``), compatibility forms unified."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    if folded.isascii():
        return folded
    return "".join(char for char in folded if not unicodedata.combining(char))


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` (see the module), in order."""
    return _TOKEN.findall(_plain(text))


def _message_text(message: Message) -> str:
    """What of ``message`` a reader could look for.

    Its text (a tool result's too), its tool calls' names and its files' names. A tool
    call's arguments are left out: what the call found is in its result, and on the
    quality bench's tuning conversations indexing the arguments put the calls ahead
    of the results that hold the facts (recall@5 0.98 with them, 1.00 without).
    """
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, (ToolUseBlock, FileBlock)):
            parts.append(block.name)
    return "\n".join(parts)


def message_tokens(message: Message) -> list[str]:
    """The tokens ``message`` is indexed by: at most :data:`MAX_DOCUMENT_TOKENS` of them."""
    found = (token for token in tokens(_message_text(message)) if len(token) <= MAX_TOKEN_CHARS)
    return list(islice(found, MAX_DOCUMENT_TOKENS))


def search_document(message: Message) -> str:
    """The text a store indexes for ``message``: its tokens joined by spaces."""
    return " ".join(message_tokens(message))


def session_key(session_id: str) -> str:
    """The letters and digits an index puts before each word of ``session_id``'s messages.

    A store keys its index by session this way (``s3f9a...billing``): a word's entries
    are then the session's only, so a search reads as much of the index as the session
    holds, whatever the other sessions stored.
    """
    return "s" + hashlib.sha1(session_id.encode("utf-8")).hexdigest()[:20]


def keyed_document(document: str, session_id: str) -> str:
    """``document`` (a :func:`search_document`) with each word keyed by its session."""
    key = session_key(session_id)
    return " ".join(key + word for word in document.split())


def keyed_terms(terms: Sequence[SearchTerm], session_id: str) -> list[SearchTerm]:
    """``terms`` as they are found in a :func:`keyed_document` of ``session_id``."""
    key = session_key(session_id)
    return [SearchTerm(tuple(key + token for token in term.tokens), term.prefix) for term in terms]


def search_terms(query: str) -> list[SearchTerm]:
    """What ``query`` looks for (see the module), in order, without repeats.

    Empty when the query holds no content word: such a search finds nothing.
    """
    found: dict[SearchTerm, None] = {}
    run: list[str] = []

    def end_run() -> None:
        if len(run) == 1:
            found.setdefault(SearchTerm((run[0],)), None)
        for first, second in pairwise(run):
            found.setdefault(SearchTerm((first, second)), None)
        run.clear()

    for token in tokens(query):
        if _CJK_CHARACTER.fullmatch(token):
            run.append(token)
            continue
        end_run()
        if len(token) < 2 or token in _STOP_WORDS:
            continue
        prefix = len(token) >= _PREFIX_LETTERS and token.isalpha()
        found.setdefault(SearchTerm((token,), prefix), None)
    end_run()
    return list(found)[:_MAX_QUERY_TERMS]


def fts5_query(terms: Sequence[SearchTerm]) -> str:
    """``terms`` as an FTS5 query: any of them (``"port" OR "servic"* OR "预 算"``)."""
    return " OR ".join(
        '"' + " ".join(term.tokens) + '"' + ("*" if term.prefix else "") for term in terms
    )


def tsquery(terms: Sequence[SearchTerm]) -> str:
    """``terms`` as a PostgreSQL ``to_tsquery('simple', ...)`` text: any of them."""
    return " | ".join(
        f"'{term.tokens[0]}':*"
        if term.prefix
        else "(" + " <-> ".join(f"'{token}'" for token in term.tokens) + ")"
        for term in terms
    )
