"""Turn ids, deadlines in the store write, and checks before paying, through AgentSession."""

from __future__ import annotations

import sqlite3
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from agentcore import Agent, AgentBuilder, AgentSession, ConfigError, TurnTimeoutError
from agentcore._turn_checks import new_turn_id
from agentcore.errors import StoreError
from agentcore.testing import MockProvider

if TYPE_CHECKING:
    from conftest import StoreEngine

AGENT = Agent("assistant")


def _replies() -> MockProvider:
    count = 0

    def respond(request: object) -> str:
        nonlocal count
        count += 1
        return f"reply {count}"

    return MockProvider(responder=respond)


async def test_a_resubmitted_turn_id_returns_the_stored_turn(store_engine: StoreEngine) -> None:
    store = store_engine.open()
    provider = _replies()
    try:
        bundle = AgentBuilder().provider(provider).store(store).build()
        session = AgentSession(AGENT, "ids", bundle)
        first = await session.submit_turn("Hello", turn_id="order-17")
        # The caller does not know whether that turn was stored (its process died, say):
        # a new session object resubmits it under the same id.
        again = AgentSession(AGENT, "ids", bundle)
        second = await again.submit_turn("Hello", turn_id="order-17")
        streamed = await again.submit_turn_stream("Hello", turn_id="order-17").finalize()
        assert first.text == second.text == streamed.text == "reply 1"
        assert len(provider.calls) == 1  # no model call for the resubmissions
        assert [m.text for m in await again.history()] == ["Hello", "reply 1"]
        assert again.turn_index == 1
        # A new id is a new turn.
        assert (await again.submit_turn("Hello", turn_id="order-18")).text == "reply 2"
    finally:
        await store.close()


@pytest.mark.parametrize("turn_id", ["", "  ", "x" * 201, "line\nbreak", 17])
async def test_a_bad_turn_id_is_refused_before_any_call(turn_id: object) -> None:
    provider = _replies()
    session = AgentSession(AGENT, "ids", AgentBuilder().provider(provider).build())
    with pytest.raises(ConfigError, match="turn_id"):
        await session.submit_turn("Hello", turn_id=turn_id)  # type: ignore[arg-type]
    assert provider.calls == []


async def test_a_session_id_no_engine_can_store_fails_before_the_paid_call(
    store_engine: StoreEngine,
) -> None:
    # Issue 21: a 1 MB session id failed on PostgreSQL only after the model call.
    store = store_engine.open()
    provider = _replies()
    try:
        bundle = AgentBuilder().provider(provider).store(store).build()
        session = AgentSession(AGENT, "s" * 1_000_000, bundle)
        with pytest.raises(StoreError):
            await session.submit_turn("Hello")
        assert provider.calls == []
    finally:
        await store.close()


@pytest.mark.parametrize("lease", [True, False])
async def test_a_locked_sqlite_database_bounds_the_turn_by_its_deadline(
    tmp_path: Path, lease: bool
) -> None:
    # A 5 s busy wait once ignored turn_timeout=2. The database is locked after the session
    # opened, so the wait falls on taking the session lease (the default), before any model
    # call, or without the lease on the turn's own store write, after it.
    from agentcore import SqliteStore

    path = tmp_path / "locked.db"
    store = SqliteStore(path)
    provider = _replies()
    builder = AgentBuilder().provider(provider).store(store).turn_timeout(2)
    bundle = builder.session_lease(lease).build()
    session = AgentSession(AGENT, "locked", bundle)
    await session.submit_turn("first")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(TurnTimeoutError):
            await session.submit_turn("second")
        elapsed = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert elapsed < 2 + 10  # the deadline, not a fixed busy wait (generous under load)
    assert [m.text for m in await session.history()] == ["first", "reply 1"]
    # With the lease the timed-out turn never called the model; without it, it paid a call.
    assert len(provider.calls) == (1 if lease else 2)
    assert (await session.submit_turn("third")).text == ("reply 2" if lease else "reply 3")
    await store.close()


def test_a_new_turn_id_is_a_version_4_uuid_in_hex() -> None:
    """The id a turn gets when the caller gives none, as ``uuid.uuid4().hex`` made it."""
    ids = [new_turn_id() for _ in range(1000)]
    for turn_id in ids:
        parsed = uuid.UUID(hex=turn_id)
        assert parsed.hex == turn_id
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
    assert len(set(ids)) == len(ids)
