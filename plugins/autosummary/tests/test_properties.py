from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    LlmResponse,
    Message,
    ToolRegistry,
    ToolUseBlock,
)
from agentcore.slots import SUMMARY_ACKNOWLEDGEMENT
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig

# A turn is (words in the user message, parallel tool calls, characters per tool result).
turns = st.lists(
    st.tuples(st.integers(1, 40), st.integers(0, 3), st.integers(0, 400)),
    min_size=1,
    max_size=25,
)


def _responder(request: LlmRequest) -> str | LlmResponse:
    if request.purpose == "summary":
        return "the story so far"
    last = request.messages[-1]
    if last.role == "user" and last.text.startswith("calls="):
        calls, size = (int(part.split("=")[1]) for part in last.text.split()[:2])
        if calls:
            uses = [
                ToolUseBlock(f"c{len(request.messages)}-{i}", "fetch", {"size": size})
                for i in range(calls)
            ]
            return LlmResponse(Message.assistant("", uses), stop_reason="tool_use")
    return "answer " * 5


def _registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    def fetch(size: int) -> str:
        """Fetch a document of ``size`` characters."""
        return "x" * size

    return registry


async def _run(conversation: list[tuple[int, int, int]], strategy: str, mode: str) -> None:
    store = InMemoryStore()
    config = SummaryConfig.coerce(
        {
            "max_context_tokens": 1000,
            "max_summary_tokens": 100,
            "trigger_token_ratio": 0.6,
            "debounce_turns": 1,
            "strategy": strategy,
            "mode": mode,
        }
    )
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=_responder))
        .tool_registry(_registry())
        .store(store)
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(Agent("a", system_prompt="sys"), "p", bundle, FocusedConfig())
    previous_covers = 0
    for words, calls, size in conversation:
        await session.submit_turn(f"calls={calls} size={size} " + "word " * words)
        await session.aclose()  # a background summary lands before the checks
        slot = await session.get_slot()
        raw = await session.history(slot.id)
        # Raw history is never deleted: the store holds every message and history() reads
        # them; the live slot lets go of what its summary covers.
        assert await store.load_messages("p", slot.id) == raw
        assert slot.raw_messages(slot.offset) == raw[slot.offset :]
        focused = slot.config.focused
        assert focused is not None
        covers = focused.summary_covers
        assert previous_covers <= covers <= len(raw)
        previous_covers = covers
        context = await session.load_messages()
        # Every raw message is either covered by the summary or sent verbatim, in order.
        if focused.summary_override is None:
            assert covers == 0 and context[1:] == raw
        else:
            # The summary is a user-side message, answered when a user message follows.
            assert context[1] == Message.user(f"[上下文摘要] {focused.summary_override}")
            answered_summary = covers == len(raw) or raw[covers].role == "user"
            acknowledgement = [Message.assistant(SUMMARY_ACKNOWLEDGEMENT)] * answered_summary
            assert context[2:] == [*acknowledgement, *raw[covers:]]
            # A tool call and its results are never separated by the covered index.
            assert covers == len(raw) or raw[covers].role != "tool"
        answered = {m.tool_call_id for m in context if m.role == "tool"}
        called = {c.id for m in context for c in m.tool_calls}
        assert answered == called


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns,
    st.sampled_from(["incremental", "full"]),
    st.sampled_from(["inline", "background"]),
)
def test_every_raw_message_is_covered_or_sent_verbatim(
    conversation: list[tuple[int, int, int]], strategy: str, mode: str
) -> None:
    asyncio.run(_run(conversation, strategy, mode))
