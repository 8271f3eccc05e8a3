"""Hands turns to worker processes, kills workers at random, and collects what they report.

Turn ``k`` of a session is handed out only once turn ``k - 1`` was reported stored, and to
another worker than the one that ran the previous turn when there is one, so consecutive turns
of a session run in different processes (while the previous one may still be summarizing).
A killed worker's jobs go to other workers with ``redo`` set.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import os
import random
import signal
import time
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from attrs import define, field

from bench.loadtest import worker


@define
class Options:
    db: str
    workers: int
    sessions: int
    turns: int
    concurrency: int
    kill_every: int
    time_limit: float
    model_delay: float
    reuse_sessions: bool
    seed: int


@define
class _Worker:
    number: int
    process: BaseProcess
    conn: Connection
    ready: bool = False
    jobs: dict[int, int] = field(factory=dict)
    """session -> turn, for the jobs this worker holds."""


@define
class Outcome:
    """What the run did, as the coordinator saw it."""

    acknowledged: set[tuple[int, int]] = field(factory=set)
    overheads: list[float] = field(factory=list)
    already_stored: int = 0
    conflicts: int = 0
    failures: list[str] = field(factory=list)
    kills: int = 0
    kills_with_jobs: int = 0
    redone: int = 0
    seconds: float = 0.0
    timed_out: bool = False
    started_workers: int = 0


class Coordinator:
    def __init__(self, options: Options) -> None:
        self.options = options
        self.random = random.Random(options.seed)
        self.context = multiprocessing.get_context("spawn")
        self.workers: dict[int, _Worker] = {}
        self.next_number = 0
        self.next_turn = [0] * options.sessions
        self.in_flight: dict[int, int] = {}  # session -> worker number
        self.last_worker: dict[int, int] = {}
        self.redo: set[int] = set()
        self.ready: collections.deque[int] = collections.deque(range(options.sessions))
        self.outcome = Outcome()
        self.kills_due = 0

    # -- workers -------------------------------------------------------------------------

    def _start_worker(self) -> None:
        parent, child = self.context.Pipe()
        number = self.next_number
        self.next_number += 1
        process = self.context.Process(
            target=worker.main,
            args=(child, self.options.db, self.options.model_delay, self.options.reuse_sessions),
            name=f"loadtest-worker-{number}",
            daemon=True,
        )
        process.start()
        child.close()
        self.workers[number] = _Worker(number, process, parent)
        self.outcome.started_workers += 1

    def _lose_worker(self, number: int) -> None:
        """Take back the jobs of a dead worker; they go to others, marked ``redo``."""
        gone = self.workers.pop(number)
        gone.conn.close()
        gone.process.join(timeout=10)
        for session in gone.jobs:
            self.in_flight.pop(session, None)
            self.redo.add(session)
            self.ready.appendleft(session)
            self.outcome.redone += 1

    def _kill_one(self) -> None:
        busy = [w for w in self.workers.values() if w.ready and w.jobs]
        candidates = busy or [w for w in self.workers.values() if w.ready]
        if not candidates:
            return
        victim = self.random.choice(candidates)
        os.kill(victim.process.pid or 0, signal.SIGKILL)
        self.outcome.kills += 1
        if victim.jobs:
            self.outcome.kills_with_jobs += 1
        self._lose_worker(victim.number)
        self._start_worker()

    # -- dispatch ---------------------------------------------------------------------------

    def _dispatch(self) -> None:
        room = {
            n: self.options.concurrency - len(w.jobs)
            for n, w in self.workers.items()
            if w.ready and len(w.jobs) < self.options.concurrency
        }
        for _ in range(len(self.ready)):
            if not room:
                return
            session = self.ready.popleft()
            if session in self.in_flight or self.next_turn[session] >= self.options.turns:
                continue
            # Another process than the one that ran the previous turn, when one has room.
            others = [n for n in room if n != self.last_worker.get(session)]
            number = self.random.choice(others or list(room))
            target = self.workers[number]
            turn = self.next_turn[session]
            try:
                target.conn.send(("turn", session, turn, session in self.redo))
            except OSError:
                self.ready.appendleft(session)
                return
            target.jobs[session] = turn
            self.in_flight[session] = number
            room[number] -= 1
            if room[number] == 0:
                del room[number]

    def _receive(self, number: int, message: tuple[Any, ...]) -> None:
        source = self.workers[number]
        kind = message[0]
        if kind == "ready":
            source.ready = True
        elif kind == "done":
            _, session, turn, overhead, outcome, conflicts = message
            source.jobs.pop(session, None)
            self.in_flight.pop(session, None)
            self.redo.discard(session)
            self.last_worker[session] = number
            self.outcome.acknowledged.add((session, turn))
            self.outcome.conflicts += conflicts
            if outcome == "already-stored":
                self.outcome.already_stored += 1
            else:
                self.outcome.overheads.append(overhead)
            self.next_turn[session] = turn + 1
            if turn + 1 < self.options.turns:
                self.ready.append(session)
            # On average one kill -9 every kill_every stored turns, whatever the speed.
            if self.options.kill_every > 0 and self.random.random() < 1 / self.options.kill_every:
                self.kills_due += 1
        elif kind == "failed":
            _, session, turn, error = message
            source.jobs.pop(session, None)
            self.in_flight.pop(session, None)
            self.redo.add(session)
            self.outcome.failures.append(f"session {session} turn {turn}: {error}")
            if len(self.outcome.failures) < 50:
                self.ready.append(session)

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> Outcome:
        options = self.options
        for _ in range(options.workers):
            self._start_worker()
        started = time.monotonic()
        deadline = started + options.time_limit
        try:
            while True:
                now = time.monotonic()
                if now >= deadline:
                    self.outcome.timed_out = True
                    break
                if not self.in_flight and not any(t < options.turns for t in self.next_turn):
                    break
                while self.kills_due:
                    self.kills_due -= 1
                    self._kill_one()
                self._dispatch()
                timeout = max(0.0, deadline - time.monotonic())
                by_conn = {w.conn: n for n, w in self.workers.items()}
                for conn in wait(list(by_conn), timeout=timeout):
                    number = by_conn[conn]  # type: ignore[index]
                    try:
                        while conn.poll():  # type: ignore[union-attr]
                            self._receive(number, conn.recv())  # type: ignore[union-attr]
                    except (EOFError, OSError):
                        self.outcome.failures.append(f"worker {number} died on its own")
                        self._lose_worker(number)
                        self._start_worker()
            self.outcome.seconds = time.monotonic() - started
        finally:
            self._stop_all()
        return self.outcome

    def _stop_all(self) -> None:
        """Let every worker finish its jobs and summaries, collecting the last reports."""
        for w in self.workers.values():
            with contextlib.suppress(OSError):
                w.conn.send(("stop",))
        until = time.monotonic() + 120
        live = {w.conn: n for n, w in self.workers.items()}
        while live and time.monotonic() < until:
            for conn in wait(list(live), timeout=max(0.0, until - time.monotonic())):
                number = live[conn]  # type: ignore[index]
                try:
                    message = conn.recv()  # type: ignore[union-attr]
                except (EOFError, OSError):
                    del live[conn]  # type: ignore[arg-type]
                    continue
                if message[0] == "stopped":
                    del live[conn]  # type: ignore[arg-type]
                else:
                    self._receive(number, message)
        for w in self.workers.values():
            w.process.join(timeout=10)
            if w.process.is_alive():
                w.process.kill()
                w.process.join()
            w.conn.close()
