"""A store that keeps sessions in PostgreSQL, shared by many worker processes and hosts.

Needs the ``postgres`` extra (``pip install "agentcore[postgres]==0.3.0"``): psycopg 3 and
psycopg_pool. Importing :mod:`agentcore` never imports this module; reach the class as
``agentcore.stores.PostgresStore``.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentcore.errors import CorruptDataError, StoreError
from agentcore.messages import Message
from agentcore.stores._codec import (
    check_lease,
    check_session_id,
    check_start,
    check_stop,
    decode_config,
    decode_data,
    decode_message,
    decode_state,
)
from agentcore.stores._deadline import Deadline, check_timeout
from agentcore.stores._pg_dsn import describe_dsn, hide_password
from agentcore.stores._pg_pool import Pool
from agentcore.stores._pg_schema import SCHEMA_VERSION
from agentcore.stores._pg_search import search_statements
from agentcore.stores._pg_write import (
    ACQUIRE_LEASE,
    FIND_TURN,
    RELEASE_LEASE,
    SLOT_HEADS,
    turn_of_row,
)
from agentcore.stores._pg_writes import RESOLVE_SECONDS, WRITE_RETRIES, PostgresWrites
from agentcore.stores.base import JsonValue, SessionState, SlotHead, StoredTurn
from agentcore.stores.search import MessageHit, check_search, rank_hits

__all__ = [
    "RESOLVE_SECONDS",
    "SCHEMA_VERSION",
    "WRITE_RETRIES",
    "Pool",
    "PostgresStore",
    "describe_dsn",
    "hide_password",
]


class PostgresStore(PostgresWrites):
    """A :class:`~agentcore.stores.MemoryStore` in a PostgreSQL database.

    ``dsn_or_pool`` is a libpq connection string (``"postgresql://user@host:5432/db"`` or
    ``"host=... dbname=..."``) or a ``psycopg_pool.AsyncConnectionPool``.
    Given a DSN, the store makes its own pool of up to ``max_size`` connections and closes it
    in :meth:`close`; given a pool, it uses it and leaves closing it to the caller. ``timeout``
    is how long a call waits for a connection (and for the first one to open) before it raises
    :class:`~agentcore.errors.StoreError`. With ``create=False`` the store never creates its
    tables: on a database without them, the first call raises ``StoreError`` (for tools that
    only read).

    The tables (all named ``agentcore_*``) are created on first use in the first schema of the
    connection's ``search_path``, and carry a schema version that later releases migrate.
    Each :meth:`write` is one transaction whose cost does not depend on how long the history
    is: a per-slot row holds the message count and the config version, and stored messages
    are never read or rewritten. Writes to one session are serialized by a row lock, and a
    write that breaks the version rule of :class:`~agentcore.stores.StoreWrite` (an append
    that does not start at the stored count, an expected version that is not the stored one)
    is refused whole with :class:`~agentcore.errors.ConflictError`, so any number of
    processes on any number of hosts may share the database.

    Deadlines reach the server. A write whose session another transaction holds locked waits
    off the pool: each try waits at most 0.2 s for the session's row lock (``lock_timeout``
    set in its transaction), then gives its connection back and pauses (50 ms, doubling, at
    most 1 s) before the next, so lock waits never fill the pool. It waits at most its
    :attr:`~agentcore.stores.StoreWrite.timeout`, and at most ``lock_timeout`` seconds when
    that is set; ``statement_timeout`` (seconds, None: the server's setting) caps each
    statement of a write, and a write's timeout caps it further (``SET LOCAL
    statement_timeout`` in its transaction). Past any of them the write raises
    :class:`~agentcore.errors.StoreTimeoutError` having stored nothing. Both settings are
    ceilings for every write; a write's ``timeout`` also bounds its wait for a pooled
    connection.

    Connections are checked when the pool hands them out (``check_connections``, on by
    default: psycopg_pool's ``check_connection``, one round trip per call), so a connection
    the server closed (a restart, a failover, an idle timeout) is replaced instead of failing
    the call. ``prepare_threshold`` is psycopg's: a statement run that many times on a
    connection is prepared on the server; None never prepares, as PgBouncer in transaction
    mode needs. A pool given to the store keeps its own settings: give it
    ``check=AsyncConnectionPool.check_connection`` and ``kwargs={"prepare_threshold": None}``
    as needed.

    ``change_notices`` saves a round trip per turn. A session checks its slot heads
    (:meth:`slot_heads`) before every model call; with notices on, the store answers from
    the heads its own last write of the session left, read in that write's transaction,
    and queries the server only when it cannot vouch for them. It keeps one extra
    connection that runs ``LISTEN`` on the channel a trigger of the schema notifies
    whenever any connection changes a slot row, and trusts kept heads once the notice of
    the write that left them has come back on that connection (PostgreSQL delivers
    notices in commit order, so every earlier commit was heard too) and until a notice
    from another connection names the session, a write of it fails, or the listening
    connection is lost (then it is made again in the background). A turn that finds
    nothing changed then costs one round trip to the server, its write. A notice reaches
    this process shortly after the other writer's commit (the server sends it as it
    commits): a check that runs within that moment still uses the kept heads, and the
    turn's write is then refused (:class:`~agentcore.errors.ConflictError`), reloads and
    stores the turn after the other writer's, as with a write that lands between a check
    and a write. None (the default) turns notices on for a store given a DSN with
    ``prepare_threshold`` set, and off otherwise: a pooler in transaction mode (where
    ``prepare_threshold=None`` is needed) does not deliver notices to the client that
    listened, and a given pool may be one; with them off every check queries. Kept heads
    would never be trusted there anyway (no notice comes back), but the listening
    connection would be wasted. True with a given pool opens the listening connection
    with the pool's ``conninfo`` and ``kwargs``.

    The store belongs to the event loop it is first used in. Use it as
    ``async with PostgresStore(dsn) as store:`` or call :meth:`close` when done.
    """

    async def find_turn(self, session_id: str, turn_id: str) -> StoredTurn | None:
        """Return where the write with ``turn_id`` stored its turn, or None (one row read)."""
        rows = await self._fetchall(FIND_TURN, (session_id, turn_id))
        return turn_of_row(rows[0]) if rows else None

    async def load_state(self, session_id: str) -> SessionState | None:
        """Return the saved state of ``session_id``, or None for a new session."""
        rows = await self._fetchall(
            "SELECT state FROM agentcore_sessions WHERE session_id = %s", (session_id,)
        )
        if not rows or rows[0][0] is None:
            return None
        return decode_state(rows[0][0], session_id)

    async def load_slot_configs(self, session_id: str) -> dict[str, Mapping[str, JsonValue]]:
        """Return every slot's saved config (JSON), by slot id."""
        rows = await self._fetchall(
            "SELECT slot_id, config FROM agentcore_slots "
            'WHERE session_id = %s AND config IS NOT NULL ORDER BY slot_id COLLATE "C"',
            (session_id,),
        )
        return {slot_id: decode_config(config, slot_id, session_id) for slot_id, config in rows}

    async def load_messages(
        self, session_id: str, slot_id: str, start: int = 0, stop: int | None = None
    ) -> list[Message]:
        """Return the raw history of a slot from ``start`` up to ``stop``, oldest first.

        A range read on the primary key (session, slot, index).
        """
        start = check_start(start)
        stop = check_stop(start, stop)
        if stop is None:
            rows = await self._fetchall(
                "SELECT idx, body FROM agentcore_messages "
                "WHERE session_id = %s AND slot_id = %s AND idx >= %s ORDER BY idx",
                (session_id, slot_id, start),
            )
        else:
            rows = await self._fetchall(
                "SELECT idx, body FROM agentcore_messages "
                "WHERE session_id = %s AND slot_id = %s AND idx >= %s AND idx < %s ORDER BY idx",
                (session_id, slot_id, start, stop),
            )
        messages: list[Message] = []
        for expected, (index, body) in enumerate(rows, start):
            if index != expected:
                raise CorruptDataError(
                    f"stored message {expected} of slot {slot_id!r} in session "
                    f"{session_id!r} is missing"
                )
            messages.append(decode_message(body, slot_id, index, session_id))
        return messages

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

        See :meth:`~agentcore.stores.search.SearchableStore.search_messages`; a
        ``tsquery`` of the ``simple`` configuration on the rows' GIN-indexed ``search``
        column; the best matches by ``ts_rank`` are ranked again by BM25, as the
        in-memory store ranks them (``ts_rank`` weighs a common word as a rare one).
        """
        terms = check_search(session_id, query, slot_id, before, limit)
        if not terms:
            return []
        matches, searched = search_statements(session_id, terms, slot_id, before)
        rows = await self._fetchall(*matches)
        counted = await self._fetchall(*searched)
        total = int(counted[0][0]) if counted else 0
        if before is not None:
            total = min(total, before)
        found = [
            MessageHit(
                slot,
                int(index),
                decode_message(body, slot, int(index), session_id),
                0.0,
                None if turn is None else int(turn),
            )
            for slot, index, body, turn in rows
        ]
        return rank_hits(terms, found, total, limit)

    async def count_messages(self, session_id: str, slot_id: str) -> int:
        """Return how many raw messages a slot holds (one row read, whatever the length)."""
        rows = await self._fetchall(
            "SELECT message_count FROM agentcore_slots WHERE session_id = %s AND slot_id = %s",
            (session_id, slot_id),
        )
        return int(rows[0][0]) if rows else 0

    async def slot_heads(self, session_id: str) -> dict[str, SlotHead]:
        """Return the version and message count of every slot with a stored config.

        One query that reads one row per slot, whatever the length of the histories. With
        change notices on (see the class), the heads this store's last write of the session
        left are the answer, with no round trip to the server, while no notice says that
        another connection changed the session since.
        """
        cached = self._cached_heads(session_id)
        if cached is not None:
            return cached
        rows = await self._fetchall(SLOT_HEADS, (session_id,))
        return {slot_id: SlotHead(int(version), int(count)) for slot_id, version, count in rows}

    async def get_data(self, session_id: str, key: str) -> JsonValue | None:
        """Return the session-data value under ``key`` (a fresh copy), or None."""
        rows = await self._fetchall(
            "SELECT value FROM agentcore_session_data WHERE session_id = %s AND key = %s",
            (session_id, key),
        )
        return decode_data(rows[0][0], key, session_id) if rows else None

    async def data_keys(self, session_id: str) -> list[str]:
        """Return the session-data keys of ``session_id``, sorted."""
        rows = await self._fetchall(
            'SELECT key FROM agentcore_session_data WHERE session_id = %s ORDER BY key COLLATE "C"',
            (session_id,),
        )
        return [key for (key,) in rows]

    async def list_sessions(self) -> list[str]:
        """Return every session id a write has named, sorted."""
        rows = await self._fetchall(
            'SELECT session_id FROM agentcore_sessions ORDER BY session_id COLLATE "C"', ()
        )
        return [session_id for (session_id,) in rows]

    async def delete_session(self, session_id: str) -> bool:
        """Delete everything stored for ``session_id`` in one transaction.

        Returns whether the session was stored. A write to the session that runs at the same
        time is ordered before the delete (and its rows go too) or after it, where an append
        that does not start at 0 is refused.
        """
        self._heads.forget(session_id)
        async with self._connection() as conn, conn.transaction():
            # The session row first: its lock orders the delete against the session's writes.
            # Slots and data go with it (ON DELETE CASCADE); messages and turns, which carry
            # no foreign key (see _pg_schema), are deleted here.
            cursor = await conn.execute(
                "DELETE FROM agentcore_sessions WHERE session_id = %s", (session_id,)
            )
            for table in ("agentcore_messages", "agentcore_turns"):
                await conn.execute(f"DELETE FROM {table} WHERE session_id = %s", (session_id,))
            return cursor.rowcount > 0

    async def check_session(self, session_id: str, timeout: float | None = None) -> None:
        """Raise :class:`StoreError` for an id no store keeps, an unreachable or read-only server.

        One short query on a pooled connection (the first call also sets up the tables).
        """
        check_session_id(session_id)
        deadline = Deadline.after(check_timeout(timeout, "check_session timeout"))
        async with self._connection(deadline) as conn:
            cursor = await conn.execute("SHOW transaction_read_only")
            row = await cursor.fetchone()
        if row is not None and row[0] == "on":
            raise StoreError(
                f"{self._where} is read-only (transaction_read_only is on: a hot standby, or a "
                "database or role set read-only), so no turn could be stored; connect to the "
                "primary"
            )

    async def acquire_lease(self, session_id: str, owner: str, seconds: float) -> bool:
        """Take or renew the lease of ``session_id`` for ``owner``; False if another holds it.

        One statement; the expiry is on the server's clock, so hosts whose clocks differ
        agree on it.
        """
        seconds = check_lease(session_id, owner, seconds)
        async with self._connection() as conn:
            cursor = await conn.execute(ACQUIRE_LEASE, (session_id, owner, seconds))
            return cursor.rowcount > 0

    async def release_lease(self, session_id: str, owner: str) -> bool:
        """Give back ``owner``'s lease of ``session_id``; return whether ``owner`` held it."""
        check_lease(session_id, owner)
        rows = await self._fetchall(RELEASE_LEASE, (session_id, owner))
        return bool(rows) and bool(rows[0][0])
