"""The tables of :class:`~agentcore.stores.PostgresStore` and the steps that create them."""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from psycopg import AsyncConnection

from agentcore.errors import StoreError

logger = logging.getLogger("agentcore.stores.postgres")

Connection = AsyncConnection[tuple[Any, ...]]

# Every table carries the agentcore_ prefix: the store may share a database (and a schema)
# with an application's own tables. Pick another schema with the DSN's search_path option.
#
# Each entry of _MIGRATIONS takes the schema from version N to N + 1 (the first creates it).
# A release that changes the layout appends an entry; a stored database at an older version
# is brought up to date in one transaction on first use, never refused.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """
        CREATE TABLE agentcore_sessions (
            session_id text PRIMARY KEY,
            state text
        )
        """,
        # message_count is the length of the slot's history, kept by every append so that a
        # write never counts rows. config is NULL for a slot that has messages but no config;
        # version counts the writes of config (0: none yet).
        """
        CREATE TABLE agentcore_slots (
            session_id text NOT NULL
                REFERENCES agentcore_sessions (session_id) ON DELETE CASCADE,
            slot_id text NOT NULL,
            config text,
            version bigint NOT NULL DEFAULT 0 CHECK (version >= 0),
            message_count bigint NOT NULL DEFAULT 0 CHECK (message_count >= 0),
            PRIMARY KEY (session_id, slot_id)
        )
        """,
        """
        CREATE TABLE agentcore_messages (
            session_id text NOT NULL,
            slot_id text NOT NULL,
            idx bigint NOT NULL CHECK (idx >= 0),
            body text NOT NULL,
            PRIMARY KEY (session_id, slot_id, idx),
            FOREIGN KEY (session_id, slot_id)
                REFERENCES agentcore_slots (session_id, slot_id) ON DELETE CASCADE
        )
        """,
        """
        CREATE TABLE agentcore_session_data (
            session_id text NOT NULL
                REFERENCES agentcore_sessions (session_id) ON DELETE CASCADE,
            key text NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (session_id, key)
        )
        """,
    ),
    # 1 to 2: the ids of turns written with a turn_id, and where each put its turn.
    (
        """
        CREATE TABLE agentcore_turns (
            session_id text NOT NULL
                REFERENCES agentcore_sessions (session_id) ON DELETE CASCADE,
            turn_id text NOT NULL,
            slot_id text,
            start bigint NOT NULL CHECK (start >= 0),
            stop bigint NOT NULL CHECK (stop >= start),
            turn_index bigint,
            PRIMARY KEY (session_id, turn_id)
        )
        """,
    ),
    # 2 to 3: session leases, a row with an expiry on the server's clock.
    (
        """
        CREATE TABLE agentcore_leases (
            session_id text PRIMARY KEY,
            owner text NOT NULL,
            expires_at timestamptz NOT NULL
        )
        """,
    ),
    # 3 to 4: no foreign keys on the two tables every turn inserts into. Each key made the
    # server run a check per inserted row (three nested statements a turn, each locking
    # its parent row) for what the write guarantees already: it writes the session row
    # first and the slot's row before its messages, in the same transaction.
    # delete_session deletes these rows itself.
    (
        "ALTER TABLE agentcore_messages "
        "DROP CONSTRAINT IF EXISTS agentcore_messages_session_id_slot_id_fkey",
        "ALTER TABLE agentcore_turns DROP CONSTRAINT IF EXISTS agentcore_turns_session_id_fkey",
    ),
    # 4 to 5: a notice on the channel CHANGES_CHANNEL whenever a slot row changes (an append
    # grew its count, a config was written, a session was deleted), with the table's schema
    # and the session id as payload, so a store that listens learns of every writer's
    # commits, whichever process or release (from 5 on) made them. PostgreSQL sends the
    # notices of a transaction when it commits, once per distinct payload.
    (
        """
        CREATE FUNCTION agentcore_slot_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            changed text;
        BEGIN
            IF TG_OP = 'DELETE' THEN
                changed := OLD.session_id;
            ELSE
                changed := NEW.session_id;
            END IF;
            PERFORM pg_notify('agentcore_changes', TG_TABLE_SCHEMA || '.' || changed);
            RETURN NULL;
        END
        $$
        """,
        "CREATE TRIGGER agentcore_slot_changed AFTER INSERT OR UPDATE OR DELETE "
        "ON agentcore_slots FOR EACH ROW EXECUTE PROCEDURE agentcore_slot_changed()",
    ),
    # 5 to 6: full-text search of the messages: each message's words (see _search_text) as
    # a tsvector of the 'simple' configuration, written with the message, under a GIN index.
    # The rows stored before have none (NULL) until the backfill (_pg_search.backfill)
    # indexes them in batches; the partial index finds those left at once.
    (
        "ALTER TABLE agentcore_messages ADD COLUMN search tsvector",
        "CREATE INDEX agentcore_messages_search ON agentcore_messages USING gin (search)",
        "CREATE INDEX agentcore_messages_unindexed ON agentcore_messages (session_id) "
        "WHERE search IS NULL",
    ),
)

CHANGES_CHANNEL = "agentcore_changes"
"""The channel of the notices the schema's trigger sends when a slot row changes."""

SCHEMA_VERSION = len(_MIGRATIONS)
"""The layout version this release writes, kept in the ``agentcore_schema_version`` table."""

# Two int4 keys for pg_advisory_xact_lock: a constant for agentcore, and the schema the
# tables live in, so that stores in different schemas do not wait for each other.
_LOCK_CLASS = 0x61C0

_SETUP_LOCK = (
    "SELECT pg_advisory_xact_lock(%s, hashtext(coalesce(current_schema(), '')))",
    (_LOCK_CLASS,),
)
_VERSION_TABLE = (
    "CREATE TABLE agentcore_schema_version ("
    " singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),"
    " version integer NOT NULL)"
)


async def migrate(conn: Connection, where: str, *, create: bool) -> None:
    """Create the tables, or bring an older layout up to :data:`SCHEMA_VERSION`."""
    try:
        async with conn.transaction():
            encoding = await (await conn.execute("SHOW server_encoding")).fetchone()
            if encoding is None or encoding[0].upper() not in ("UTF8", "UTF-8"):
                raise StoreError(
                    f"{where} uses encoding {encoding and encoding[0]!r}; agentcore "
                    "needs a UTF8 database (CREATE DATABASE ... ENCODING 'UTF8')"
                )
            await conn.execute(*_SETUP_LOCK)
            found = await (
                await conn.execute("SELECT to_regclass('agentcore_schema_version')")
            ).fetchone()
            if found is None or found[0] is None:
                if not create:
                    raise StoreError(
                        f"{where} holds no agentcore tables (in the schemas of its "
                        "search_path); give the database the sessions were stored in"
                    )
                version = 0
                await conn.execute(_VERSION_TABLE)
                await conn.execute("INSERT INTO agentcore_schema_version (version) VALUES (0)")
            else:
                row = await (
                    await conn.execute("SELECT version FROM agentcore_schema_version")
                ).fetchone()
                if row is None:
                    raise StoreError(
                        f"{where}: the agentcore_schema_version table is empty; "
                        "the database was changed by hand"
                    )
                version = int(row[0])
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{where} has schema version {version}, newer than the "
                    f"{SCHEMA_VERSION} this agentcore reads; upgrade agentcore"
                )
            for step in range(version, SCHEMA_VERSION):
                for statement in _MIGRATIONS[step]:
                    await conn.execute(statement)
                logger.info("%s: schema migrated to version %d", where, step + 1)
            if version < SCHEMA_VERSION:
                await conn.execute(
                    "UPDATE agentcore_schema_version SET version = %s", (SCHEMA_VERSION,)
                )
    except psycopg.Error as exc:
        raise StoreError(f"cannot set up {where}: {one_line(exc)}") from exc


def one_line(exc: BaseException) -> str:
    """``exc`` as one line of text, for messages and logs."""
    return " ".join(str(exc).split()) or type(exc).__name__
