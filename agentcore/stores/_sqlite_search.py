"""The full-text search of :class:`~agentcore.stores.SqliteStore`: its query, and its index.

Each message with words has a row in the FTS5 table ``message_search`` under the
message's rowid. The index follows the writes instead of riding in them: a turn's
write stores its messages only (tokenizing a turn's two messages for FTS5 costs
about half of the write itself), and the messages above ``search_mark`` are indexed
later by :func:`catch_up`, in batches of :data:`CATCH_UP_BATCH`, each its own
transaction that moves the mark. A search catches up first, so it always sees every
stored message; the store also catches up in a worker thread every
:data:`~agentcore.stores._sqlite_connection.INDEX_EVERY` messages it writes, and
when it opens (a file made before the index existed is indexed that way, once). A
process stopped halfway leaves a consistent file: every message at or below the mark
is indexed, none above it is lost, and the next catch-up goes on from the mark.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence

from agentcore.errors import StoreError
from agentcore.stores._codec import decode_message
from agentcore.stores._search_text import (
    SearchTerm,
    fts5_query,
    keyed_document,
    keyed_terms,
    search_document,
)
from agentcore.stores._sqlite_file import UndecodableText, is_readonly, strict_text
from agentcore.stores._sqlite_write import rollback

logger = logging.getLogger("agentcore.stores.sqlite")

CATCH_UP_BATCH = 2_000
"""Messages indexed per transaction of :func:`catch_up`."""

_PENDING = "SELECT 1 FROM messages WHERE rowid > (SELECT indexed FROM search_mark) LIMIT 1"

# The words are keyed by session (see _search_text.keyed_document): FTS5 reads the entries of
# this session's words only, so the cost of a search follows the session, not the store.
_SEARCH = (
    "SELECT m.slot_id, m.idx, m.body, -bm25(message_search) AS score, "
    "(SELECT NULLIF(t.turn_index, 0) - 1 FROM turns AS t WHERE t.session_id = m.session_id "
    "AND t.slot_id = m.slot_id AND t.start <= m.idx AND m.idx < t.stop LIMIT 1) "
    "FROM message_search JOIN messages AS m ON m.rowid = message_search.rowid "
    "WHERE message_search MATCH ? AND m.session_id = ?{where} "
    "ORDER BY score DESC, m.idx DESC LIMIT ?"
)


def search(
    conn: sqlite3.Connection,
    session_id: str,
    terms: Sequence[SearchTerm],
    slot_id: str | None,
    before: int | None,
    limit: int,
) -> list[tuple[str, int, str, float, int | None]]:
    """The rows (slot, index, body, score, turn) of the best matches of ``terms``, best first."""
    where = ""
    parameters: list[object] = [fts5_query(keyed_terms(terms, session_id)), session_id]
    if slot_id is not None:
        where += " AND m.slot_id = ?"
        parameters.append(slot_id)
    if before is not None:
        where += " AND m.idx < ?"
        parameters.append(before)
    parameters.append(limit)
    rows = conn.execute(_SEARCH.format(where=where), parameters).fetchall()
    return [
        (str(slot), int(index), str(body), float(score), None if turn is None else int(turn))
        for slot, index, body, score, turn in rows
    ]


_BATCH_ROWS = (
    "SELECT rowid, session_id, slot_id, idx, CAST(body AS BLOB) FROM messages "
    "WHERE rowid > ? ORDER BY rowid LIMIT ?"
)

_Row = tuple[int, str, str, int, bytes]


def catch_up(conn: sqlite3.Connection, path: str, *, batches: int | None = None) -> int:
    """Index the stored messages above the mark, a batch per transaction; how many it read.

    ``batches`` bounds the transactions (None: until none is left); fewer messages read
    than ``batches * CATCH_UP_BATCH`` means none is left.

    Reads the mark without the write lock first: nothing to do is one read, the common
    case. A batch is read, decoded and made into documents without the write lock,
    which a turn's write of another connection may need meanwhile; under the lock the
    mark and the batch's rows are read again, and the documents are written only if
    both are as they were (else the batch is made again). Several connections may run
    it at once: a message is indexed once. A message that cannot be decoded stays
    unindexed (logged) and readable as it was.
    """
    if conn.execute(_PENDING).fetchone() is None:
        return 0
    indexed = 0
    while True:
        (mark,) = conn.execute("SELECT indexed FROM search_mark").fetchone()
        rows: list[_Row] = conn.execute(_BATCH_ROWS, (mark, CATCH_UP_BATCH)).fetchall()
        documents = _documents(rows)
        conn.execute("BEGIN IMMEDIATE")
        try:
            (now,) = conn.execute("SELECT indexed FROM search_mark").fetchone()
            current = conn.execute(_BATCH_ROWS, (now, CATCH_UP_BATCH)).fetchall()
            if now != mark or current[: len(rows)] != rows:
                # Another connection indexed or deleted meanwhile: this batch, as it is now.
                rows, documents = current, _documents(current)
            # OR REPLACE: a file of schema version 5 had indexed some rows above its mark.
            conn.executemany(
                "INSERT OR REPLACE INTO message_search (rowid, doc) VALUES (?, ?)", documents
            )
            if rows:
                conn.execute("UPDATE search_mark SET indexed = ?", (rows[-1][0],))
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        indexed += len(rows)
        if batches is not None:
            batches -= 1
        if len(rows) < CATCH_UP_BATCH or batches == 0:
            break
    if indexed >= CATCH_UP_BATCH:
        logger.info("indexed %d stored messages of %s for search", indexed, path)
    return indexed


def _documents(rows: Sequence[_Row]) -> list[tuple[int, str]]:
    """The index's ``(rowid, document)`` of each of ``rows`` that has words.

    A message that cannot be decoded is logged and left out.
    """
    documents = []
    for rowid, session_id, slot_id, index, raw in rows:
        try:
            message = decode_message(strict_text(raw), slot_id, index, session_id)
        except (StoreError, UndecodableText) as exc:
            why = exc if isinstance(exc, StoreError) else "its text is not valid UTF-8"
            logger.warning(
                "message %d of slot %r of session %r not indexed for search: %s",
                index,
                slot_id,
                session_id,
                why,
            )
            continue
        document = search_document(message)
        if document:
            documents.append((rowid, keyed_document(document, session_id)))
    return documents


def catch_up_unless_read_only(conn: sqlite3.Connection, path: str) -> bool:
    """:func:`catch_up`, or False when the file is read-only (nothing written then).

    A read-only file is searched as far as it is indexed: the messages above the mark
    (those a process that stopped without closing its store wrote last) are not found.
    """
    try:
        catch_up(conn, path)
    except sqlite3.OperationalError as exc:
        if not is_readonly(exc):
            raise
        rollback(conn)
        return False
    return True
