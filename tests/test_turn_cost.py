"""What a turn costs the store: the same statements and steps however long the history."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlite_quiet import own_statements, quiet

from agentcore import Agent, AgentBuilder, AgentSession, Message, SqliteStore
from agentcore.errors import ConflictError, DuplicateTurnError
from agentcore.stores import MessageAppend, SlotHead, StoreWrite
from agentcore.testing import MockProvider


class RecordingStore(SqliteStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.writes: list[StoreWrite] = []

    async def write(self, batch: StoreWrite) -> None:
        self.writes.append(batch)
        await super().write(batch)


async def test_turns_store_the_slot_config_once(agent: Agent, tmp_path: Path) -> None:
    store = RecordingStore(tmp_path / "once.db")
    bundle = AgentBuilder().provider(MockProvider(responder=lambda r: "ok")).store(store)
    session = AgentSession(agent, "s", bundle.load_plugins(False).build())
    for turn in range(3):
        await session.submit_turn(f"turn {turn}")
    assert [set(write.slot_configs) for write in store.writes] == [{"default"}, set(), set()]
    assert (await store.slot_heads("s"))["default"].version == 1
    await store.close()


async def test_a_turn_costs_the_same_with_a_long_history(agent: Agent, tmp_path: Path) -> None:
    """Catch-up check and write of a turn: no statement grows with the history."""
    store = SqliteStore(tmp_path / "flat.db")
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=lambda r: "ok"))
        .store(store)
        .load_plugins(False)
        .build()
    )
    conn = store._conn

    async def measure(session: AgentSession) -> tuple[list[str], int]:
        statements: list[str] = []
        steps = 0

        def step() -> int:
            nonlocal steps
            steps += 1
            return 0

        # Nothing but the turn runs on the connection while it is measured.
        await quiet(store, session.session_id)
        conn.set_trace_callback(statements.append)
        conn.set_progress_handler(step, 1)
        try:
            await session.submit_turn("one more")
        finally:
            conn.set_trace_callback(None)
            conn.set_progress_handler(None, 1)
        return own_statements(statements), steps

    results: dict[str, Any] = {}
    for session_id, turns in (("short", 2), ("long", 600)):
        session = AgentSession(agent, session_id, bundle)
        for turn in range(turns):
            await session.submit_turn(f"turn {turn}")
        results[session_id] = await measure(session)
    short_statements, short_steps = results["short"]
    long_statements, long_steps = results["long"]
    assert len(long_statements) == len(short_statements)
    assert not any("count(" in statement.lower() for statement in long_statements)
    # A deeper b-tree may cost a few steps; a scan of 1,200 messages would cost thousands.
    print(f"\nSQLite VM steps of one turn: {short_steps} (4 messages), {long_steps} (1,200)")
    assert long_steps <= short_steps + 20, (short_steps, long_steps)
    await store.close()


async def test_a_sqlite_turn_runs_only_the_statements_of_its_write(
    agent: Agent, tmp_path: Path
) -> None:
    """No PRAGMA to set and reset the lock wait, no look-up of a turn id that is new."""
    store = SqliteStore(tmp_path / "statements.db")
    bundle = AgentBuilder().provider(MockProvider(responder=lambda r: "ok")).store(store)
    session = AgentSession(agent, "s", bundle.load_plugins(False).build())
    await session.submit_turn("first")
    statements: list[str] = []
    store._conn.set_trace_callback(statements.append)
    try:
        await session.submit_turn("second")
    finally:
        store._conn.set_trace_callback(None)
    assert not [s for s in statements if "busy_timeout" in s], statements
    # The session lease (on by default): one statement to take it, one to give it back.
    assert statements[0].startswith("INSERT INTO leases"), statements
    assert statements[-1].startswith("DELETE FROM leases"), statements
    statements = statements[1:-1]
    assert not [s for s in statements if s.startswith("SELECT") and "FROM turns" in s]
    assert statements[0] == "PRAGMA data_version"  # the check before the model call
    assert "BEGIN IMMEDIATE" in statements and statements[-1] == "COMMIT"
    # The heads kept from the last turn's write answer the conflict checks and give the
    # heads after this one: no count or version is read.
    assert not [s for s in statements if "max(" in s.lower() or "FROM slots" in s], statements
    # A resubmitted turn id is still refused as a duplicate (looked up on the conflict).
    write = StoreWrite(
        "s", appends={"default": MessageAppend(0, [Message.user("x")])}, turn_id="t-1"
    )
    await store.write(
        StoreWrite("s", appends={"default": MessageAppend(4, [Message.user("y")])}, turn_id="t-1")
    )
    with pytest.raises(DuplicateTurnError):
        await store.write(write)
    await store.close()


async def test_a_sqlite_turn_makes_no_thread_round_trip(
    agent: Agent, tmp_path: Path, monkeypatch: Any
) -> None:
    """While nothing else wrote, neither the check before the model call nor the write
    needs a worker thread: the write commits on the calling thread, finding the file free."""
    store = SqliteStore(tmp_path / "hops.db")
    bundle = AgentBuilder().provider(MockProvider(responder=lambda r: "ok")).store(store)
    session = AgentSession(agent, "s", bundle.load_plugins(False).build())
    await session.submit_turn("first")  # loads the session
    hops: list[str] = []
    to_thread = asyncio.to_thread

    async def counted(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(fn, "__qualname__", repr(fn)))
        return await to_thread(fn, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    for turn in range(3):
        await session.submit_turn(f"turn {turn}")
    assert hops == []
    # Another connection's commit is seen at once: the next check reads the file again.
    async with SqliteStore(tmp_path / "hops.db") as other:
        builder = AgentBuilder().provider(MockProvider(responder=lambda r: "ok")).store(other)
        other_session = AgentSession(agent, "s", builder.load_plugins(False).build())
        await other_session.submit_turn("from elsewhere")
    hops.clear()
    await session.submit_turn("after")
    assert len(hops) > 1
    texts = [m.text for m in await session.history()]
    assert texts[-4:] == ["from elsewhere", "ok", "after", "ok"]
    await store.close()


async def test_slot_heads_see_every_connection_and_delete(tmp_path: Path) -> None:
    path = tmp_path / "heads.db"
    async with SqliteStore(path) as mine, SqliteStore(path) as theirs:
        config = {"mode": "full"}
        await mine.write(StoreWrite("s", slot_configs={"a": config}))
        assert (await mine.slot_heads("s"))["a"] == SlotHead(1, 0)
        await theirs.write(StoreWrite("s", appends={"a": MessageAppend(0, [Message.user("x")])}))
        assert (await mine.slot_heads("s"))["a"] == SlotHead(1, 1)
        await mine.write(StoreWrite("s", appends={"a": MessageAppend(1, [Message.user("y")])}))
        assert (await theirs.slot_heads("s"))["a"] == SlotHead(1, 2)
        assert (await mine.slot_heads("s"))["a"] == SlotHead(1, 2)
        assert await mine.delete_session("s")
        assert await mine.slot_heads("s") == {}
        assert await theirs.slot_heads("s") == {}


async def test_a_write_checked_against_kept_heads_still_refuses_every_conflict(
    tmp_path: Path,
) -> None:
    path = tmp_path / "conflicts.db"

    def append(start: int, text: str) -> StoreWrite:
        return StoreWrite("s", appends={"a": MessageAppend(start, [Message.user(text)])})

    async with SqliteStore(path) as mine, SqliteStore(path) as theirs:
        await mine.write(StoreWrite("s", slot_configs={"a": {"mode": "full"}}))
        await mine.write(append(0, "x"))  # mine keeps the heads its write left
        # Another connection commits: the kept heads are stale, and the write finds out.
        await theirs.write(append(1, "z"))
        with pytest.raises(ConflictError, match="starts at 1 but the slot holds 2"):
            await mine.write(append(1, "y"))
        await mine.write(append(2, "w"))
        # Kept heads current: a stale start and a stale config version are refused.
        with pytest.raises(ConflictError, match="starts at 0 but the slot holds 3"):
            await mine.write(append(0, "y"))
        await mine.write(append(3, "v"))
        with pytest.raises(ConflictError, match="config version 1, not the expected 0"):
            await mine.write(
                StoreWrite("s", slot_configs={"a": {"mode": "full"}}, expected_versions={"a": 0})
            )
        await mine.write(append(4, "u"))
        await mine.write(
            StoreWrite(
                "s",
                slot_configs={"a": {"mode": "full"}},
                expected_versions={"a": 1},
                appends={"a": MessageAppend(5, [Message.user("t")])},
            )
        )
        assert (await mine.slot_heads("s"))["a"] == SlotHead(2, 6)
        assert (await theirs.slot_heads("s"))["a"] == SlotHead(2, 6)
        stored = await theirs.load_messages("s", "a")
        assert [m.text for m in stored] == ["x", "z", "w", "v", "u", "t"]
