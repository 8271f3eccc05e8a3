"""Sessions in the Full mode when autosummary is on: switched on first use, or told once."""

from __future__ import annotations

import logging

import pytest
from summary_helpers import TINY_WINDOW, Replies

from agentcore import Agent, AgentBuilder, AgentSession
from agentcore.stores import InMemoryStore, MemoryStore
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig, get_conversation_summary

CONFIG = SummaryConfig(**TINY_WINDOW, trigger_token_ratio=0.005, keep_recent_tokens=5)


def _session(
    agent: Agent, store: MemoryStore, provider: MockProvider, *, summaries: bool, **mode: object
) -> AgentSession:
    builder = AgentBuilder().provider(provider).store(store)
    if summaries:
        builder.summary_config(CONFIG)
    return AgentSession(agent, "old", builder.build(), **mode)  # type: ignore[arg-type]


async def test_a_session_stored_before_autosummary_is_switched_and_summarized(
    agent: Agent, caplog: pytest.LogCaptureFixture
) -> None:
    store = InMemoryStore()
    before = _session(agent, store, MockProvider(responder=Replies()), summaries=False)
    for turn in range(3):
        await before.submit_turn(f"message {turn} of a conversation that began long ago")
    assert (await before.get_slot()).config.focused is None

    provider = MockProvider(responder=Replies())
    after = _session(agent, store, provider, summaries=True)
    assert not after.mode_chosen
    with caplog.at_level(logging.INFO, logger="agentcore.autosummary"):
        await after.submit_turn("the first message with autosummary on")
        await after.submit_turn("and another one")
    assert (await after.get_slot()).config.focused is not None
    assert "switched it to the Focused mode" in caplog.text
    assert provider.calls_for("summary"), "the switched session was never summarized"
    summary = await get_conversation_summary(after)
    assert summary is not None
    last_turn = provider.calls_for("turn")[-1]
    assert any(summary in message.text for message in last_turn.messages)

    resumed = _session(agent, store, MockProvider(responder=Replies()), summaries=True)
    assert (await resumed.get_slot()).config.focused is not None, "the switch was not stored"


async def test_a_full_mode_the_app_chose_is_kept_and_told_once(
    agent: Agent, caplog: pytest.LogCaptureFixture
) -> None:
    provider = MockProvider(responder=Replies())
    session = _session(agent, InMemoryStore(), provider, summaries=True, mode="full")
    assert session.mode_chosen
    with caplog.at_level(logging.WARNING, logger="agentcore.autosummary"):
        for turn in range(4):
            await session.submit_turn(f"turn {turn} of a session pinned to the Full mode")
    assert (await session.get_slot()).config.focused is None
    told = [r for r in caplog.records if "in the Full mode the app chose" in r.getMessage()]
    assert len(told) == 1
    assert "await session.set_mode(FocusedConfig())" in told[0].getMessage()
