"""A worker process for tests/test_session_lease.py: turns of one shared session, in a loop.

Run as ``python lease_worker.py DB NAME TURNS LEASE`` where DB is an SQLite path or a
PostgreSQL DSN and LEASE is ``on``, ``off`` or ``default`` (the builder's own choice, no
``session_lease`` call). It prints ``ready``, waits for a line on stdin
(so that every worker starts at once), runs TURNS turns of the session ``shared`` on one
session object, then prints one JSON line: model calls, stored turns, conflicts and errors.

The fake model's reply names the turn it answers and the newest reply it was shown, so the
test can check, from the stored history alone, that every model call saw the turn stored
before it.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys

from store_worker import open_store  # the same SQLite-or-PostgreSQL choice

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ConflictError,
    LlmRequest,
    LlmResponse,
    Message,
    Usage,
)
from agentcore.testing import MockProvider

AGENT = Agent("lease-worker", system_prompt="Test worker.")
TURN = re.compile(r"\[\[(\w+-\d+)\]\]")
CALLS = {"turn": 0}


async def respond(request: LlmRequest) -> LlmResponse:
    """Reply ``answer [[this turn]] after [[the newest reply shown]]``, a little slowly."""
    CALLS["turn"] += 1
    await asyncio.sleep(0.01)
    (this,) = TURN.findall(request.messages[-1].text)
    shown = [m for m in request.messages[:-1] if m.role == "assistant"]
    after = TURN.findall(shown[-1].text)[0] if shown else "start"
    return LlmResponse(Message.assistant(f"answer [[{this}]] after [[{after}]]"), Usage(10, 5))


async def main(db: str, name: str, turns: int, lease: str) -> None:
    store = open_store(db)
    builder = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .store(store)
        .load_plugins(False)
        .turn_timeout(120)
    )
    if lease != "default":
        builder.session_lease(lease == "on")
    bundle = builder.build()
    session = AgentSession(AGENT, "shared", bundle)
    await session.history()  # opened before the start line, like a service's warm worker
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    stored = conflicts = 0
    errors: list[str] = []
    for k in range(turns):
        try:
            await session.submit_turn(f"question [[{name}-{k}]]")
            stored += 1
        except ConflictError:
            conflicts += 1
        except Exception as exc:  # reported to the test, which fails on any
            errors.append(f"{type(exc).__name__}: {exc}")
    await session.aclose()
    await store.close()
    report = {"calls": CALLS["turn"], "stored": stored, "conflicts": conflicts, "errors": errors}
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]))
