"""``SummaryConfig.seed()``: the original design's twelve tests, with its own numbers.

The original test table (Step 16.5) uses ``MockProvider`` replies costing
``Usage.from_input_output(10, 5)``, ``max_context_tokens=20`` with
``trigger_token_ratio=0.5``, and its scenario ``max_context_tokens=100``,
``trigger_token_ratio=0.5``, ``debounce_turns=2``. Each test below is one
row of that table, written against the preset alone; the module ends with
the window sizes every configuration in the docs must build for.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from summary_helpers import Replies

from agentcore import AgentBuilder, AgentSession, FocusedConfig, LlmError, Message, Usage
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary import (
    DEFAULT_SUMMARY_PROMPT,
    SummaryConfig,
    fence_summary,
    format_messages_as_text,
    get_conversation_summary,
)
from agentcore_autosummary.calling.summarizer import SummaryFit, request_summary
from agentcore_autosummary.deciding.token_correction import TokenCorrection

MakeSession = Callable[..., AgentSession]
SPEC_USAGE = Usage.from_input_output(10, 5)
SPEC_TEST = SummaryConfig.seed(max_context_tokens=20, trigger_token_ratio=0.5)


def _provider(**kwargs: object) -> MockProvider:
    return MockProvider(responder=Replies(), usage=SPEC_USAGE, **kwargs)  # type: ignore[arg-type]


def test_summary_config_defaults() -> None:
    config = SummaryConfig.seed()
    assert config.trigger_token_ratio == 0.75
    assert config.max_context_tokens == 32_000
    assert config.summary_prompt == DEFAULT_SUMMARY_PROMPT and "{messages}" in config.summary_prompt
    assert config.debounce_turns == 3
    assert config.summary_model is None
    assert config.max_tool_result_chars == 500
    assert (config.trigger, config.strategy, config.keep_recent_tokens) == ("cumulative", "full", 0)
    assert config.summary_tokens == 1024
    assert (config.summary_role, config.summary_position) == ("system", "end")
    assert config.gate is False  # every summary applied, as the original design does


async def test_summary_not_generated_below_threshold(make_session: MakeSession) -> None:
    provider = _provider()
    session = make_session(provider, summary=SummaryConfig.seed(), mode=FocusedConfig())
    for i in range(10):
        await session.submit_turn(f"message {i}")
    assert provider.calls_for("summary") == []


async def test_summary_generated_above_threshold(make_session: MakeSession) -> None:
    provider = _provider()
    session = make_session(provider, summary=SPEC_TEST, mode=FocusedConfig())
    for i in range(4):
        await session.submit_turn(f"message {i}")
    # 15 tokens a turn pass the watermark of 10 at once; the debounce counts from
    # turn 0, so the first summary is made after turn 3.
    (call,) = provider.calls_for("summary")
    assert call.tools == () and call.max_tokens == 1024
    assert "User: message 0" in call.messages[0].text
    assert await session.get_session_data("conversation_summary") == "summary #1"


async def test_summary_debounce_works(make_session: MakeSession) -> None:
    provider = _provider()
    session = make_session(provider, summary=SPEC_TEST, mode=FocusedConfig())
    made: list[int] = []
    for i in range(10):
        await session.submit_turn(f"message {i}")
        if len(provider.calls_for("summary")) > len(made):
            made.append(i)
    assert made == [3, 6, 9]


async def test_summary_debounce_works_when_the_summary_repeats(make_session: MakeSession) -> None:
    """The debounce row with a summarizer that gives the same summary every time.

    The original design applies every summary: a repeated one too, every
    ``debounce_turns`` turns. The seed's mode runs without the gate
    (``gate=False``), which would refuse the repeat as a copy and ask again.
    """

    def same_summary(request: object) -> str:
        if getattr(request, "purpose", None) == "summary":
            return "The user sent numbered messages."
        return "Sure, noted."

    provider = MockProvider(responder=same_summary, usage=SPEC_USAGE)
    session = make_session(provider, summary=SPEC_TEST, mode=FocusedConfig())
    made: list[int] = []
    for i in range(10):
        await session.submit_turn(f"message {i}")
        if len(provider.calls_for("summary")) > len(made):
            made.append(i)
    assert made == [3, 6, 9]
    assert len(provider.calls_for("summary")) == 3  # one call each: none refused, none retried
    assert await session.get_session_data("autosummary.last_summary_turn") == 9
    assert await get_conversation_summary(session) == "The user sent numbered messages."


async def test_summary_injected_into_focused(make_session: MakeSession) -> None:
    session = make_session(_provider(), summary=SPEC_TEST, mode=FocusedConfig())
    for i in range(4):
        await session.submit_turn(f"message {i}")
    messages = await session.load_messages()
    # Last, as a system message, fenced as data.
    assert messages[-1] == Message.system(f"[上下文摘要] {fence_summary('summary #1')}")


async def test_summary_written_to_session_memory(make_session: MakeSession) -> None:
    session = make_session(_provider(), summary=SPEC_TEST, mode=FocusedConfig())
    for i in range(4):
        await session.submit_turn(f"message {i}")
    assert await session.get_session_data("conversation_summary") == "summary #1"
    assert await get_conversation_summary(session) == "summary #1"


async def test_summary_not_injected_in_full_mode(make_session: MakeSession) -> None:
    session = make_session(_provider(), summary=SPEC_TEST, mode="full")
    for i in range(4):
        await session.submit_turn(f"message {i}")
    slot = await session.get_slot()
    assert slot.config.focused is None
    assert not any("[上下文摘要]" in m.text for m in await session.load_messages())


async def test_summary_failure_does_not_block(make_session: MakeSession) -> None:
    def respond(request: object) -> str | BaseException:
        if getattr(request, "purpose", None) == "summary":
            return LlmError("summary backend down")
        return "fine"

    provider = MockProvider(responder=respond, usage=SPEC_USAGE)
    session = make_session(provider, summary=SPEC_TEST, mode=FocusedConfig())
    for i in range(6):
        assert (await session.submit_turn(f"message {i}")).text == "fine"
    # A failure leaves last_summary_turn where it was: tried again on the next turn.
    assert len(provider.calls_for("summary")) == 3  # turns 3, 4 and 5


async def test_summary_stream_path(make_session: MakeSession) -> None:
    provider = _provider()
    session = make_session(provider, summary=SPEC_TEST, mode=FocusedConfig())
    for i in range(4):
        await session.submit_turn_stream(f"message {i}").finalize()
    assert len(provider.calls_for("summary")) == 1
    assert await get_conversation_summary(session) == "summary #1"


def test_summary_format_messages() -> None:
    text = format_messages_as_text(
        [Message.system("你是一个翻译助手"), Message.user("谢谢"), Message.assistant("不客气")]
    )
    assert text == "System: 你是一个翻译助手\n\nUser: 谢谢\n\nAssistant: 不客气"


async def test_summary_skipped_for_empty_messages() -> None:
    provider = _provider()
    fit = SummaryFit(get_token_counter(), TokenCorrection(), None)
    reply = await request_summary(provider, SPEC_TEST, [], model=None, max_chars=None, fit=fit)
    assert reply.text == "" and provider.calls == []


async def test_summary_not_generated_if_max_context_unreachable(make_session: MakeSession) -> None:
    provider = _provider()
    config = SummaryConfig.seed(max_context_tokens=10**9)
    session = make_session(provider, summary=config, mode=FocusedConfig())
    for i in range(20):
        await session.submit_turn(f"message {i}")
    assert provider.calls_for("summary") == []


async def test_the_scenario_of_the_original_design(make_session: MakeSession) -> None:
    config = SummaryConfig.seed(max_context_tokens=100, trigger_token_ratio=0.5, debounce_turns=2)
    provider = _provider()
    session = make_session(provider, summary=config, mode=FocusedConfig())
    for i in range(8):  # 15 tokens a turn: 50 reached after turn index 3
        await session.submit_turn(f"msg {i + 1}")
    assert await session.get_session_data("conversation_summary") is not None
    assert any("[上下文摘要]" in m.text for m in await session.load_messages())


async def test_without_a_summary_config_nothing_changes(make_session: MakeSession) -> None:
    provider = _provider()
    session = make_session(provider, mode=FocusedConfig())
    for i in range(50):
        await session.submit_turn(f"msg {i}")
    assert provider.calls_for("summary") == []
    assert await get_conversation_summary(session) is None


@pytest.mark.parametrize("window", [20, 100, 600, 1500, 2048, 8192, 32_000, 200_000])
def test_a_config_that_sets_only_the_window_builds(window: int) -> None:
    for config in (
        SummaryConfig(max_context_tokens=window),
        SummaryConfig(max_context_tokens=window, trigger_token_ratio=0.5),
        SummaryConfig(max_context_tokens=window, summary_style="structured"),
        SummaryConfig(max_context_tokens=window, mode="background"),
        SummaryConfig.seed(max_context_tokens=window),
        SummaryConfig.seed(max_context_tokens=window, trigger_token_ratio=0.5),
    ):
        if config.window_guard:  # derived sizes leave room for the conversation
            assert config.summary_tokens + config.recent_budget < window
        AgentBuilder().provider(_provider()).setting("summary_config", config).build()


async def test_the_summary_is_found_without_a_summary_config(make_session: MakeSession) -> None:
    # Issue 20: get_conversation_summary() returned None for a summary stored under the
    # default key when the bundle reading it gives no summary config.
    from agentcore import InMemoryStore

    store = InMemoryStore()
    session = make_session(_provider(), summary=SPEC_TEST, mode=FocusedConfig(), store=store)
    for i in range(4):
        await session.submit_turn(f"message {i}")
    reader = make_session(_provider(), mode=FocusedConfig(), store=store)
    assert await get_conversation_summary(reader) == "summary #1"
