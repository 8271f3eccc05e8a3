"""The original acceptance scenarios, and the overflow guarantee."""

from __future__ import annotations

import random
from collections.abc import Callable

from summary_helpers import TINY_WINDOW, Replies, StrictServer

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    LlmRequest,
    LlmResponse,
    Message,
    ToolRegistry,
    ToolUseBlock,
)
from agentcore.testing import MockProvider
from agentcore.tokens import count_tokens
from agentcore_autosummary import SummaryConfig, fence_summary, get_conversation_summary

MakeSession = Callable[..., AgentSession]


async def test_scenario_1_long_conversation_with_summaries(agent: Agent) -> None:
    provider = MockProvider(responder=Replies())
    registry = ToolRegistry()
    session = AgentSession(
        agent,
        "session-1",
        AgentBuilder()
        .provider(provider)
        .tool_registry(registry)
        .summary_config(
            SummaryConfig(
                **TINY_WINDOW, trigger_token_ratio=0.025, keep_recent_tokens=25, debounce_turns=2
            ),
        )
        .build(),
        FocusedConfig(),
    )
    turn = 0
    while await session.get_session_data("conversation_summary") is None:
        turn += 1
        await session.submit_turn(f"msg {turn}")
        assert turn < 30, "the watermark of 50 tokens was never reached"
    summary = await session.get_session_data("conversation_summary")
    assert summary is not None
    context = await session.load_messages()
    assert any(m.text == f"[上下文摘要] {fence_summary(summary)}" for m in context)


async def test_scenario_2_no_summary_config_changes_nothing(agent: Agent) -> None:
    provider = MockProvider(responder=Replies())
    bundle = AgentBuilder().provider(provider).build()  # the plugin is installed, not enabled
    session = AgentSession(agent, "session-2", bundle)
    for i in range(50):
        await session.submit_turn(f"msg {i}")
    assert len(provider.calls) == 50
    assert provider.calls_for("summary") == []
    assert await get_conversation_summary(session) is None
    assert len(await session.history()) == 100


async def test_300_turns_never_overflow_and_summary_requests_stay_bounded(
    make_session: MakeSession,
) -> None:
    rng = random.Random(7)
    words = [
        "the",
        "of",
        "and",
        "to",
        "in",
        "is",
        "you",
        "that",
        "it",
        "he",
        "was",
        "for",
        "on",
        "are",
        "as",
        "with",
        "his",
        "they",
        "at",
        "be",
    ]

    def sentence(tokens: int) -> str:
        return " ".join(rng.choice(words) for _ in range(tokens))

    def responder(request: LlmRequest) -> str:
        if request.purpose == "summary":
            return "Summary: " + sentence(60)
        return sentence(rng.randint(5, 80))

    provider = MockProvider(responder=responder)
    config = SummaryConfig(max_context_tokens=2_000)
    assert config.max_context_tokens is not None  # for mypy: set just above
    session = make_session(provider, summary=config, mode=FocusedConfig())
    for _ in range(300):
        message = sentence(rng.randint(5, 90))  # each well under 5% of the window
        assert count_tokens([]) + len(message.split()) < 0.05 * config.max_context_tokens
        await session.submit_turn(message)

    sizes = [count_tokens(call.messages) for call in provider.calls_for("turn")]
    assert max(sizes) <= config.max_context_tokens
    summary_sizes = [count_tokens(call.messages) for call in provider.calls_for("summary")]
    assert len(summary_sizes) >= 10
    # Each summary request covers what accumulated since the last one: it does not grow.
    assert max(summary_sizes) <= config.max_context_tokens
    assert max(summary_sizes[-5:]) <= 1.5 * max(summary_sizes[:5])
    assert len(await session.history()) == 600


async def test_300_turns_with_a_large_tool_output_every_turn_stay_within_budget(
    agent: Agent,
) -> None:
    # Every turn calls a tool that returns 6k-8k tokens; the server counts 1.3x
    # agentcore's tokens. Over budget: messages + tool definitions + the reply
    # reservation above the window, in the server's tokens.
    rng = random.Random(11)
    words = ["report", "value", "alpha", "node", "total", "error", "line", "metric"]
    registry = ToolRegistry()

    @registry.tool
    def read_log(part: int) -> str:
        """Read one part of the log.

        Args:
            part: The part to read.
        """
        return " ".join(rng.choice(words) for _ in range(rng.randint(6000, 8000)))

    def turn(request: LlmRequest) -> str | LlmResponse:
        if request.messages[-1].role == "user":
            call = ToolUseBlock(f"c{len(request.messages)}", "read_log", {"part": 1})
            return LlmResponse(Message.assistant("", [call]), stop_reason="tool_use")
        return "The log shows nothing unusual in this part."

    window = 16_000
    server = StrictServer(window, turn=turn)
    config = SummaryConfig(max_context_tokens=window)
    session = AgentSession(
        agent,
        "logs",
        AgentBuilder()
        .provider(server.provider)
        .tool_registry(registry)
        .summary_config(config)
        .build(),
        FocusedConfig(),
    )
    failed = 0
    for index in range(300):
        try:
            await session.submit_turn(f"Read part {index} of the log.")
        except Exception:
            failed += 1
    assert failed == 0
    assert len(server.calls("turn")) == 600
    assert server.rejected == []
    assert server.over_budget == []
