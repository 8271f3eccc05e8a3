from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from summary_helpers import Replies

from agentcore import Agent, AgentBuilder, AgentSession, InMemoryStore, MemoryStore
from agentcore.testing import MockProvider

# No per-example deadline: on a machine at load 10 an example may take seconds; the property
# tests bound their work by max_examples instead.
settings.register_profile("agentcore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("agentcore")

os.environ.setdefault("AGENTCORE_TIKTOKEN_TIMEOUT", "0")


@pytest.fixture
def agent() -> Agent:
    return Agent("assistant", system_prompt="You are a helpful assistant.")


@pytest.fixture
def make_session(agent: Agent) -> Callable[..., AgentSession]:
    """A session whose plugins come from the installed entry points, as a user's would."""

    def make(
        provider: Any = None,
        *,
        summary: Any = None,
        mode: Any = "full",
        store: MemoryStore | None = None,
        session_id: str = "chat",
    ) -> AgentSession:
        builder = AgentBuilder().provider(provider or MockProvider(responder=Replies()))
        builder.store(store or InMemoryStore()).load_plugins(True)
        if summary is not None:
            builder.setting("summary_config", summary)
        return AgentSession(agent, session_id, builder.build(), mode)

    return make
