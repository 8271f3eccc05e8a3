"""A worker process for tests/test_store_workers.py: takes turns of sessions in a shared store.

Run as ``python store_worker.py DB [--keep-sessions] [--no-lease]`` where DB is an SQLite
path or a PostgreSQL DSN (``--no-lease``: built with ``session_lease(False)``). It reads one
JSON command a line on stdin and answers one JSON line on stdout:

- ``{"turn": K, "session": "s", "delay": SECONDS}``: run turn K of the session (unless a turn
  with its marker is stored already), answer ``{"done": K, "ran": bool}`` once it is stored;
  the session's background summary goes on after the answer;
- ``{"exit": true}``: finish every background summary, close the store, answer, exit.

The fake model's reply repeats the turn's marker, and a summary lists the markers of the
messages it was made from, so the test can check the stored history and summary alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from typing import Any

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    LlmRequest,
    LlmResponse,
    MemoryStore,
    Message,
    SqliteStore,
    StoreError,
    Usage,
)
from agentcore.testing import MockProvider

AGENT = Agent("worker", system_prompt="Test worker.")
MARKER = re.compile(r"\[\[t(\d+)\]\]")
SUMMARY = {
    "max_context_tokens": 600,
    "max_summary_tokens": 64,
    "trigger_token_ratio": 0.4,
    "debounce_turns": 1,
    "mode": "background",
    "keep_recent_tokens": 60,
    # The check reads every covered turn's marker in the stored summary: parts merged by
    # the (scripted) model keep them all, where merged by their sentences the oldest give
    # way to the room.
    "segments_merge": "summarizer",
}
MODEL_DELAY: dict[str, float] = {"turn": 0.0}


def turn_text(turn: int) -> str:
    """The user message of turn ``turn``: its marker and some filler to fill the window."""
    return f"[[t{turn}]] " + " ".join(f"word{turn}-{i}" for i in range(30))


async def respond(request: LlmRequest) -> LlmResponse:
    text = "\n".join(message.text for message in request.messages)
    usage = Usage(len(text) // 4 + 10, 10)
    if request.purpose == "summary":
        seen: list[str] = []
        for turn in MARKER.findall(text):
            if turn not in seen:
                seen.append(turn)
        # A slow summary, so that the next turn runs in the other process meanwhile.
        await asyncio.sleep(0.05)
        summary = "SUMMARY " + " ".join(f"[[t{t}]]" for t in seen)
        return LlmResponse(Message.assistant(summary), usage)
    if MODEL_DELAY["turn"]:
        await asyncio.sleep(MODEL_DELAY["turn"])
    turns = MARKER.findall(request.messages[-1].text)
    return LlmResponse(Message.assistant(f"reply [[t{turns[-1]}]]"), usage)


def open_store(db: str) -> MemoryStore:
    if db.startswith("postgresql://") or "=" in db:
        from agentcore.stores import PostgresStore

        # Behind PgBouncer in transaction mode (AGENTCORE_TEST_POSTGRES_POOLER): no
        # prepared statements, as a deployment there sets.
        pooled = os.environ.get("AGENTCORE_TEST_POSTGRES_POOLER", "") not in ("", "0")
        return PostgresStore(db, prepare_threshold=None if pooled else 5)
    return SqliteStore(db)


async def main(db: str, keep_sessions: bool, lease: bool) -> None:
    store = open_store(db)
    builder = AgentBuilder().provider(MockProvider(responder=respond)).store(store)
    builder.session_lease(lease)
    bundle = builder.load_plugins(True).setting("summary_config", SUMMARY).build()
    sessions: dict[str, AgentSession] = {}
    closing: list[asyncio.Task[Any]] = []
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def answer(payload: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(payload) + "\n")
        sys.stdout.flush()

    answer({"ready": os.getpid()})
    while line := await reader.readline():
        command = json.loads(line)
        if command.get("exit"):
            break
        turn, session_id = command["turn"], command["session"]
        MODEL_DELAY["turn"] = command.get("delay", 0.0)
        ran = False
        for attempt in range(10):
            # A turn handed again after a worker was killed may be stored already: check it
            # on a session resumed from the store, as a service does for a retried request.
            redo = command.get("redo", False) or attempt > 0
            session = sessions.pop(session_id, None) if keep_sessions and not redo else None
            fresh = session is None
            if session is None:
                session = AgentSession(AGENT, session_id, bundle, FocusedConfig())
            history = await session.history()
            marker = f"[[t{turn}]]"
            if fresh and any(m.role == "user" and marker in m.text for m in history[-4:]):
                break
            try:
                await session.submit_turn(turn_text(turn))
            except StoreError:
                # Another process moved the session on: resume from the store and retry.
                closing.append(asyncio.ensure_future(session.aclose()))
                continue
            ran = True
            break
        else:
            answer({"failed": turn})
            continue
        if keep_sessions:
            sessions[session_id] = session
        else:
            closing.append(asyncio.ensure_future(session.aclose()))
        answer({"done": turn, "ran": ran})
    for session in sessions.values():
        closing.append(asyncio.ensure_future(session.aclose()))
    await asyncio.gather(*closing)
    await store.close()
    answer({"exited": True})


if __name__ == "__main__":
    os.environ.setdefault("AGENTCORE_TIKTOKEN_TIMEOUT", "0")
    options = sys.argv[2:]
    asyncio.run(main(sys.argv[1], "--keep-sessions" in options, "--no-lease" not in options))
