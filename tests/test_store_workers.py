"""Worker processes sharing one database (SQLite file or PostgreSQL): turns of one session go
to different processes, background summaries finish in one while the other runs a turn, and a
worker killed with SIGKILL in the middle of a turn leaves the session whole for the next one.

The workers are tests/store_worker.py, driven over their stdin and stdout.
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentcore import Message
from agentcore._slot_config_json import config_from_json

if TYPE_CHECKING:
    from conftest import StoreEngine

WORKER = Path(__file__).with_name("store_worker.py")
MARKER = re.compile(r"\[\[t(\d+)\]\]")
SESSION = "shared"

pytest.importorskip("agentcore_autosummary", reason="the workers summarize with autosummary")


class Worker:
    """One store_worker.py process."""

    def __init__(self, db: str, keep_sessions: bool = False, lease: bool = True) -> None:
        args = [sys.executable, str(WORKER), db, *(["--keep-sessions"] if keep_sessions else [])]
        args += [] if lease else ["--no-lease"]
        env = {**os.environ, "AGENTCORE_TIKTOKEN_TIMEOUT": "0"}
        self.process = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert "ready" in self.read()

    def read(self, timeout: float = 60) -> dict[str, Any]:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        assert ready, f"worker {self.process.pid} did not answer within {timeout} s"
        line = self.process.stdout.readline()
        assert line, f"worker {self.process.pid} exited with {self.process.wait()}"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def send(self, **command: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def turn(self, turn: int, **options: Any) -> dict[str, Any]:
        self.send(turn=turn, session=SESSION, **options)
        return self.read()

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def exit(self) -> None:
        self.send(exit=True)
        assert self.read() == {"exited": True}
        assert self.process.wait(timeout=30) == 0


def turns_of(history: list[Message]) -> list[tuple[str, int]]:
    """(role, turn) of each stored message, read from the markers."""
    found: list[tuple[str, int]] = []
    for message in history:
        turns = MARKER.findall(message.text)
        assert len(turns) == 1, message
        found.append((message.role, int(turns[0])))
    return found


async def check_session(engine: StoreEngine, turns: int) -> int:
    """The stored session holds turns 0..turns-1 once each, in order, and its summary matches
    the messages it claims to cover. Returns how many summaries were applied."""
    store = engine.open()
    try:
        history = await store.load_messages(SESSION, "default")
        expected = [(role, k) for k in range(turns) for role in ("user", "assistant")]
        assert turns_of(history) == expected
        focused = config_from_json((await store.load_slot_configs(SESSION))["default"], where="")
        assert focused.focused is not None
        summary = focused.focused.summary_override
        if summary is None:
            return 0
        covers = focused.focused.summary_covers
        covered_turns = sorted({k for _, k in turns_of(history[:covers])})
        assert [int(t) for t in MARKER.findall(summary)] == covered_turns
        state = await store.get_data(SESSION, "autosummary/default")
        assert state is not None
        assert state["summary"] is None  # the slot config holds it, not a second copy
        assert state["covered"] == covers
        return int(state["generation"])
    finally:
        await store.close()


@pytest.fixture
def workers() -> Any:
    started: list[Worker] = []
    yield started
    for worker in started:
        if worker.process.poll() is None:
            worker.process.kill()
            worker.process.wait()


@pytest.mark.parametrize("keep_sessions", [False, True], ids=["resume-each-turn", "keep-objects"])
async def test_two_processes_take_turns_of_one_session(
    shared_store_engine: StoreEngine, workers: list[Worker], keep_sessions: bool
) -> None:
    """Each turn runs in the other process, while the previous one may still summarize.

    Kept session objects catch up with the other process's turns and summaries before each
    model call; a summary computed from a history the other process has moved on from is
    never applied over a newer one (checked on the stored summary).
    """
    workers += [Worker(shared_store_engine.location, keep_sessions) for _ in range(2)]
    for turn in range(14):
        assert workers[turn % 2].turn(turn) == {"done": turn, "ran": True}
    for worker in workers:
        worker.exit()
    assert await check_session(shared_store_engine, 14) >= 2


async def test_a_worker_killed_mid_turn_leaves_the_session_whole(
    shared_store_engine: StoreEngine, workers: list[Worker]
) -> None:
    """SIGKILL at random points of a turn (model call, write, summary); another worker resumes.

    Without the session lease, so the survivor goes on at once rather than after each dead
    worker's lease lapses (that wait is test_session_lease.py's).
    """
    rng = random.Random(7)
    location = shared_store_engine.location
    survivor = Worker(location, lease=False)
    workers.append(survivor)
    turn = 0
    outcomes = {"stored before the kill": 0, "not stored": 0}
    for _ in range(6):
        victim = Worker(location, lease=False)
        workers.append(victim)
        assert victim.turn(turn) == {"done": turn, "ran": True}
        turn += 1
        # The next turn dies somewhere between the model call and the background summary.
        victim.send(turn=turn, session=SESSION, delay=rng.uniform(0, 0.02))
        time.sleep(rng.uniform(0, 0.04))
        victim.kill()
        answer = survivor.turn(turn, redo=True)
        assert answer["done"] == turn
        outcomes["not stored" if answer["ran"] else "stored before the kill"] += 1
        turn += 1
    assert survivor.turn(turn) == {"done": turn, "ran": True}
    survivor.exit()
    await check_session(shared_store_engine, turn + 1)
