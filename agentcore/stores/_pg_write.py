"""The statements of one :class:`~agentcore.stores.PostgresStore` write transaction."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncCursor

from agentcore.stores._codec import (
    EncodedWrite,
    append_conflict,
    duplicate_turn,
    version_conflict,
)
from agentcore.stores._pg_schema import Connection
from agentcore.stores._search_text import keyed_document
from agentcore.stores.base import SlotHead, StoredTurn

# The session row is written first in every write transaction. Its row lock serializes the
# writers of one session, so the message counts read next cannot change before the commit.
LOCK_SESSION = (
    "INSERT INTO agentcore_sessions AS s (session_id, state) VALUES (%s, %s) "
    "ON CONFLICT (session_id) DO UPDATE SET state = coalesce(excluded.state, s.state)"
)
# One statement each, on the server's clock: insert, or take over a lease ours or expired.
ACQUIRE_LEASE = (
    "INSERT INTO agentcore_leases AS l (session_id, owner, expires_at) "
    "VALUES (%s, %s, clock_timestamp() + make_interval(secs => %s)) "
    "ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, "
    "expires_at = excluded.expires_at "
    "WHERE l.owner = excluded.owner OR l.expires_at <= clock_timestamp()"
)
RELEASE_LEASE = (
    "DELETE FROM agentcore_leases WHERE session_id = %s AND owner = %s "
    "RETURNING expires_at > clock_timestamp()"
)
FIND_TURN = (
    "SELECT slot_id, start, stop, turn_index FROM agentcore_turns "
    "WHERE session_id = %s AND turn_id = %s"
)
_INSERT_TURN = (
    "INSERT INTO agentcore_turns (session_id, turn_id, slot_id, start, stop, turn_index) "
    "VALUES (%s, %s, %s, %s, %s, %s)"
)
_SLOT_ROWS = (
    "SELECT slot_id, version, message_count FROM agentcore_slots "
    "WHERE session_id = %s AND slot_id = ANY(%s)"
)
# One row per slot, whatever the length of its history.
SLOT_HEADS = (
    "SELECT slot_id, version, message_count FROM agentcore_slots "
    'WHERE session_id = %s AND config IS NOT NULL ORDER BY slot_id COLLATE "C"'
)
_UPSERT_COUNT = (
    "INSERT INTO agentcore_slots (session_id, slot_id, message_count) VALUES (%s, %s, %s) "
    "ON CONFLICT (session_id, slot_id) DO UPDATE SET message_count = excluded.message_count"
)
_UPSERT_CONFIG = (
    "INSERT INTO agentcore_slots AS s (session_id, slot_id, config, version) "
    "VALUES (%s, %s, %s, 1) "
    "ON CONFLICT (session_id, slot_id) DO UPDATE "
    "SET config = excluded.config, version = s.version + 1"
)
_INSERT_MESSAGE = (
    "INSERT INTO agentcore_messages (session_id, slot_id, idx, body, search) "
    "VALUES (%s, %s, %s, %s, to_tsvector('simple', %s))"
)
_UPSERT_DATA = (
    "INSERT INTO agentcore_session_data (session_id, key, value) VALUES (%s, %s, %s) "
    "ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value"
)
_DELETE_DATA = "DELETE FROM agentcore_session_data WHERE session_id = %s AND key = %s"


def changes_heads(batch: EncodedWrite) -> bool:
    """Whether ``batch`` changes slot rows: appends a message or writes a slot config."""
    return bool(batch.slot_configs) or any(append.bodies for append in batch.appends.values())


async def apply_write(
    conn: Connection, batch: EncodedWrite, *, read_heads: bool = False
) -> AsyncCursor[tuple[Any, ...]] | None:
    """Write ``batch`` inside the caller's transaction; touch only the rows it names.

    With ``read_heads``, the last statement reads the session's slot heads as the write
    leaves them (the session's row lock holds them until the commit) and the cursor to
    read them from is returned; in pipeline mode its rows are there once the pipeline
    has synced, so the read costs no round trip of its own.
    """
    session_id = batch.session_id
    await conn.execute(LOCK_SESSION, (session_id, batch.state))
    if batch.turn_id is not None:
        # First of all checks: a resubmitted turn is a duplicate, not a conflicting append.
        cursor = await conn.execute(FIND_TURN, (session_id, batch.turn_id))
        stored_turn = turn_of_row(await cursor.fetchone())
        if stored_turn is not None:
            raise duplicate_turn(session_id, batch.turn_id, stored_turn)
    appends = sorted(batch.appends.items())
    checked = sorted(set(batch.appends) | set(batch.expected_versions))
    if checked:
        # The session row is locked: these heads stay as read until the commit.
        cursor = await conn.execute(_SLOT_ROWS, (session_id, checked))
        heads = {
            slot_id: SlotHead(int(version), int(count))
            for slot_id, version, count in await cursor.fetchall()
        }
        for slot_id, expected in sorted(batch.expected_versions.items()):
            stored = heads.get(slot_id, SlotHead()).version
            if stored != expected:
                raise version_conflict(session_id, slot_id, expected, stored)
        for slot_id, append in appends:
            count = heads.get(slot_id, SlotHead()).count
            if append.start != count:
                raise append_conflict(session_id, slot_id, append.start, count)
    if appends:
        grown = [
            (session_id, slot_id, append.start + len(append.bodies))
            for slot_id, append in appends
            if append.bodies
        ]
        if grown:
            async with conn.cursor() as cur:
                await cur.executemany(_UPSERT_COUNT, grown)
    if batch.slot_configs:
        async with conn.cursor() as cur:
            await cur.executemany(
                _UPSERT_CONFIG,
                [(session_id, slot_id, config) for slot_id, config in batch.slot_configs.items()],
            )
    rows = [
        (session_id, slot_id, index, body, keyed_document(document, session_id))
        for slot_id, append in appends
        for index, (body, document) in enumerate(
            zip(append.bodies, append.documents, strict=True), append.start
        )
    ]
    if rows:
        async with conn.cursor() as cur:
            await cur.executemany(_INSERT_MESSAGE, rows)
    if batch.data:
        async with conn.cursor() as cur:
            await cur.executemany(
                _UPSERT_DATA, [(session_id, key, value) for key, value in batch.data.items()]
            )
    if batch.deleted_data:
        async with conn.cursor() as cur:
            await cur.executemany(_DELETE_DATA, [(session_id, key) for key in batch.deleted_data])
    turn = batch.turn
    if batch.turn_id is not None and turn is not None:
        await conn.execute(
            _INSERT_TURN,
            (session_id, batch.turn_id, turn.slot_id, turn.start, turn.stop, turn.turn_index),
        )
    return await conn.execute(SLOT_HEADS, (session_id,)) if read_heads else None


async def heads_of(cursor: AsyncCursor[tuple[Any, ...]]) -> dict[str, SlotHead]:
    """The slot heads read with :data:`SLOT_HEADS` on ``cursor``."""
    return {
        slot_id: SlotHead(int(version), int(count))
        for slot_id, version, count in await cursor.fetchall()
    }


def turn_of_row(row: tuple[Any, ...] | None) -> StoredTurn | None:
    """The :class:`StoredTurn` of a row read with :data:`FIND_TURN`, or None for no row."""
    if row is None:
        return None
    slot_id, start, stop, turn_index = row
    return StoredTurn(
        slot_id, int(start), int(stop), None if turn_index is None else int(turn_index)
    )
