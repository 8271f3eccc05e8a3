"""The session lease: several workers on one session, one turn at a time, none paid in vain.

Four worker processes (tests/lease_worker.py) run 25 turns each of one session on a shared
SQLite file or PostgreSQL database, all at once. With the builder's defaults (the lease is
on) and with ``AgentBuilder().session_lease()`` no turn reaches its caller as a
``ConflictError``, the model is called once per stored turn, and every model call saw the
turn stored just before it. A worker killed while it holds the lease blocks the others only
until the lease lapses.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ConfigError,
    InMemoryStore,
    Message,
    SqliteStore,
    TurnTimeoutError,
)
from agentcore._lease import LEASE_SECONDS, SessionLease
from agentcore.testing import MockProvider

if TYPE_CHECKING:
    from conftest import StoreEngine

WORKER = Path(__file__).with_name("lease_worker.py")
ANSWER = re.compile(r"answer \[\[(\w+-\d+)\]\] after \[\[(\w+-\d+|start)\]\]")


def start_workers(
    location: str, count: int, turns: int, lease: str, logs: Path
) -> list[subprocess.Popen[str]]:
    """Start ``count`` workers, wait until each is ready, then let them all go at once."""
    env = {**os.environ, "AGENTCORE_TIKTOKEN_TIMEOUT": "0"}
    workers: list[subprocess.Popen[str]] = []
    try:
        for n in range(count):
            with open(logs / f"w{n}.log", "w") as log:
                workers.append(
                    subprocess.Popen(
                        [sys.executable, str(WORKER), location, f"w{n}", str(turns), lease],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=log,
                        text=True,
                        env=env,
                    )
                )
        for n, worker in enumerate(workers):
            assert worker.stdout is not None
            line = worker.stdout.readline()
            assert line.strip() == "ready", (logs / f"w{n}.log").read_text()
        for worker in workers:
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
    except BaseException:
        for worker in workers:
            worker.kill()
            worker.wait()
        raise
    return workers


def reports_of(workers: list[subprocess.Popen[str]], logs: Path) -> list[dict[str, Any]]:
    """The report line of each worker, once all have finished."""
    reports = []
    for n, worker in enumerate(workers):
        out, _ = worker.communicate(timeout=300)
        assert worker.returncode == 0, (logs / f"w{n}.log").read_text()
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def stale_calls(history: list[Message]) -> int:
    """How many replies answered a model call that had not seen the turn stored before it."""
    stale, previous = 0, "start"
    for message in history:
        if message.role != "assistant":
            continue
        match = ANSWER.fullmatch(message.text)
        assert match is not None, message.text
        this, after = match.groups()
        stale += after != previous
        previous = this
    return stale


async def shared_run(
    engine: StoreEngine, lease: str, tmp_path: Path
) -> tuple[list[dict[str, Any]], list[Message]]:
    """Four worker processes x 25 turns of one session; their reports and the stored history.

    Prints the figures docs/scaling-out.md quotes.
    """
    workers = start_workers(engine.location, 4, 25, lease, tmp_path)
    try:
        reports = reports_of(workers, tmp_path)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    store = engine.open()
    try:
        history = await store.load_messages("shared", "default")
    finally:
        await store.close()
    calls = sum(report["calls"] for report in reports)
    conflicts = sum(report["conflicts"] for report in reports)
    print(
        f"\n{engine.name}, 4 processes x 25 turns, session lease {lease}: "
        f"{len(history) // 2} turns stored, {calls} model calls, {conflicts} conflicts, "
        f"{stale_calls(history)} calls on a stale history"
    )
    return reports, history


@pytest.mark.parametrize("lease", ["default", "on"])
async def test_four_processes_share_one_session_without_conflicts(
    shared_store_engine: StoreEngine, tmp_path: Path, lease: str
) -> None:
    reports, history = await shared_run(shared_store_engine, lease, tmp_path)
    calls = sum(report["calls"] for report in reports)
    conflicts = sum(report["conflicts"] for report in reports)
    assert [report["errors"] for report in reports] == [[]] * 4
    assert conflicts == 0
    assert len(history) == 200
    assert calls == 100
    assert stale_calls(history) == 0


async def test_without_the_lease_turns_stay_whole_but_may_be_answered_on_a_stale_history(
    shared_store_engine: StoreEngine, tmp_path: Path
) -> None:
    """``session_lease(False)``: what the default saves (the figures in docs/scaling-out.md).

    Every turn is stored whole, in pairs, or reported as a ``ConflictError``; how many
    model calls saw a stale history depends on timing, so it is printed, not asserted.
    """
    reports, history = await shared_run(shared_store_engine, "off", tmp_path)
    conflicts = sum(report["conflicts"] for report in reports)
    assert [report["errors"] for report in reports] == [[]] * 4
    assert sum(report["stored"] for report in reports) + conflicts == 100
    assert len(history) == 2 * sum(report["stored"] for report in reports)
    assert [m.role for m in history] == ["user", "assistant"] * (len(history) // 2)


_HOLDER = """
import asyncio, sys
from agentcore import Agent, AgentBuilder, AgentSession, LlmRequest, LlmResponse, SqliteStore
from agentcore.testing import MockProvider

async def hang(request: LlmRequest) -> LlmResponse:
    print("calling", flush=True)
    await asyncio.sleep(600)
    raise AssertionError("unreachable")

async def main(path: str) -> None:
    bundle = (
        AgentBuilder().provider(MockProvider(responder=hang)).store(SqliteStore(path))
        .load_plugins(False).session_lease().build()
    )
    await AgentSession(Agent("a"), "shared", bundle).submit_turn("doomed")

asyncio.run(main(sys.argv[1]))
"""


async def test_a_killed_worker_blocks_the_session_only_until_its_lease_lapses(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "lease.db")
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, path], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(holder.stdout.readline), 60)
        assert line.strip() == "calling"  # it holds the lease, in its model call
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    store = SqliteStore(path)
    assert not await store.acquire_lease("shared", "probe", 1)  # the dead worker's, still
    bundle = (
        AgentBuilder()
        .provider(MockProvider(["after the kill"]))
        .store(store)
        .load_plugins(False)
        .session_lease()
        .build()
    )
    session = AgentSession(Agent("a"), "shared", bundle)
    began = time.monotonic()
    reply = await session.submit_turn("next")
    waited = time.monotonic() - began
    print(f"\nthe next turn ran {waited:.1f} s after the holder was killed")
    assert reply.text == "after the kill"
    assert waited < LEASE_SECONDS + 30
    await session.aclose()
    await store.close()


async def test_a_turn_waiting_for_the_lease_times_out_storing_nothing(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "held.db"))
    await store.list_sessions()
    assert await store.acquire_lease("shared", "another-worker", 600)
    calls: list[Any] = []

    async def respond(request: Any) -> Any:
        calls.append(request)
        raise AssertionError("no model call while another worker holds the lease")

    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .store(store)
        .load_plugins(False)
        .session_lease()
        .turn_timeout(1)
        .build()
    )
    session = AgentSession(Agent("a"), "shared", bundle)
    try:
        await session.submit_turn("waits")
    except TurnTimeoutError as exc:
        assert "nothing of it was stored" in str(exc)
    else:
        raise AssertionError("the turn ran while another worker held the lease")
    assert calls == []
    assert await session.history() == []
    await session.aclose()
    await store.close()


async def test_a_cancelled_turn_gives_the_lease_back() -> None:
    store = InMemoryStore()
    calling = asyncio.Event()

    async def hang(request: Any) -> Any:
        calling.set()
        await asyncio.sleep(600)

    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=hang))
        .store(store)
        .load_plugins(False)
        .session_lease()
        .build()
    )
    session = AgentSession(Agent("a"), "shared", bundle)
    turn = asyncio.ensure_future(session.submit_turn("cancelled"))
    await asyncio.wait_for(calling.wait(), 60)
    assert not await store.acquire_lease("shared", "probe", 1)  # held during the call
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    assert await store.acquire_lease("shared", "probe", 1)  # given back, not left to lapse
    assert await session.history() == []


def test_session_lease_takes_a_bool() -> None:
    with pytest.raises(ConfigError, match="session_lease must be True or False, got 'yes'"):
        AgentBuilder().session_lease("yes")  # type: ignore[arg-type]


async def test_a_lease_held_longer_than_its_length_is_renewed_until_given_back() -> None:
    """A turn twice as long as its lease keeps it: no other worker takes it meanwhile."""
    store = InMemoryStore()
    lease = SessionLease(store, "shared", seconds=6.0)  # renewed every 2 s
    await lease.acquire()
    taken_by_another = []
    for _ in range(4):  # 4 x 3 s: twice the lease's length
        await asyncio.sleep(3)
        taken_by_another.append(await store.acquire_lease("shared", "probe", 1))
    await lease.release()
    assert taken_by_another == [False] * 4
    assert await store.acquire_lease("shared", "probe", 1)  # given back


def test_the_session_lease_is_on_by_default() -> None:
    bundle = AgentBuilder().provider(MockProvider(["hi"])).load_plugins(False).build()
    assert bundle.config.session_lease
    off = AgentBuilder().provider(MockProvider(["hi"])).load_plugins(False).session_lease(False)
    assert not off.build().config.session_lease
