"""Pinned messages: never summarized away, always sent in order, refused when too large."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from summary_helpers import Replies

from agentcore import (
    AgentSession,
    ConfigError,
    FocusedConfig,
    Message,
    SqliteStore,
    ToolUseBlock,
)
from agentcore.pins import pin_group
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig

MakeSession = Callable[..., AgentSession]

CONFIG = SummaryConfig(trigger_messages=4, keep_recent_messages=2, debounce_turns=0)
LONG = " is a long message about the release plan and its many details" * 3


async def test_a_pinned_message_is_never_summarized_and_always_sent(
    make_session: MakeSession,
) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=CONFIG, mode=FocusedConfig())
    await session.submit_turn("The API key lives in /etc/keys/prod.env" + LONG)
    assert await session.pin(-2) == (0,)
    for turn in range(4):
        await session.submit_turn(f"turn {turn}{LONG}")
    calls = provider.calls_for("summary")
    assert calls
    for call in calls:
        assert "/etc/keys/prod.env" not in call.messages[-1].text
    slot = await session.get_slot()
    assert slot.config.focused is not None
    assert slot.config.focused.summary_covers > 1
    context = await session.load_messages()
    # System prompt, summary (a user-side message, answered: the pinned message is the
    # user's), the pinned message, then the verbatim tail.
    assert context[1].text.startswith("[上下文摘要]") and context[1].role == "user"
    assert context[2].role == "assistant"
    assert context[3] == slot.messages[0]
    assert context[4:] == list(slot.messages[slot.config.focused.summary_covers :])
    # Every turn request carried it.
    for call in provider.calls_for("turn"):
        assert slot.messages[0] in call.messages


async def test_pins_are_stored_with_the_slot_and_can_be_removed(
    make_session: MakeSession, tmp_path: object
) -> None:
    store = SqliteStore(f"{tmp_path}/pins.db")
    session = make_session(summary=CONFIG, mode=FocusedConfig(), store=store)
    await session.submit_turn("remember this")
    await session.submit_turn("and this")
    assert await session.pin(0) == (0,)
    assert await session.pin(2) == (0, 2)
    await session.aclose()
    resumed = make_session(summary=CONFIG, mode=FocusedConfig(), store=store)
    slot = await resumed.get_slot()
    assert slot.config.focused is not None and slot.config.focused.pinned == (0, 2)
    assert await resumed.unpin(0) == (2,)
    with pytest.raises(ConfigError, match="out of range: the slot holds 4 messages"):
        await resumed.pin(4)
    await resumed.aclose()


async def test_a_pin_that_cannot_fit_the_window_is_refused(make_session: MakeSession) -> None:
    config = SummaryConfig(max_context_tokens=2000, max_summary_tokens=200)
    session = make_session(summary=config, mode=FocusedConfig())
    await session.submit_turn("word " * 1600)
    with pytest.raises(
        ConfigError, match=r"pinned messages need \d+ tokens.*max_context_tokens \(2000\)"
    ):
        await session.pin(0)
    slot = await session.get_slot()
    assert slot.config.focused is not None and slot.config.focused.pinned == ()


async def test_pins_need_a_focused_slot(make_session: MakeSession) -> None:
    session = make_session()
    await session.submit_turn("hello")
    with pytest.raises(ConfigError, match="Full mode"):
        await session.pin(0)


@pytest.mark.parametrize("streamed", [False, True], ids=["submit", "stream"])
async def test_a_message_pinned_when_submitted_is_stored_pinned_in_the_turn_write(
    make_session: MakeSession, tmp_path: object, streamed: bool
) -> None:
    store = SqliteStore(f"{tmp_path}/pin-at-submit.db")
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=CONFIG, mode=FocusedConfig(), store=store)
    await session.submit_turn("hello")
    text = "The deploy token is JIRA-4711" + LONG
    if streamed:
        await session.submit_turn_stream(text, pin=True).finalize()
    else:
        await session.submit_turn(text, pin=True)
    slot = await session.get_slot()
    assert slot.config.focused is not None and slot.config.focused.pinned == (2,)
    assert slot.messages[2].text == text
    for turn in range(4):
        await session.submit_turn(f"turn {turn}{LONG}")
    assert provider.calls_for("summary")
    for call in provider.calls_for("summary"):
        assert "JIRA-4711" not in call.messages[-1].text
    assert slot.messages[2] in await session.load_messages()
    await session.aclose()
    resumed = make_session(summary=CONFIG, mode=FocusedConfig(), store=store)
    resumed_slot = await resumed.get_slot()
    assert resumed_slot.config.focused is not None
    assert resumed_slot.config.focused.pinned == (2,)
    await resumed.aclose()


async def test_a_pin_at_submit_that_cannot_fit_is_refused_before_any_call(
    make_session: MakeSession,
) -> None:
    provider = MockProvider(responder=Replies())
    config = SummaryConfig(max_context_tokens=2000, max_summary_tokens=200)
    session = make_session(provider, summary=config, mode=FocusedConfig())
    with pytest.raises(ConfigError, match=r"pinned messages need \d+ tokens"):
        await session.submit_turn("word " * 1600, pin=True)
    assert provider.calls == []
    assert await session.history() == []
    assert session.turn_index == 0
    await session.submit_turn("a normal turn still works")
    assert len(await session.history()) == 2


async def test_a_pin_at_submit_needs_a_focused_slot_and_a_bool(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider)
    with pytest.raises(ConfigError, match="Full mode"):
        await session.submit_turn("hello", pin=True)
    with pytest.raises(ConfigError, match="pin must be True or False"):
        await session.submit_turn("hello", pin="yes")  # type: ignore[arg-type]
    assert provider.calls == [] and await session.history() == []


def test_pinning_a_tool_result_pins_its_call_and_all_results() -> None:
    call = Message.assistant(
        tool_calls=[ToolUseBlock("a", "lookup", {}), ToolUseBlock("b", "lookup", {})]
    )
    messages = [
        Message.user("find it"),
        call,
        Message.tool_result("a", "1"),
        Message.tool_result("b", "2"),
        Message.assistant("found"),
    ]
    assert list(pin_group(messages, 3)) == [1, 2, 3]
    assert list(pin_group(messages, 1)) == [1, 2, 3]
    assert list(pin_group(messages, 4)) == [4]
