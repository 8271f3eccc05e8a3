"""The window from the model when max_context_tokens is not given."""

from __future__ import annotations

import logging

import pytest
from summary_helpers import Replies

from agentcore import Agent, AgentBuilder, AgentSession, InMemoryStore
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig
from agentcore_autosummary.deciding.windows import known_config


def _session(provider: MockProvider, config: SummaryConfig, model: str | None) -> AgentSession:
    bundle = (
        AgentBuilder()
        .provider(provider)
        .store(InMemoryStore())
        .load_plugins(True)
        .setting("summary_config", config)
        .build()
    )
    return AgentSession(Agent("assistant", model=model), "s", bundle)


async def test_a_known_model_sets_the_window_once(caplog: pytest.LogCaptureFixture) -> None:
    provider = MockProvider(responder=Replies())
    config = SummaryConfig()
    session = _session(provider, config, "gpt-4.1-mini")
    assert known_config(session.bundle, config).window == 32_000  # nothing discovered yet
    with caplog.at_level(logging.WARNING, logger="agentcore.autosummary"):
        await session.submit_turn("hello")
        await session.submit_turn("again")
    assert known_config(session.bundle, config).max_context_tokens == 1_047_576
    assert "not known" not in caplog.text


async def test_an_unknown_model_falls_back_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = MockProvider(responder=Replies())
    config = SummaryConfig()
    first = _session(provider, config, "my-local-model")
    with caplog.at_level(logging.WARNING, logger="agentcore.autosummary"):
        await first.submit_turn("hello")
        await AgentSession(first.agent, "t", first.bundle).submit_turn("hello")
    # Once per bundle: its sessions share what was discovered (bundle.stash).
    assert caplog.text.count("'my-local-model' is not known") == 1
    assert known_config(first.bundle, config).max_context_tokens == 32_000


async def test_a_discovered_window_too_small_for_the_config_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = MockProvider(responder=Replies())
    session = _session(provider, SummaryConfig(max_summary_tokens=20_000), "gpt-4")
    with caplog.at_level(logging.ERROR):
        await session.submit_turn("hello")
    assert "the context window of model 'gpt-4' is 8192 tokens, too small" in caplog.text


async def test_what_is_discovered_is_kept_per_bundle(caplog: pytest.LogCaptureFixture) -> None:
    # The bundle's stash holds it: another bundle on the same provider object asks again.
    provider = MockProvider(responder=Replies())
    config = SummaryConfig()
    first, second = (_session(provider, config, "my-local-model") for _ in range(2))
    with caplog.at_level(logging.WARNING, logger="agentcore.autosummary"):
        await first.submit_turn("hello")
        await first.submit_turn("again")
        assert known_config(second.bundle, config).max_context_tokens is None
        await second.submit_turn("hello")
    assert caplog.text.count("'my-local-model' is not known") == 2
