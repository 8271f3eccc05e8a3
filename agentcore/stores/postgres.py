"""A store that keeps sessions in PostgreSQL, shared by many worker processes and hosts.

Needs the ``postgres`` extra (``pip install "agentcore[postgres]==0.3.0"``): psycopg 3 and
psycopg_pool. Importing :mod:`agentcore` never imports this module; reach the class as
``agentcore.stores.PostgresStore``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from agentcore.errors import (
    ConfigError,
    CorruptDataError,
    DuplicateTurnError,
    StoreError,
    StoreTimeoutError,
    WriteOutcomeUnknownError,
)
from agentcore.messages import Message
from agentcore.stores._codec import (
    EncodedWrite,
    check_start,
    check_stop,
    decode_config,
    decode_data,
    decode_message,
    decode_state,
    encode_batch,
)
from agentcore.stores._deadline import LOCK_TRY_SECONDS, Deadline, check_timeout, pauses
from agentcore.stores._pg_dsn import describe_dsn, hide_password, parse_dsn
from agentcore.stores._pg_schema import SCHEMA_VERSION, Connection, migrate, one_line
from agentcore.stores._pg_write import (
    FIND_TURN,
    LOCK_SESSION,
    SLOT_HEADS,
    apply_write,
    turn_of_row,
)
from agentcore.stores.base import (
    BaseStore,
    JsonValue,
    SessionState,
    SlotHead,
    StoredTurn,
    StoreWrite,
)

__all__ = [
    "RESOLVE_SECONDS",
    "SCHEMA_VERSION",
    "WRITE_RETRIES",
    "PostgresStore",
    "describe_dsn",
    "hide_password",
]

logger = logging.getLogger(__name__)

Pool = AsyncConnectionPool[Connection]


_SET_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', %s, true)"
_SET_TIMEOUTS = (
    "SELECT set_config('lock_timeout', %s, true), set_config('statement_timeout', %s, true)"
)


_LOCK_BEFORE_STATEMENT = 0.02


WRITE_RETRIES = 2
"""How many times a write with a ``turn_id`` is tried again after its connection broke."""

RESOLVE_SECONDS = 2.0
"""The least time given to reading back whether a write whose connection broke was stored.

A write with a ``timeout`` may overrun it by this much to find out, rather than leave its
outcome unknown.
"""

_RETRY_PAUSE = 0.05


class _ConnectionLost(StoreError):
    """The connection broke during a call, so a write may or may not have committed."""


def _connection_error(exc: psycopg.Error) -> bool:
    """Whether ``exc`` says the connection failed, rather than the server refusing a statement.

    The server's own refusals carry an SQLSTATE and roll the transaction back; a failure of the
    connection (class 08, a server shut down or a backend terminated: 57P, or a client-side
    error with no SQLSTATE at all, such as a pipeline that cannot end) leaves a commit unknown.
    """
    state = exc.sqlstate
    return state is None or state.startswith(("08", "57P"))


class _LockBusy(Exception):
    """One try of a write found its session locked for longer than the try may wait."""


def _milliseconds(seconds: float | None) -> str:
    """A PostgreSQL duration of at least 1 ms (0 would mean no limit)."""
    assert seconds is not None
    return f"{max(1, round(seconds * 1000))}ms"


def _setting(value: float | None, name: str) -> float | None:
    try:
        return check_timeout(value, f"PostgresStore {name}")
    except StoreError as exc:
        raise ConfigError(str(exc)) from None


class PostgresStore(BaseStore):
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

    The store belongs to the event loop it is first used in. Use it as
    ``async with PostgresStore(dsn) as store:`` or call :meth:`close` when done.
    """

    def __init__(
        self,
        dsn_or_pool: str | Pool,
        *,
        max_size: int = 10,
        timeout: float = 30.0,
        create: bool = True,
        lock_timeout: float | None = None,
        statement_timeout: float | None = None,
    ) -> None:
        if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 1:
            raise ConfigError(f"PostgresStore max_size must be an int >= 1, got {max_size!r}")
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or not timeout > 0
            or timeout == float("inf")
        ):
            raise ConfigError(f"PostgresStore timeout must be a finite number > 0, got {timeout!r}")
        self._timeout = float(timeout)
        self._lock_timeout = _setting(lock_timeout, "lock_timeout")
        self._statement_timeout = _setting(statement_timeout, "statement_timeout")
        self._create = bool(create)
        self._owns_pool = isinstance(dsn_or_pool, str)
        if isinstance(dsn_or_pool, str):
            self._dsn: str | None = parse_dsn(dsn_or_pool)
            self._where = f"PostgreSQL store ({describe_dsn(dsn_or_pool)})"
            self._pool: Pool = AsyncConnectionPool(
                dsn_or_pool,
                min_size=1,
                max_size=max_size,
                open=False,
                timeout=self._timeout,
                kwargs={"autocommit": True, "connect_timeout": max(1, round(self._timeout))},
                name="agentcore",
            )
        elif isinstance(dsn_or_pool, AsyncConnectionPool):
            self._dsn = None
            name = dsn_or_pool.name
            self._where = f"PostgreSQL store (pool {name!r})"
            self._pool = dsn_or_pool
        else:
            raise ConfigError(
                "PostgresStore takes a DSN string or a psycopg_pool.AsyncConnectionPool, "
                f"not {type(dsn_or_pool).__name__}"
            )
        self._ready = False
        self._setup_lock: asyncio.Lock | None = None
        self._closed = False

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return f"<PostgresStore {self._where}{state}>"

    @property
    def pool(self) -> Pool:
        """The connection pool the store runs its queries on."""
        return self._pool

    # -- connections and setup ----------------------------------------------------------

    @asynccontextmanager
    async def _connection(self, deadline: Deadline | None = None) -> AsyncIterator[Connection]:
        """A pooled connection with the schema ready; database errors become StoreError.

        With a ``deadline``, the wait for a connection ends with it (StoreTimeoutError), and
        a lock wait that ran out its try raises :class:`_LockBusy`.
        """
        self._check_open()
        if not self._ready:
            await self._setup()
        wait = self._timeout if deadline is None else deadline.cap(self._timeout)
        assert wait is not None
        try:
            async with self._pool.connection(timeout=max(wait, 0.001)) as conn:
                try:
                    yield conn
                except psycopg.Error as exc:
                    if conn.broken or _connection_error(exc):
                        raise _ConnectionLost(
                            f"{self._where}: the connection broke ({one_line(exc)})"
                        ) from exc
                    raise
        except PoolTimeout as exc:
            if wait < self._timeout:
                raise StoreTimeoutError(
                    f"{self._where}: no pooled connection free before the write's deadline "
                    f"({wait:g} s left); nothing was stored"
                ) from exc
            raise StoreError(
                f"{self._where}: no connection within {self._timeout:g} s ({exc}); "
                "check that the server is up, or raise max_size or timeout"
            ) from exc
        except psycopg.errors.LockNotAvailable as exc:
            raise _LockBusy(one_line(exc)) from exc
        except psycopg.errors.QueryCanceled as exc:
            if "lock" in (exc.diag.context or ""):
                # A statement timer that ran out during a lock wait: still a lock wait. (In
                # pipeline mode the server times a pipeline's statements together.)
                raise _LockBusy(one_line(exc)) from exc
            raise StoreTimeoutError(
                f"{self._where}: a statement was cancelled ({one_line(exc)}): it ran past "
                "statement_timeout or the write's timeout; nothing was stored"
            ) from exc
        except psycopg.Error as exc:
            raise StoreError(f"{self._where}: {one_line(exc)}") from exc

    async def _setup(self) -> None:
        if self._setup_lock is None:
            self._setup_lock = asyncio.Lock()
        async with self._setup_lock:
            if self._ready:
                return
            self._check_open()
            if self._dsn is not None:
                # One direct connection first: its error says why the server cannot be reached,
                # where the pool would only report a timeout.
                try:
                    conn = await AsyncConnection.connect(
                        self._dsn, autocommit=True, connect_timeout=max(1, round(self._timeout))
                    )
                except psycopg.Error as exc:
                    raise StoreError(f"cannot connect to {self._where}: {one_line(exc)}") from exc
                try:
                    await migrate(conn, self._where, create=self._create)
                finally:
                    await conn.close()
                await self._pool.open()
            else:
                await self._pool.open()
                try:
                    async with self._pool.connection() as pooled:
                        await migrate(pooled, self._where, create=self._create)
                except PoolTimeout as exc:
                    raise StoreError(
                        f"cannot connect to {self._where} within {self._timeout:g} s: {exc}"
                    ) from exc
            self._ready = True

    async def _fetchall(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        async with self._connection() as conn:
            cursor = await conn.execute(sql, params)
            return await cursor.fetchall()

    # -- the MemoryStore protocol ----------------------------------------------------------

    async def write(self, batch: StoreWrite) -> None:
        """Apply ``batch`` in one transaction, or raise :class:`StoreError` and change nothing.

        An append whose ``start`` is not the slot's message count, or an expected version
        that is not the slot's, is refused with :class:`~agentcore.errors.ConflictError`;
        a ``turn_id`` already stored with :class:`~agentcore.errors.DuplicateTurnError`.
        A write with a ``turn_id`` whose connection breaks is tried again (at most
        :data:`WRITE_RETRIES` times), then resolved by reading back whether its turn id is
        stored: see :class:`~agentcore.stores.StoreWrite`.
        """
        self._check_open()
        encoded = encode_batch(batch)
        deadline = Deadline.after(encoded.timeout)
        lost: _ConnectionLost | None = None
        for retry in range(WRITE_RETRIES + 1):
            try:
                await self._write_waiting(encoded, deadline)
                return
            except DuplicateTurnError:
                if lost is None:
                    raise
                # A try whose connection broke had stored it after all.
                self._log_resolved(encoded, lost, stored=True)
                return
            except _ConnectionLost as exc:
                if encoded.turn_id is None:
                    raise StoreError(
                        f"{exc}; the write to session {encoded.session_id!r} may or may not "
                        "have been stored (a write with a turn_id would have been resolved)"
                    ) from exc
                lost = exc
                if retry == WRITE_RETRIES or deadline.expired():
                    break
                logger.warning(
                    "%s: connection broke during the write of turn %r of session %r; "
                    "trying again (%d of %d)",
                    self._where,
                    encoded.turn_id,
                    encoded.session_id,
                    retry + 1,
                    WRITE_RETRIES,
                )
                await asyncio.sleep(_RETRY_PAUSE * (retry + 1))
            except StoreError as exc:
                if lost is None:
                    raise
                # This try stored nothing; an earlier one that lost its connection may have.
                await self._resolve(encoded, deadline, lost, exc)
                return
        assert lost is not None
        await self._resolve(encoded, deadline, lost, lost)

    async def _write_waiting(self, encoded: EncodedWrite, deadline: Deadline) -> None:
        """Write ``encoded``, waiting for a locked session in tries that free the pool."""
        # How long the write may wait for a locked session, over all its tries.
        lock_wait = Deadline.after(deadline.cap(self._lock_timeout))
        for pause in pauses():
            try:
                await self._write_once(encoded, deadline, lock_wait)
                return
            except _LockBusy as exc:
                left = lock_wait.remaining()
                if left is not None and left <= 0:
                    raise self._lock_timed_out(encoded, str(exc)) from None
            await asyncio.sleep(pause if left is None else min(pause, left))

    async def _resolve(
        self,
        encoded: EncodedWrite,
        deadline: Deadline,
        lost: _ConnectionLost,
        failure: StoreError,
    ) -> None:
        """Find out whether a write whose connection broke was stored: return if it was.

        Raises ``failure`` (as a StoreError saying so) when it was not, and
        :class:`WriteOutcomeUnknownError` when the read-back keeps failing.
        """
        assert encoded.turn_id is not None
        left = deadline.remaining()
        bound = Deadline.after(max(left if left is not None else self._timeout, RESOLVE_SECONDS))
        last: BaseException = lost
        for pause in pauses():
            try:
                turn = await self._read_back(encoded.session_id, encoded.turn_id, bound)
            except (StoreError, _LockBusy) as exc:
                last = exc
                left = bound.remaining()
                if left is not None and left <= 0:
                    break
                await asyncio.sleep(pause if left is None else min(pause, left))
                continue
            self._log_resolved(encoded, lost, stored=turn is not None)
            if turn is not None:
                return
            if failure is lost:
                raise StoreError(
                    f"{lost}; read back after it: turn {encoded.turn_id!r} of session "
                    f"{encoded.session_id!r} is not stored, nothing of the write was"
                ) from lost
            raise failure
        raise WriteOutcomeUnknownError(
            f"{lost}; whether turn {encoded.turn_id!r} of session {encoded.session_id!r} was "
            f"stored could not be read back ({last}); ask find_turn once the server is back"
        ) from lost

    async def _read_back(self, session_id: str, turn_id: str, bound: Deadline) -> StoredTurn | None:
        """Whether ``turn_id`` is stored, read after any transaction still writing the session.

        Takes the session's row lock the way a write does (in a transaction rolled back, so
        nothing is created), so a write still in flight on a broken connection ends first.
        """
        lock_ms = _milliseconds(bound.cap(None))
        async with self._connection(bound) as conn, conn.transaction(force_rollback=True):
            await conn.execute(_SET_LOCK_TIMEOUT, (lock_ms,))
            await conn.execute(LOCK_SESSION, (session_id, None))
            cursor = await conn.execute(FIND_TURN, (session_id, turn_id))
            return turn_of_row(await cursor.fetchone())

    def _log_resolved(self, encoded: EncodedWrite, lost: _ConnectionLost, *, stored: bool) -> None:
        logger.warning(
            "%s: the write of turn %r of session %r lost its connection (%s); read back: %s",
            self._where,
            encoded.turn_id,
            encoded.session_id,
            lost,
            "stored" if stored else "not stored",
        )

    async def _write_once(
        self, encoded: EncodedWrite, deadline: Deadline, lock_wait: Deadline
    ) -> None:
        """One try of a write: one transaction, bounded by the deadlines."""
        lock = lock_wait.cap(LOCK_TRY_SECONDS)
        statement = deadline.cap(self._statement_timeout)
        assert lock is not None
        if statement is not None:
            # A lock wait must end as a lock wait (and be tried again), not as a statement
            # that ran too long: the lock try ends first.
            lock = min(lock, max(0.001, statement - _LOCK_BEFORE_STATEMENT))
        lock_ms = _milliseconds(lock)
        # Pipeline mode: the statements go out without waiting for each other's replies,
        # except where a result is read (the message counts), so a write costs about three
        # round trips to the server whatever it holds.
        async with self._connection(deadline) as conn, conn.pipeline(), conn.transaction():
            if statement is None:
                await conn.execute(_SET_LOCK_TIMEOUT, (lock_ms,))
            else:
                await conn.execute(_SET_TIMEOUTS, (lock_ms, _milliseconds(statement)))
            await apply_write(conn, encoded)

    def _lock_timed_out(self, encoded: EncodedWrite, detail: str) -> StoreTimeoutError:
        limits = [
            f"{value:g} s ({name})"
            for name, value in (
                ("the write's timeout", encoded.timeout),
                ("lock_timeout", self._lock_timeout),
            )
            if value is not None
        ]
        return StoreTimeoutError(
            f"{self._where}: session {encoded.session_id!r} stayed locked by another "
            f"transaction for {' and '.join(limits)} ({detail}); nothing was stored"
        )

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

    async def count_messages(self, session_id: str, slot_id: str) -> int:
        """Return how many raw messages a slot holds (one row read, whatever the length)."""
        rows = await self._fetchall(
            "SELECT message_count FROM agentcore_slots WHERE session_id = %s AND slot_id = %s",
            (session_id, slot_id),
        )
        return int(rows[0][0]) if rows else 0

    async def slot_heads(self, session_id: str) -> dict[str, SlotHead]:
        """Return the version and message count of every slot with a stored config.

        One query that reads one row per slot, whatever the length of the histories.
        """
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
        async with self._connection() as conn, conn.transaction():
            cursor = await conn.execute(
                "DELETE FROM agentcore_sessions WHERE session_id = %s", (session_id,)
            )
            return cursor.rowcount > 0

    async def close(self) -> None:
        """Close the store (and the pool it made); later calls raise :class:`StoreError`.

        A pool given to the constructor stays open. Closing twice is fine.
        """
        if self._closed:
            return
        self._closed = True
        if self._owns_pool:
            await self._pool.close()
