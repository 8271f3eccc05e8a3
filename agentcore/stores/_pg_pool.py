"""The connections of :class:`~agentcore.stores.PostgresStore`: its pool, setup and errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from agentcore.errors import ConfigError, StoreError, StoreTimeoutError
from agentcore.stores._deadline import Deadline, check_timeout
from agentcore.stores._pg_dsn import describe_dsn, parse_dsn
from agentcore.stores._pg_heads import HeadCache
from agentcore.stores._pg_listener import ChangeListener
from agentcore.stores._pg_schema import Connection, migrate, one_line
from agentcore.stores._pg_search import backfill
from agentcore.stores.base import BaseStore, SlotHead
from agentcore.validators import NON_NEGATIVE_INT, POSITIVE_INT, POSITIVE_NUMBER

Pool = AsyncConnectionPool[Connection]

SET_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', %s, true)"
SET_TIMEOUTS = (
    "SELECT set_config('lock_timeout', %s, true), set_config('statement_timeout', %s, true)"
)


LOCK_BEFORE_STATEMENT = 0.02


class ConnectionLost(StoreError):
    """The connection broke during a call, so a write may or may not have committed."""


def connection_error(exc: psycopg.Error) -> bool:
    """Whether ``exc`` says the connection failed, rather than the server refusing a statement.

    The server's own refusals carry an SQLSTATE and roll the transaction back; a failure of the
    connection (class 08, a server shut down or a backend terminated: 57P, or a client-side
    error with no SQLSTATE at all, such as a pipeline that cannot end) leaves a commit unknown.
    """
    state = exc.sqlstate
    return state is None or state.startswith(("08", "57P"))


class LockBusy(Exception):
    """One try of a write found its session locked for longer than the try may wait."""


def milliseconds(seconds: float | None) -> str:
    """A PostgreSQL duration of at least 1 ms (0 would mean no limit)."""
    assert seconds is not None
    return f"{max(1, round(seconds * 1000))}ms"


def _setting(value: float | None, name: str) -> float | None:
    try:
        return check_timeout(value, f"PostgresStore {name}")
    except StoreError as exc:
        raise ConfigError(str(exc)) from None


_POOL_TIMEOUT = POSITIVE_NUMBER.named("a finite number > 0")
_PREPARE = NON_NEGATIVE_INT.or_none().named(
    "an int >= 0 or None (never prepare, for PgBouncer in transaction mode)"
)


class PostgresConnections(BaseStore):
    """The pool, schema setup and error mapping :class:`~agentcore.stores.PostgresStore` runs on.

    Its constructor is documented on :class:`~agentcore.stores.PostgresStore`.
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
        check_connections: bool = True,
        prepare_threshold: int | None = 5,
        change_notices: bool | None = None,
    ) -> None:
        POSITIVE_INT.check("PostgresStore max_size", max_size)
        self._timeout = float(_POOL_TIMEOUT.check("PostgresStore timeout", timeout))
        self._lock_timeout = _setting(lock_timeout, "lock_timeout")
        self._statement_timeout = _setting(statement_timeout, "statement_timeout")
        _PREPARE.check("PostgresStore prepare_threshold", prepare_threshold)
        self._connect_options: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(1, round(self._timeout)),
            "prepare_threshold": prepare_threshold,
        }
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
                kwargs=self._connect_options,
                # A connection the server closed (a restart, a failover, an idle timeout) is
                # found when it is handed out, and replaced, rather than failing a call.
                check=AsyncConnectionPool.check_connection if check_connections else None,
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
        self._heads = HeadCache()
        if change_notices is not None and not isinstance(change_notices, bool):
            raise ConfigError(
                "PostgresStore change_notices must be True, False or None (on unless "
                f"prepare_threshold is None or a pool is given), not {change_notices!r}"
            )
        if change_notices is None:
            change_notices = self._owns_pool and prepare_threshold is not None
        self._listener: ChangeListener | None = None
        if change_notices:
            if self._dsn is not None:
                conninfo: object = self._dsn
                options = self._connect_options
            else:
                conninfo, kwargs = self._pool.conninfo, self._pool.kwargs
                if not isinstance(conninfo, str) or not isinstance(kwargs, dict | None):
                    raise ConfigError(
                        "PostgresStore change_notices=True needs a pool with a conninfo string "
                        "and a kwargs dict, to open its listening connection the same way"
                    )
                options = dict(kwargs or {})
            assert isinstance(conninfo, str)
            self._listener = ChangeListener(conninfo, options, self._heads, self._where)

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
        a lock wait that ran out its try raises :class:`LockBusy`.
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
                    if conn.broken or connection_error(exc):
                        raise ConnectionLost(
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
            raise LockBusy(one_line(exc)) from exc
        except psycopg.errors.QueryCanceled as exc:
            if "lock" in (exc.diag.context or ""):
                # A statement timer that ran out during a lock wait: still a lock wait. (In
                # pipeline mode the server times a pipeline's statements together.)
                raise LockBusy(one_line(exc)) from exc
            raise StoreTimeoutError(
                f"{self._where}: a statement was cancelled ({one_line(exc)}): it ran past "
                "statement_timeout or the write's timeout; nothing was stored"
            ) from exc
        except (
            psycopg.errors.DuplicatePreparedStatement,
            psycopg.errors.InvalidSqlStatementName,
        ) as exc:
            raise StoreError(
                f"{self._where}: {one_line(exc)}; a pooler in transaction mode (PgBouncer before "
                "1.21) lends each transaction another server connection, where the statements "
                "prepared on the last one do not exist: pass prepare_threshold=None"
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
                    conn = await AsyncConnection.connect(self._dsn, **self._connect_options)
                except psycopg.Error as exc:
                    raise StoreError(f"cannot connect to {self._where}: {one_line(exc)}") from exc
                try:
                    await migrate(conn, self._where, create=self._create)
                    await backfill(conn, self._where)
                finally:
                    await conn.close()
                await self._pool.open()
            else:
                await self._pool.open()
                try:
                    async with self._pool.connection() as pooled:
                        await migrate(pooled, self._where, create=self._create)
                        await backfill(pooled, self._where)
                except PoolTimeout as exc:
                    raise StoreError(
                        f"cannot connect to {self._where} within {self._timeout:g} s: {exc}"
                    ) from exc
            self._ready = True
            if self._listener is not None:
                self._listener.start()

    def _cached_heads(self, session_id: str) -> dict[str, SlotHead] | None:
        """The heads this store's last write of ``session_id`` left, if still current."""
        if self._listener is None or self._closed:
            return None
        self._listener.drain()
        return self._heads.lookup(session_id)

    async def _fetchall(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        async with self._connection() as conn:
            cursor = await conn.execute(sql, params)
            return await cursor.fetchall()

    # -- the MemoryStore protocol ----------------------------------------------------------

    async def close(self) -> None:
        """Close the store (and the pool it made); later calls raise :class:`StoreError`.

        A pool given to the constructor stays open. Closing twice is fine.
        """
        if not self._mark_closed():
            return
        if self._listener is not None:
            await self._listener.aclose()
        if self._owns_pool:
            await self._pool.close()
