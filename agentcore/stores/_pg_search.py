"""The full-text search of :class:`~agentcore.stores.PostgresStore`: its query, and its backfill.

Each message row carries ``search``, the ``to_tsvector('simple', ...)`` of its words
keyed by its session (see :func:`~agentcore.stores._search_text.keyed_document`: a GIN
lookup then finds that session's rows only), written with the row and indexed by GIN.
Rows stored before the column existed are indexed once after the migration, in
batches of :data:`BACKFILL_BATCH` rows, each batch its own transaction: a process
stopped halfway leaves the rows it did, and the next store to set up goes on (rows
still ``NULL`` are those left, found by a partial index). Stores that set up at the
same time share the work (``FOR UPDATE SKIP LOCKED``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection

from agentcore.errors import StoreError
from agentcore.stores._codec import decode_message
from agentcore.stores._search_text import (
    SearchTerm,
    keyed_document,
    keyed_terms,
    search_document,
    tsquery,
)

logger = logging.getLogger("agentcore.stores.postgres")

BACKFILL_BATCH = 2_000
"""Rows indexed per transaction of the backfill."""

CANDIDATES = 200
"""The matches of a search ranked in Python (by BM25, as the other stores rank): the
best this many by ``ts_rank``, which weighs every word alike."""

_SEARCH = (
    "SELECT m.slot_id, m.idx, m.body, "
    "(SELECT NULLIF(t.turn_index, 0) - 1 FROM agentcore_turns AS t "
    "WHERE t.session_id = m.session_id "
    "AND t.slot_id = m.slot_id AND t.start <= m.idx AND m.idx < t.stop LIMIT 1) "
    "FROM agentcore_messages AS m, to_tsquery('simple', %s) AS q "
    "WHERE m.session_id = %s{where} AND m.search @@ q "
    "ORDER BY ts_rank(m.search, q) DESC, m.idx DESC LIMIT %s"
)
_SEARCHED = (
    "SELECT coalesce(sum(message_count), 0) FROM agentcore_slots WHERE session_id = %s{where}"
)
_UNINDEXED = (
    "SELECT session_id, slot_id, idx, body FROM agentcore_messages WHERE search IS NULL "
    "LIMIT %s FOR UPDATE SKIP LOCKED"
)
_INDEX = (
    "UPDATE agentcore_messages SET search = to_tsvector('simple', %s) "
    "WHERE session_id = %s AND slot_id = %s AND idx = %s"
)


def search_statements(
    session_id: str,
    terms: Sequence[SearchTerm],
    slot_id: str | None,
    before: int | None,
) -> tuple[tuple[str, tuple[object, ...]], tuple[str, tuple[object, ...]]]:
    """The query of a search's matches, and the query of how many messages it covers.

    The matches come as (slot, index, body, turn) rows, at most :data:`CANDIDATES` of them.
    """
    where = ""
    parameters: list[object] = [tsquery(keyed_terms(terms, session_id)), session_id]
    counted: list[object] = [session_id]
    if slot_id is not None:
        where += " AND m.slot_id = %s"
        parameters.append(slot_id)
        counted.append(slot_id)
    if before is not None:
        where += " AND m.idx < %s"
        parameters.append(before)
    parameters.append(CANDIDATES)
    count_where = " AND slot_id = %s" if slot_id is not None else ""
    return (
        (_SEARCH.format(where=where), tuple(parameters)),
        (_SEARCHED.format(where=count_where), tuple(counted)),
    )


async def backfill(conn: AsyncConnection[Any], where: str) -> None:
    """Index the rows stored before the ``search`` column, a batch per transaction.

    One read of an empty partial index when there is nothing left (the common case). A
    read-only server (a standby) is left as it is: its rows are indexed when a store
    sets up on the primary.
    """
    cursor = await conn.execute("SELECT 1 FROM agentcore_messages WHERE search IS NULL LIMIT 1")
    if await cursor.fetchone() is None:
        return
    cursor = await conn.execute("SHOW transaction_read_only")
    read_only = await cursor.fetchone()
    if read_only is not None and read_only[0] == "on":
        logger.warning("%s is read-only: its messages stored before search stay unindexed", where)
        return
    indexed = 0
    while True:
        async with conn.transaction():
            cursor = await conn.execute(_UNINDEXED, (BACKFILL_BATCH,))
            rows = await cursor.fetchall()
            updates = []
            for session_id, slot_id, index, body in rows:
                try:
                    document = search_document(decode_message(body, slot_id, index, session_id))
                except StoreError as exc:  # a damaged row: unindexed words, readable as it was
                    logger.warning("%s: not indexed for search: %s", where, exc)
                    document = ""
                updates.append((keyed_document(document, session_id), session_id, slot_id, index))
            if updates:
                async with conn.cursor() as cur:
                    await cur.executemany(_INDEX, updates)
        indexed += len(rows)
        if len(rows) < BACKFILL_BATCH:
            break
    if indexed:
        logger.info("%s: indexed %d stored messages for search", where, indexed)
