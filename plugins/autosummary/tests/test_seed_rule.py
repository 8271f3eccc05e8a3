"""trigger="cumulative" replays the seed's should_summarize turn by turn."""

from __future__ import annotations

from typing import Any

import pytest
from summary_helpers import Replies

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ConfigError,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    LlmResponse,
    Message,
    ModelCallInfo,
    TurnContext,
    Usage,
    hookimpl,
)
from agentcore.errors import ServiceUnavailableError
from agentcore.testing import MockProvider
from agentcore.tokens import count_tokens
from agentcore_autosummary import (
    CORRECTION_KEY,
    SummaryConfig,
    SummaryInfo,
    SummaryRequestInfo,
    get_conversation_summary,
)


def seed_should_summarize(
    turns: int, debounce: int, max_context: int, ratio: float, per_turn: int, failing: set[int]
) -> tuple[list[int], list[int]]:
    """The seed's rule, written from its text: attempts and applied summaries per turn index.

    ``last_summary_turn`` starts at 0; after each turn (before ``turn_index``
    advances) ``turn_index - last_summary_turn >= debounce_turns and
    cost_so_far >= max_context_tokens * trigger_token_ratio`` starts a
    summary; only a success sets ``last_summary_turn = turn_index``.
    """
    last_summary_turn = 0
    cost_so_far = 0
    attempts: list[int] = []
    applied: list[int] = []
    for turn_index in range(turns):
        cost_so_far += per_turn
        if turn_index - last_summary_turn >= debounce and float(cost_so_far) >= float(
            max_context
        ) * float(ratio):
            attempts.append(turn_index)
            if turn_index not in failing:
                last_summary_turn = turn_index
                applied.append(turn_index)
    return attempts, applied


# 4700 * 0.57 is 2678.9999999999995 in floating point: the seed triggers at 2679, not 2678.
CASES = [
    # debounce, per-turn tokens, failing turns, turns
    (3, 1000, {3, 4}, 12),
    (3, 1000, set(), 12),
    (0, 2678, set(), 4),
    (0, 2679, set(), 4),
    (2, 500, {6, 7}, 14),
    (1, 300, {9}, 16),
]


class _Recorder:
    def __init__(self) -> None:
        self.attempts: list[int] = []
        self.applied: list[int] = []

    @hookimpl
    def before_summary(self, ctx: TurnContext, request: SummaryRequestInfo) -> None:
        self.attempts.append(request.turn_index)

    @hookimpl
    def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
        self.applied.append(summary.turn_index)


@pytest.mark.parametrize("streamed", [False, True], ids=["submit_turn", "stream"])
@pytest.mark.parametrize(("debounce", "per_turn", "failing", "turns"), CASES)
async def test_cumulative_trigger_replays_the_seed_rule(
    agent: Agent, streamed: bool, debounce: int, per_turn: int, failing: set[int], turns: int
) -> None:
    turn_calls = 0

    def respond(request: LlmRequest) -> Any:
        nonlocal turn_calls
        if request.purpose == "turn":
            turn_calls += 1
            return "Noted."
        if turn_calls - 1 in failing:
            return ServiceUnavailableError("the summarizer is down")
        return f"Summary of turn {turn_calls - 1}."

    # The reported input is tiny so the window's budget rule never steps in.
    provider = MockProvider(responder=respond, usage=Usage(1, per_turn - 1))
    recorder = _Recorder()
    config = SummaryConfig(
        trigger="cumulative",
        strategy="full",
        max_context_tokens=4700,
        trigger_token_ratio=0.57,
        debounce_turns=debounce,
        keep_recent_tokens=0,
        max_summary_tokens=200,
    )
    builder = AgentBuilder().provider(provider).store(InMemoryStore()).load_plugins(True)
    bundle = builder.plugin(recorder).setting("summary_config", config).build()
    session = AgentSession(agent, "seed", bundle, FocusedConfig())
    for index in range(turns):
        text = f"message {index}: " + "the plan has several steps " * 5
        if streamed:
            await session.submit_turn_stream(text).finalize()
        else:
            await session.submit_turn(text)
    expected = seed_should_summarize(turns, debounce, 4700, 0.57, per_turn, failing)
    assert (recorder.attempts, recorder.applied) == expected
    if (debounce, failing) == (3, {3, 4}):
        assert recorder.attempts[:4] == [3, 4, 5, 8] and recorder.applied[:2] == [5, 8]


async def test_the_cumulative_counter_is_one_per_session(agent: Agent) -> None:
    """A summary in one slot restarts the debounce for the session, as the seed's one field."""
    recorder = _Recorder()
    provider = MockProvider(responder=Replies(), usage=Usage(1, 999))
    config = SummaryConfig(
        trigger="cumulative",
        strategy="full",
        max_context_tokens=4700,
        trigger_token_ratio=0.57,
        debounce_turns=3,
        keep_recent_tokens=0,
        max_summary_tokens=200,
    )
    builder = AgentBuilder().provider(provider).store(InMemoryStore()).load_plugins(True)
    session = AgentSession(
        agent,
        "one",
        builder.plugin(recorder).setting("summary_config", config).build(),
        FocusedConfig(),
    )
    for index in range(4):
        await session.submit_turn(f"a{index}")
    await session.create_slot("other", FocusedConfig())
    await session.switch_slot("other")
    for index in range(4, 8):
        await session.submit_turn(f"b{index}")
    assert recorder.applied == [3, 6]


async def test_summary_provider_takes_the_summary_calls(agent: Agent) -> None:
    turns = MockProvider(responder=Replies())
    summarizer = MockProvider(responder=lambda request: "From the small model.", model="small")
    seen: list[tuple[str, object]] = []

    class Watcher:
        @hookimpl
        def after_model_call(self, ctx: TurnContext, call: ModelCallInfo) -> None:
            seen.append((call.purpose, call.provider))

    config = SummaryConfig(
        max_context_tokens=2000,
        max_summary_tokens=200,
        trigger_token_ratio=0.1,
        keep_recent_tokens=50,
        summary_provider=summarizer,
    )
    builder = AgentBuilder().provider(turns).store(InMemoryStore()).load_plugins(True)
    bundle = builder.plugin(Watcher()).setting("summary_config", config).build()
    session = AgentSession(agent, "p", bundle, FocusedConfig())
    for index in range(4):
        await session.submit_turn(f"turn {index}: " + "words " * 60)
    assert turns.calls_for("summary") == []
    assert summarizer.calls_for("summary") and summarizer.calls_for("turn") == []
    assert await get_conversation_summary(session) == "From the small model."
    assert ("summary", summarizer) in seen


async def test_summary_provider_by_name(agent: Agent) -> None:
    made: list[MockProvider] = []

    class Cheap:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            def factory(model: str) -> MockProvider:
                reply = f"summary by {model}"
                provider = MockProvider(responder=lambda request: reply, model=model)
                made.append(provider)
                return provider

            register("cheap", factory)

    config = SummaryConfig(
        max_context_tokens=2000,
        max_summary_tokens=200,
        trigger_token_ratio=0.1,
        keep_recent_tokens=50,
        summary_provider="cheap:tiny-1",
    )
    builder = AgentBuilder().provider(MockProvider(responder=Replies())).store(InMemoryStore())
    bundle = builder.load_plugins(True).plugin(Cheap()).setting("summary_config", config).build()
    session = AgentSession(agent, "n", bundle, FocusedConfig())
    for index in range(4):
        await session.submit_turn(f"turn {index}: " + "words " * 60)
    assert len(made) == 1  # resolved once per session
    assert await get_conversation_summary(session) == "summary by tiny-1"
    with pytest.raises(ValueError, match="prefix:model"):
        SummaryConfig(summary_provider="no-colon")


@pytest.mark.parametrize("as_dict", [False, True], ids=["config", "dict"])
def test_an_unknown_summary_provider_prefix_fails_the_build(as_dict: bool) -> None:
    turns = MockProvider(responder=Replies())
    config: Any = {"summary_provider": "opanai:gpt-4o-mini"}
    builder = AgentBuilder().provider(turns).load_plugins(True)
    builder.setting("summary_config", config if as_dict else SummaryConfig(**config))
    with pytest.raises(ConfigError) as caught:
        builder.build()
    message = str(caught.value)
    assert "summary_provider 'opanai:gpt-4o-mini'" in message
    assert "no provider is registered for the prefix 'opanai'" in message
    assert "known prefixes:" in message and "openai" in message and "anthropic" in message
    assert turns.calls == []


def test_a_summary_provider_prefix_of_a_plugin_given_to_the_builder_is_known() -> None:
    class Cheap:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            register("cheap", lambda model: MockProvider(model=model))

    config = SummaryConfig(summary_provider="cheap:tiny-1")
    builder = (
        AgentBuilder().provider(MockProvider()).load_plugins(True).setting("summary_config", config)
    )
    with pytest.raises(ConfigError, match=r"prefix .cheap.*known prefixes: .*openai"):
        builder.build()  # not registered yet
    bundle = builder.plugin(Cheap()).build()
    assert bundle.config.get("summary_config").summary_provider == "cheap:tiny-1"


async def test_summary_requests_are_counted_for_the_summarizer_model(agent: Agent) -> None:
    """The correction learned from a summary call is kept under the summarizer's model."""

    def summarize(request: LlmRequest) -> LlmResponse:
        # This server counts twice what agentcore counts.
        counted = count_tokens(request.messages, request.model or "small-model")
        return LlmResponse(Message.assistant("Short summary."), Usage(2 * counted, 5))

    summarizer = MockProvider(responder=summarize, model="small-model")
    config = SummaryConfig(
        max_context_tokens=3000,
        max_summary_tokens=200,
        trigger_token_ratio=0.1,
        keep_recent_tokens=50,
        summary_provider=summarizer,
    )
    builder = AgentBuilder().provider(MockProvider(responder=Replies())).store(InMemoryStore())
    bundle = builder.load_plugins(True).setting("summary_config", config).build()
    session = AgentSession(agent, "c", bundle, FocusedConfig())
    for index in range(6):
        await session.submit_turn(f"turn {index}: " + "words " * 60)
    assert await get_conversation_summary(session) == "Short summary."
    stored = await session.get_session_data(CORRECTION_KEY)
    assert isinstance(stored, dict)
    assert set(stored["ratios"]) == {"small-model"}
    assert stored["ratios"]["small-model"] == pytest.approx(2.0, rel=0.05)
