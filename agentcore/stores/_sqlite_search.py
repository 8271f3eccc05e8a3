"""The full-text search of :class:`~agentcore.stores.SqliteStore`: its query, and its backfill.

Each message with words has a row in the FTS5 table ``message_search`` under the
message's rowid, written in the transaction that stores the message. A file made
before the index existed is indexed once after its migration, in batches of
:data:`BACKFILL_BATCH` messages, each batch its own transaction: a process stopped
halfway leaves a consistent file, and the next open goes on where it stopped
(``search_backfill`` holds how far it got).
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
from agentcore.stores._sqlite_write import rollback

logger = logging.getLogger("agentcore.stores.sqlite")

BACKFILL_BATCH = 2_000
"""Messages indexed per transaction of the backfill."""

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


def backfill(conn: sqlite3.Connection, path: str) -> None:
    """Index the messages stored before the index existed, a batch per transaction.

    Does nothing once they are all indexed (the common case: one read of an empty table).
    Several processes may run it at once: each batch reads the mark under the write
    lock, so no message is indexed twice.
    """
    if conn.execute("SELECT 1 FROM search_backfill LIMIT 1").fetchone() is None:
        return  # without the write lock: nothing to do, the common case
    indexed = 0
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            mark = conn.execute("SELECT done, until FROM search_backfill").fetchone()
            if mark is None:
                conn.execute("COMMIT")
                break
            done, until = int(mark[0]), int(mark[1])
            rows = conn.execute(
                "SELECT rowid, session_id, slot_id, idx, body FROM messages "
                "WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT ?",
                (done, until, BACKFILL_BATCH),
            ).fetchall()
            documents = []
            for rowid, session_id, slot_id, index, body in rows:
                try:
                    message = decode_message(body, slot_id, index, session_id)
                except StoreError as exc:  # a damaged row stays unindexed, and readable as it was
                    logger.warning("not indexed for search: %s", exc)
                    continue
                document = search_document(message)
                if document:
                    documents.append((rowid, keyed_document(document, session_id)))
            conn.executemany(
                "INSERT OR REPLACE INTO message_search (rowid, doc) VALUES (?, ?)", documents
            )
            if len(rows) < BACKFILL_BATCH:
                conn.execute("DELETE FROM search_backfill")
            else:
                conn.execute("UPDATE search_backfill SET done = ?", (rows[-1][0],))
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        indexed += len(rows)
        if len(rows) < BACKFILL_BATCH:
            break
    if indexed:
        logger.info("indexed %d stored messages of %s for search", indexed, path)
