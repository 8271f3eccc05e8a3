"""One worker process of the load test: takes turns of any session, as a service worker would.

It receives ``("turn", session, turn, redo)`` jobs on its pipe and answers
``("done", session, turn, overhead_seconds, outcome, conflicts)`` as soon as the turn is stored;
the session's background summary goes on after that answer, while another worker may already
run the session's next turn. ``redo`` marks a job that a killed worker had taken: the turn may
already be stored, so the worker resumes the session from the store and checks first (as a
service does with the idempotency key of a retried request).
"""

from __future__ import annotations

import asyncio
import os
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

from agentcore import AgentSession, Message, StoreError
from bench.loadtest.workload import (
    AGENT,
    MODE,
    MODEL_SECONDS,
    build_bundle,
    marker,
    open_store,
    session_id,
    user_text,
)

MAX_ATTEMPTS = 20


def main(conn: Connection, db: str, model_delay: float, reuse_sessions: bool) -> None:
    """The process entry point."""
    os.environ.setdefault("AGENTCORE_TIKTOKEN_TIMEOUT", "0")
    asyncio.run(Worker(conn, db, model_delay, reuse_sessions).serve())


def _already_stored(history: list[Message], session: int, turn: int) -> bool:
    tag = marker(session, turn)
    # Turns are stored in order, so the last user messages are the ones to look at.
    return any(message.role == "user" and tag in message.text for message in reversed(history[-6:]))


class Worker:
    def __init__(self, conn: Connection, db: str, model_delay: float, reuse: bool) -> None:
        self.conn = conn
        self.store = open_store(db)
        self.bundle = build_bundle(self.store, model_delay)
        self.reuse = reuse
        self.sessions: dict[int, AgentSession] = {}
        self.closing: set[asyncio.Task[Any]] = set()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        fd = self.conn.fileno()

        def readable() -> None:
            try:
                inbox.put_nowait(self.conn.recv())
            except (EOFError, OSError):
                loop.remove_reader(fd)
                inbox.put_nowait(("stop",))

        loop.add_reader(fd, readable)
        self.conn.send(("ready", os.getpid()))
        jobs: set[asyncio.Task[None]] = set()
        while True:
            message = await inbox.get()
            if message[0] == "stop":
                break
            _, session, turn, redo = message
            job = asyncio.create_task(self.job(session, turn, redo))
            jobs.add(job)
            job.add_done_callback(jobs.discard)
        loop.remove_reader(fd)
        await asyncio.gather(*jobs, return_exceptions=True)
        for session_object in self.sessions.values():
            self._close_later(session_object)
        while self.closing:
            await asyncio.gather(*list(self.closing), return_exceptions=True)
        await self.store.close()
        self.conn.send(("stopped", os.getpid()))

    def _close_later(self, session: AgentSession) -> None:
        """Let the session's background summary finish without holding up the next job."""
        task = asyncio.ensure_future(session.aclose())
        self.closing.add(task)
        task.add_done_callback(self.closing.discard)

    def _drop(self, session: int) -> None:
        stale = self.sessions.pop(session, None)
        if stale is not None:
            self._close_later(stale)

    async def job(self, session: int, turn: int, redo: bool) -> None:
        spent = [0.0]
        MODEL_SECONDS.set(spent)
        started = time.perf_counter()
        conflicts = 0
        outcome = "failed"
        current: AgentSession | None = None
        try:
            for attempt in range(MAX_ATTEMPTS):
                current = None
                if self.reuse and not redo and attempt == 0:
                    current = self.sessions.get(session)
                if current is None:
                    self._drop(session)
                    current = AgentSession(AGENT, session_id(session), self.bundle, MODE)
                    await current.load()
                    if _already_stored(await current.history(), session, turn):
                        outcome = "already-stored"
                        break
                try:
                    await current.submit_turn(user_text(session, turn))
                except StoreError:
                    # Another writer moved the session on (ConflictError is a StoreError).
                    conflicts += 1
                    self._close_later(current)
                    current = None
                    self.sessions.pop(session, None)
                    continue
                outcome = "ran"
                break
        except Exception:
            self.conn.send(("failed", session, turn, traceback.format_exc()))
            return
        overhead = time.perf_counter() - started - spent[0]
        if outcome == "failed":
            self.conn.send(("failed", session, turn, f"{conflicts} conflicts in a row"))
            return
        self.conn.send(("done", session, turn, overhead, outcome, conflicts))
        if current is not None:
            if self.reuse:
                self.sessions[session] = current
            else:
                self._close_later(current)
        # The fake model records every request; keep the worker's memory flat.
        self.bundle.provider.calls.clear()  # type: ignore[attr-defined]
