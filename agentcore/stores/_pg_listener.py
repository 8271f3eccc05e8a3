"""The connection on which a :class:`~agentcore.stores.PostgresStore` hears of other commits.

One dedicated connection per store runs ``LISTEN`` on the channel the schema's trigger
notifies (see :data:`~agentcore.stores._pg_schema.CHANGES_CHANNEL`) and hands every notice
to the store's :class:`~agentcore.stores._pg_heads.HeadCache`. It reads its socket without
blocking, both when the event loop sees it readable and right before the store answers a
check from the cache, so a notice that has reached this process is always taken into
account. A lost connection makes the cache trust nothing, and is made again in the
background (50 ms, doubling, at most 1 s between tries) until the store closes.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.pq import ConnStatus

from agentcore.stores._deadline import pauses
from agentcore.stores._pg_heads import HeadCache
from agentcore.stores._pg_schema import CHANGES_CHANNEL, Connection, one_line

logger = logging.getLogger("agentcore.stores.postgres")

# The schema the slot table was found in, which the trigger names in its notices.
_SCHEMA_OF_SLOTS = (
    "SELECT n.nspname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace "
    "WHERE c.oid = to_regclass('agentcore_slots')"
)


class ChangeListener:
    """A connection listening for the change notices of one schema, made again when lost.

    ``conninfo`` and ``options`` are how the store's own connections are made (the DSN
    selects the schema, through ``search_path``, as it does for them).
    """

    def __init__(self, conninfo: str, options: dict[str, Any], cache: HeadCache, where: str):
        self._conninfo = conninfo
        self._options = {**options, "autocommit": True, "prepare_threshold": None}
        self._cache = cache
        self._where = where
        self._conn: Connection | None = None
        self._task: asyncio.Task[None] | None = None
        self._fileno: int | None = None
        self._closed = False

    @property
    def listening(self) -> bool:
        """Whether the connection is up and listening."""
        return self._conn is not None

    def start(self) -> None:
        """Connect and listen in the background, unless that is done or under way."""
        if self._closed or self._conn is not None or self._task is not None:
            return
        self._task = asyncio.get_running_loop().create_task(
            self._connect(), name="agentcore PostgreSQL change listener"
        )

    async def wait_started(self) -> None:
        """Wait until a connection under way is made (or given up on, when closing)."""
        task = self._task
        if task is not None:
            await asyncio.shield(task)

    def drain(self) -> None:
        """Hand the notices that have arrived to the cache; never waits."""
        conn = self._conn
        if conn is None:
            return
        pgconn = conn.pgconn
        try:
            pgconn.consume_input()
        except psycopg.Error as exc:
            self._lost(one_line(exc))
            return
        encoding = conn.info.encoding
        while (notice := pgconn.notifies()) is not None:
            self._cache.notice(notice.be_pid, notice.extra.decode(encoding, "replace"))
        if pgconn.status != ConnStatus.OK:
            self._lost("the server closed it")

    async def aclose(self) -> None:
        """Stop listening and close the connection; no task is left running."""
        self._closed = True
        self._cache.stop_listening()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        conn, self._conn = self._conn, None
        self._stop_reading()
        if conn is not None:
            await conn.close()

    def _lost(self, why: str) -> None:
        conn, self._conn = self._conn, None
        assert conn is not None
        self._stop_reading()
        self._cache.stop_listening()
        logger.warning(
            "%s: the change listener lost its connection (%s); checks query the server "
            "until it is back",
            self._where,
            why,
        )
        if not self._closed:
            self._task = asyncio.get_running_loop().create_task(
                self._connect(conn), name="agentcore PostgreSQL change listener"
            )

    def _stop_reading(self) -> None:
        fileno, self._fileno = self._fileno, None
        if fileno is not None:
            asyncio.get_running_loop().remove_reader(fileno)

    async def _connect(self, old: Connection | None = None) -> None:
        try:
            if old is not None:
                await old.close()
            for pause in pauses():
                try:
                    await self._listen()
                    return
                except (psycopg.Error, OSError) as exc:
                    logger.warning(
                        "%s: the change listener cannot connect (%s); trying again",
                        self._where,
                        one_line(exc),
                    )
                await asyncio.sleep(pause)
        finally:
            if asyncio.current_task() is self._task:
                self._task = None

    async def _listen(self) -> None:
        conn = await AsyncConnection.connect(self._conninfo, **self._options)
        try:
            await conn.execute(f"LISTEN {CHANGES_CHANNEL}")
            row = await (await conn.execute(_SCHEMA_OF_SLOTS)).fetchone()
            if row is None:
                raise psycopg.OperationalError("the agentcore_slots table is not found")
            loop = asyncio.get_running_loop()
            fileno = conn.pgconn.socket
            try:
                loop.add_reader(fileno, self.drain)
            except NotImplementedError:  # an event loop without readers: checks query
                await conn.close()
                self._closed = True
                return
        except BaseException:
            await conn.close()
            raise
        self._fileno = fileno
        self._conn = conn
        # Notices sent before this point were not heard: entries start after it.
        self._cache.start_listening(str(row[0]))
