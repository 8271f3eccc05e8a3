"""The turn budget counts each tool definition and the system prompt once, not per call."""

from __future__ import annotations

from collections import Counter

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    ToolRegistry,
)
from agentcore.testing import MockProvider
from agentcore.tokens import TokenCounter
from agentcore_autosummary import SummaryConfig

SYSTEM = "You are a helpful assistant who answers briefly."


def registry_of(count: int) -> ToolRegistry:
    registry = ToolRegistry()
    for index in range(count):

        def tool(query: str) -> str:
            """Look the query up."""
            return query

        registry.register(tool, name=f"lookup_{index}")
    return registry


async def test_tool_definitions_and_the_system_prompt_are_counted_once() -> None:
    counted: Counter[str] = Counter()

    def count(text: str) -> int:
        counted[text] += 1
        return max(1, len(text) // 4)

    counter = TokenCounter("m", count_text=count, name="counting")
    agent = Agent("assistant", system_prompt=SYSTEM, token_counter=counter)
    registry = registry_of(4)
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=lambda request: "ok"))
        .store(InMemoryStore())
        .tool_registry(registry)
        .load_plugins(True)
        .setting("summary_config", SummaryConfig(max_context_tokens=64_000))
        .build()
    )
    session = AgentSession(agent, "chat", bundle, FocusedConfig())
    for index in range(6):
        reply = await session.submit_turn(f"question {index}")
        assert reply.text == "ok"
    definitions = [text for text in counted if '"type": "function"' in text]
    assert len(definitions) == 4
    assert all(counted[text] == 1 for text in definitions)
    assert counted[SYSTEM] == 1
