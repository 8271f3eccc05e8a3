from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from otel_helpers import Traces

from agentcore import Agent, AgentBuilder, AgentSession, InMemoryStore, ToolRegistry
from agentcore.testing import MockProvider

os.environ.setdefault("AGENTCORE_TIKTOKEN_TIMEOUT", "0")


@pytest.fixture
def traces() -> Iterator[Traces]:
    collected = Traces()
    yield collected
    collected.provider.shutdown()


@pytest.fixture
def agent() -> Agent:
    return Agent("helper", system_prompt="You are helpful.", model="mock-model")


@pytest.fixture
def make_session(agent: Agent, traces: Traces) -> Callable[..., AgentSession]:
    """A session with the installed plugins, as a user's, tracing into ``traces``."""

    def make(
        provider: Any = None,
        *,
        tools: ToolRegistry | None = None,
        summary: Any = None,
        mode: Any = "full",
        session_id: str = "chat-1",
        **settings: Any,
    ) -> AgentSession:
        builder = AgentBuilder().provider(provider or MockProvider(responder=lambda r: "ok"))
        builder.store(InMemoryStore()).load_plugins(True)
        builder.setting("otel_tracer_provider", traces.provider)
        if tools is not None:
            builder.tool_registry(tools)
        if summary is not None:
            builder.setting("summary_config", summary)
        for name, value in settings.items():
            builder.setting(name, value)
        return AgentSession(agent, session_id, builder.build(), mode)

    return make
