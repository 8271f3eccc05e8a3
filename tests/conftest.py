from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from agentcore import Agent, AgentBuilder, AgentSession, InMemoryStore, MemoryStore
from agentcore.testing import MockProvider

# Tests must not depend on which plugins happen to be installed, nor reach the network.
os.environ.setdefault("AGENTCORE_TIKTOKEN_TIMEOUT", "0")


@pytest.fixture
def agent() -> Agent:
    return Agent("helper", system_prompt="You are helpful.")


@pytest.fixture
def make_session(agent: Agent) -> Callable[..., AgentSession]:
    """Build a session on a MockProvider; plugins come only from ``plugins=``."""

    def make(
        provider: Any = None,
        *,
        session_id: str = "s1",
        store: MemoryStore | None = None,
        plugins: tuple[object, ...] = (),
        mode: Any = "full",
        readonly: bool = False,
        **settings: Any,
    ) -> AgentSession:
        builder = AgentBuilder().provider(provider or MockProvider(responder=lambda r: "ok"))
        builder.store(store or InMemoryStore()).load_plugins(False)
        for plugin in plugins:
            builder.plugin(plugin)
        for name, value in settings.items():
            builder.setting(name, value)
        return AgentSession(agent, session_id, builder.build(), mode, readonly=readonly)

    return make
