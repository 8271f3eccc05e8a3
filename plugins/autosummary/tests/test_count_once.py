"""What is counted once: tool definitions, the system prompt, a summary request."""

from __future__ import annotations

from collections import Counter

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    Message,
    ToolRegistry,
)
from agentcore.messages import token_counts
from agentcore.testing import MockProvider
from agentcore.tokens import REPLY_PRIMING_TOKENS, TokenCounter, count_tokens
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


async def test_the_summary_request_reaches_the_provider_counted() -> None:
    # The summarizer counts its request to size it; the message it counted is the one
    # sent, so a provider (or hook) that counts the request finds the count on it.
    arrived: list[tuple[Message, tuple[tuple[str, int], ...]]] = []

    def respond(request: LlmRequest) -> str:
        if request.purpose == "summary":
            message = request.messages[-1]
            arrived.append((message, token_counts(message)))  # before anyone else counts it
            return f"Summary {len(arrived)}: the user asked numbered questions."
        return "ok, noted"

    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .store(InMemoryStore())
        .load_plugins(True)
        .setting(
            "summary_config",
            SummaryConfig(
                max_context_tokens=2_000, max_summary_tokens=200, request_shape="transcript"
            ),
        )
        .build()
    )
    session = AgentSession(
        Agent("assistant", system_prompt=SYSTEM), "chat", bundle, FocusedConfig()
    )
    for index in range(40):
        await session.submit_turn(f"question {index}: " + "details of the matter " * 12)
    assert arrived
    for message, counts in arrived:
        assert counts, "the summary request's message arrived uncounted"
        assert counts[0][1] == count_tokens([message]) - REPLY_PRIMING_TOKENS
