"""What a turn costs a PostgreSQL store in round trips, with change notices on and off."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from agentcore import Agent, AgentBuilder, AgentSession
from agentcore.errors import ConfigError
from agentcore.stores import PostgresStore
from agentcore.stores._pg_listener import ChangeListener
from agentcore.testing import MockProvider

NOTICES = pytest.mark.direct_postgres("LISTEN needs a server session of its own")

# How long a test waits for a notice the server sends at once; far from what it takes.
NOTICE_WAIT = 60.0
"""How long a notice (or a closed connection's backend leaving) may take: generous, for a
machine at load 10; the polls end as soon as it happens."""


def _session(
    agent: Agent, store: PostgresStore, provider: MockProvider | None = None, *, lease: bool = False
) -> Any:
    """A session of ``store``; without the session lease unless ``lease``, so the trips counted
    are the turn's own (the lease's two are counted by the test of the defaults)."""
    provider = provider or MockProvider(responder=lambda r: "ok")
    builder = AgentBuilder().provider(provider).store(store).load_plugins(False)
    return AgentSession(agent, "s", builder.session_lease(lease).build())


def _count_trips(store: PostgresStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each use of a pooled connection: one transaction or statement, its round trips."""
    trips: list[str] = []
    borrow = store.pool.connection

    @asynccontextmanager
    async def counted(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async with borrow(*args, **kwargs) as conn:
            trips.append("connection")
            yield conn

    monkeypatch.setattr(store.pool, "connection", counted)
    return trips


async def _until(condition: Callable[[], bool], what: str) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + NOTICE_WAIT
    while not condition():
        assert loop.time() < end, f"no {what} within {NOTICE_WAIT:g} s"
        await asyncio.sleep(0.005)  # a poll interval, not a bound


async def _listening(store: PostgresStore) -> ChangeListener:
    """Start the store's change listener, wait until it listens and return it, before any write.

    A write that began before the listener listened is not tracked, and its notice may
    still come once it listens: it then drops the kept heads of the session's next write
    (whose turn queries, as without notices). The tests write after it listens.
    """
    await store.slot_heads("s")  # the store's first use starts the listener
    listener = store._listener
    assert listener is not None
    await listener.wait_started()
    return listener


async def _settled(store: PostgresStore) -> None:
    """Wait until the store's last write of "s" is confirmed by its own notice."""
    await _until(lambda: store._cached_heads("s") is not None, "notice of the store's own write")


async def _written_and_settled(session: Any, store: PostgresStore, text: str) -> None:
    """Submit a turn, then wait until its write is confirmed by its own notice.

    The notice of a write made while the listener was away may still come once it
    listens again, and drop the next write's kept heads (that turn queries, as without
    notices; the heads are never trusted wrongly): a turn whose heads were dropped is
    followed by another, a few at most.
    """
    kept = store._heads
    for attempt in range(5):
        await session.submit_turn(f"{text} ({attempt})")
        await _until(
            lambda: store._cached_heads("s") is not None or "s" not in kept._entries,
            "notice of the store's own write, or of an earlier one",
        )
        if store._cached_heads("s") is not None:
            return
    raise AssertionError("the heads of five writes in a row were dropped")


@NOTICES
async def test_a_postgres_turn_makes_one_server_round_trip(
    agent: Agent, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While nothing else writes the session, its check before the model call asks no server."""
    async with PostgresStore(postgres_dsn) as store:
        session = _session(agent, store)
        await _listening(store)
        await session.submit_turn("first")
        await session.submit_turn("second")  # written while listening: its heads are kept
        trips = _count_trips(store, monkeypatch)
        for turn in range(3):
            await _settled(store)
            trips.clear()
            await session.submit_turn(f"turn {turn}")
            assert trips == ["connection"], trips  # the write, nothing else
        texts = [m.text for m in await session.history()]
        assert texts[-2:] == ["turn 2", "ok"]


@NOTICES
async def test_with_the_default_lease_a_turn_adds_its_take_and_give_back(
    agent: Agent, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session lease (on by default) costs two short trips: one before the model call, one
    after the write."""
    async with PostgresStore(postgres_dsn) as store:
        session = _session(agent, store, lease=True)
        await _listening(store)
        await session.submit_turn("first")
        await session.submit_turn("second")
        trips = _count_trips(store, monkeypatch)
        for turn in range(3):
            await _settled(store)
            trips.clear()
            await session.submit_turn(f"turn {turn}")
            assert trips == ["connection"] * 3, trips  # take, write, give back


@NOTICES
async def test_another_writer_is_seen_by_the_next_turn_before_its_model_call(
    agent: Agent, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = MockProvider(responder=lambda r: "ok")
    async with PostgresStore(postgres_dsn) as store, PostgresStore(postgres_dsn) as other:
        session = _session(agent, store, provider)
        await _listening(store)
        await session.submit_turn("first")
        await session.submit_turn("second")
        await _settled(store)
        await _session(agent, other).submit_turn("from elsewhere")
        # The other store's notice drops the kept heads (the server sends it on commit).
        await _until(lambda: store._cached_heads("s") is None, "notice of the other write")
        trips = _count_trips(store, monkeypatch)
        await session.submit_turn("after")
        assert len(trips) > 1, trips  # the check read the session again
        sent = [m.text for m in provider.calls[-1].messages]
        assert sent[-3:] == ["from elsewhere", "ok", "after"], sent  # the model saw it
        texts = [m.text for m in await session.history()]
        assert texts[-4:] == ["from elsewhere", "ok", "after", "ok"]


async def test_without_change_notices_every_turn_queries(
    agent: Agent, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with PostgresStore(postgres_dsn, change_notices=False) as store:
        assert store._listener is None
        session = _session(agent, store)
        await session.submit_turn("first")
        trips = _count_trips(store, monkeypatch)
        for turn in range(3):
            trips.clear()
            await session.submit_turn(f"turn {turn}")
            assert len(trips) == 2, trips  # the check, then the write


async def test_change_notices_default_off_behind_a_pooler_and_for_a_given_pool(
    postgres_dsn: str,
) -> None:
    assert PostgresStore(postgres_dsn, prepare_threshold=None)._listener is None
    from psycopg_pool import AsyncConnectionPool

    pool: Any = AsyncConnectionPool(postgres_dsn, open=False)
    assert PostgresStore(pool)._listener is None
    assert PostgresStore(pool, change_notices=True)._listener is not None
    with pytest.raises(ConfigError, match="change_notices"):
        PostgresStore(postgres_dsn, change_notices="yes")  # type: ignore[arg-type]


@NOTICES
async def test_a_lost_listener_makes_checks_query_until_it_is_back(
    agent: Agent, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"agentcore-notices-{uuid.uuid4().hex[:12]}"
    dsn = make_conninfo(postgres_dsn, application_name=name)
    async with PostgresStore(dsn) as store:
        session = _session(agent, store)
        listener = await _listening(store)
        await session.submit_turn("first")
        await session.submit_turn("second")
        await _settled(store)
        conn = listener._conn
        assert conn is not None
        async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        await _until(lambda: listener._conn is not conn, "loss of the listener")
        assert store._cached_heads("s") is None
        trips = _count_trips(store, monkeypatch)
        await session.submit_turn("while reconnecting")
        assert len(trips) == 2, trips
        await listener.wait_started()
        await _until(lambda: listener.listening, "listener back")
        await _written_and_settled(session, store, "written while listening again")
        trips.clear()
        await session.submit_turn("back to one")
        assert trips == ["connection"], trips


@NOTICES
async def test_closing_leaves_nothing_running(agent: Agent, postgres_dsn: str) -> None:
    name = f"agentcore-close-{uuid.uuid4().hex[:12]}"
    store = PostgresStore(make_conninfo(postgres_dsn, application_name=name))
    session = _session(agent, store)
    await session.submit_turn("first")
    listener = store._listener
    assert listener is not None
    await listener.wait_started()
    assert listener.listening
    await session.aclose()
    await store.close()
    await store.close()  # twice is fine
    assert not listener.listening and listener._task is None
    assert asyncio.all_tasks() == {asyncio.current_task()}
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as admin:
        # A backend leaves pg_stat_activity as it exits, a moment after its client closed.
        left: tuple[Any, ...] | None = None

        async def gone() -> bool:
            nonlocal left
            cursor = await admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (name,)
            )
            left = await cursor.fetchone()
            return left == (0,)

        end = asyncio.get_running_loop().time() + NOTICE_WAIT
        while not await gone() and asyncio.get_running_loop().time() < end:
            await asyncio.sleep(0.05)  # a poll interval, not a bound
        assert left == (0,), f"the store's backends still there after {NOTICE_WAIT:g} s"


@NOTICES
async def test_closing_while_the_listener_connects(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    await store.slot_heads("s")  # sets up the tables and starts connecting the listener
    await store.close()
    assert asyncio.all_tasks() == {asyncio.current_task()}
