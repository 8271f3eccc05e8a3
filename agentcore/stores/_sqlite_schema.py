"""The tables of :class:`~agentcore.stores.SqliteStore` and the steps that create them."""

from __future__ import annotations

SCHEMA_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"

# Each entry of MIGRATIONS takes the layout from version N to N + 1; a new file runs them all
# from 0, so a created and a migrated database are the same. A release that changes the layout
# appends an entry; an older file is brought up to date in one transaction on open.
#
# Message bodies and data values can be large (inline images), so those two tables keep a
# rowid: a WITHOUT ROWID table stores whole rows in its b-tree.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 0 to 1: the first layout.
    (
        """
        CREATE TABLE IF NOT EXISTS sessions (
            session_id TEXT NOT NULL PRIMARY KEY,
            state TEXT
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS slots (
            session_id TEXT NOT NULL REFERENCES sessions (session_id),
            slot_id TEXT NOT NULL,
            config TEXT NOT NULL,
            PRIMARY KEY (session_id, slot_id)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS messages (
            session_id TEXT NOT NULL REFERENCES sessions (session_id),
            slot_id TEXT NOT NULL,
            idx INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (session_id, slot_id, idx)
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS session_data (
            session_id TEXT NOT NULL REFERENCES sessions (session_id),
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (session_id, key)
        )
        """,
    ),
    # 1 to 2: slots get a config version (each stored config counts as one write) and the
    # schema version moves into its own table.
    (
        "ALTER TABLE slots ADD COLUMN version INTEGER NOT NULL DEFAULT 0",
        "UPDATE slots SET version = 1",
        SCHEMA_VERSION_TABLE,
    ),
    # 2 to 3: the ids of turns written with a turn_id, and where each put its turn.
    (
        """
        CREATE TABLE IF NOT EXISTS turns (
            session_id TEXT NOT NULL REFERENCES sessions (session_id),
            turn_id TEXT NOT NULL,
            slot_id TEXT,
            start INTEGER NOT NULL,
            stop INTEGER NOT NULL,
            turn_index INTEGER,
            PRIMARY KEY (session_id, turn_id)
        ) WITHOUT ROWID
        """,
    ),
    # 3 to 4: session leases, a row with an expiry (seconds since the epoch).
    (
        """
        CREATE TABLE IF NOT EXISTS leases (
            session_id TEXT NOT NULL PRIMARY KEY,
            owner TEXT NOT NULL,
            expires_at REAL NOT NULL
        ) WITHOUT ROWID
        """,
    ),
    # 4 to 5: a full-text index of the messages (FTS5; a row per message that has words,
    # under the message's rowid, each word keyed by the session: see
    # _search_text.keyed_document), and what is left to index of the messages stored
    # before (indexed in batches after the migration).
    (
        "CREATE VIRTUAL TABLE IF NOT EXISTS message_search "
        "USING fts5(doc, tokenize = 'unicode61 remove_diacritics 0')",
        "CREATE TABLE IF NOT EXISTS search_backfill "
        "(done INTEGER NOT NULL, until INTEGER NOT NULL)",
        "INSERT INTO search_backfill (done, until) "
        "SELECT 0, max(rowid) FROM messages HAVING count(*) > 0",
    ),
    # 5 to 6: the index follows the writes (see _sqlite_search.catch_up): every message at
    # or below search_mark's one row is indexed. Version 5 indexed in each write, and
    # after its migration up to search_backfill's mark: the new mark starts there.
    (
        "CREATE TABLE IF NOT EXISTS search_mark (indexed INTEGER NOT NULL)",
        "INSERT INTO search_mark (indexed) SELECT coalesce("
        "(SELECT done FROM search_backfill), (SELECT max(rowid) FROM messages), 0)",
        "DROP TABLE search_backfill",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)
"""The layout version of the tables, kept in the ``schema_version`` table.

``PRAGMA user_version`` holds the same number, so that a release that
predates the table still refuses a newer database. A file at an older
version (version 1 has no ``schema_version`` table and no slot ``version``
column, version 2 no ``turns`` table, version 3 no ``leases`` table) is
migrated on open, its rows kept.
"""
