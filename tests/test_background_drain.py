"""Closing a session whose background work has just finished returns (it once spun forever)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# Run in a process of its own: if the bug came back, the event loop would spin without
# yielding, so no timeout inside the loop could end the test; the process's timeout can.
SCRIPT = textwrap.dedent(
    """
    import asyncio

    from agentcore import Agent, AgentBuilder, AgentSession
    from agentcore.testing import MockProvider


    async def finished_work() -> str:
        return "done"


    async def main() -> None:
        bundle = AgentBuilder().provider(MockProvider(responder=lambda request: "hi")).build()
        for round_ in range(50):
            session = AgentSession(Agent("a"), f"s{round_}", bundle)
            task = session.run_in_background(finished_work())
            # The task runs and finishes on this turn of the loop; its done callback,
            # which forgets it, is only queued to run on the next one.
            await asyncio.sleep(0)
            assert task.done()
            await session.aclose()
            assert task.result() == "done"
        print("closed 50 sessions")


    asyncio.run(main())
    """
)


def test_a_session_closes_right_after_its_background_work_finished() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "closed 50 sessions" in result.stdout
