"""The cost of every summary call is stored as the call returns, whatever becomes of it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import attrs
import pytest
from summary_helpers import summary_parts

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    LlmRequest,
    LlmResponse,
    Message,
    SqliteStore,
    StoreError,
    Usage,
)
from agentcore.stores import StoreWrite
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig, get_conversation_summary

SUMMARY_USAGE = Usage(700, 37)
TURN_USAGE = Usage(15, 4)
LONG = "a message long enough to trigger a summary " * 4
CONFIG = SummaryConfig(
    trigger_token_ratio=0.005, max_context_tokens=2000, max_summary_tokens=64, keep_recent_tokens=5
)


def replies(summary: LlmResponse) -> MockProvider:
    """Turns answer "reply"; every summary call answers ``summary``, each one paid."""

    def respond(request: LlmRequest) -> LlmResponse:
        if request.purpose == "summary":
            return summary
        return LlmResponse(Message.assistant("reply"), TURN_USAGE)

    return MockProvider(responder=respond)


def paid_for(provider: MockProvider) -> Usage:
    """What the summary calls the provider answered cost, all together."""
    return sum((SUMMARY_USAGE for _ in provider.calls_for("summary")), Usage())


async def stored_cost(path: Path, agent: Agent, session_id: str) -> dict[str, Usage]:
    """The cost breakdown a fresh session object reads back from the database."""
    store = SqliteStore(path)
    try:
        bundle = AgentBuilder().provider(MockProvider()).store(store).build()
        fresh = AgentSession(agent, session_id, bundle)
        await fresh.load()
        return dict(fresh.cost.breakdown())
    finally:
        await store.close()


REFUSED = {
    # The gate refuses a summary cut at its cap, and one that copies the transcript.
    "cut at its cap": LlmResponse(Message.assistant("The user wrote"), SUMMARY_USAGE, "max_tokens"),
    "echo": LlmResponse(Message.assistant(f"User: {LONG}\nAssistant: reply"), SUMMARY_USAGE),
}


@pytest.mark.parametrize("reply", REFUSED.values(), ids=REFUSED.keys())
async def test_a_refused_summary_still_counts_and_stores_its_call(
    agent: Agent, tmp_path: Path, reply: LlmResponse
) -> None:
    provider = replies(reply)
    store = SqliteStore(tmp_path / "refused.db")
    bundle = (
        AgentBuilder().provider(provider).store(store).setting("summary_config", CONFIG).build()
    )
    session = AgentSession(agent, "refused", bundle, FocusedConfig())
    for index in range(3):
        await session.submit_turn(f"{index}: {LONG}")
    await session.aclose()
    assert await get_conversation_summary(session) is None  # never applied
    await store.close()
    assert provider.calls_for("summary")
    assert session.cost.total("summary") == paid_for(provider)
    assert session.cost.total("turn") == Usage(3 * 15, 3 * 4)
    assert await stored_cost(tmp_path / "refused.db", agent, "refused") == dict(
        session.cost.breakdown()
    )


class DyingStore(SqliteStore):
    """A database whose writer process dies as it is about to apply a summary.

    The write that would store a summary raises, and so does every later
    write: what reaches the file is what was stored before the death.
    """

    dead = False

    async def write(self, batch: StoreWrite) -> None:
        applies = any(
            isinstance(config.get("focused"), dict) and "summary_override" in config["focused"]
            for config in batch.slot_configs.values()
        )
        if self.dead or applies:
            self.dead = True
            raise StoreError("the worker process was killed")
        await super().write(batch)


@pytest.mark.parametrize("mode", ["inline", "background"])
async def test_a_summary_call_killed_before_its_apply_keeps_its_cost(
    agent: Agent, tmp_path: Path, mode: Literal["inline", "background"]
) -> None:
    """20 workers killed between a summary call and its apply: 0 lose the call's cost."""
    path = tmp_path / "killed.db"
    lost = 0
    trials = 20
    for trial in range(trials):
        provider = replies(LlmResponse(Message.assistant("The user asked twice."), SUMMARY_USAGE))
        store = DyingStore(path)
        config = attrs.evolve(CONFIG, mode=mode)
        bundle = (
            AgentBuilder().provider(provider).store(store).setting("summary_config", config).build()
        )
        session = AgentSession(agent, f"killed-{trial}", bundle, FocusedConfig())
        await session.submit_turn(LONG)
        await session.aclose()
        await store.close()
        assert store.dead and len(provider.calls_for("summary")) == 1
        stored = await stored_cost(path, agent, f"killed-{trial}")
        if stored.get("summary") != paid_for(provider):
            lost += 1
        assert stored["turn"] == TURN_USAGE
    assert lost == 0, f"{lost} of {trials} killed workers lost a summary call's cost"


async def test_an_applied_summary_counts_each_call_once(agent: Agent, tmp_path: Path) -> None:
    provider = replies(LlmResponse(Message.assistant("The user asked three times."), SUMMARY_USAGE))
    store = SqliteStore(tmp_path / "applied.db")
    bundle = (
        AgentBuilder().provider(provider).store(store).setting("summary_config", CONFIG).build()
    )
    session = AgentSession(agent, "applied", bundle, FocusedConfig())
    for index in range(4):
        await session.submit_turn(f"{index}: {LONG}")
    summary = await get_conversation_summary(session)
    assert summary is not None and set(summary_parts(summary)) == {"The user asked three times."}
    await store.close()
    assert session.cost.total("summary") == paid_for(provider)
    assert await stored_cost(tmp_path / "applied.db", agent, "applied") == dict(
        session.cost.breakdown()
    )


class CountingStore(SqliteStore):
    """Counts the writes that reach the database."""

    writes = 0

    async def write(self, batch: StoreWrite) -> None:
        self.writes += 1
        await super().write(batch)


async def test_a_turn_without_a_summary_is_one_write(agent: Agent, tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "quiet.db")
    config = SummaryConfig(max_context_tokens=100_000)
    bundle = AgentBuilder().provider(replies(LlmResponse(Message.assistant("-")))).store(store)
    session = AgentSession(
        agent, "quiet", bundle.setting("summary_config", config).build(), FocusedConfig()
    )
    for index in range(5):
        await session.submit_turn(f"turn {index}")
    await store.close()
    assert store.writes == 5
    assert "summary" not in session.cost.breakdown()
