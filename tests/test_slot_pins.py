"""Pins and the summary's role in a Focused slot's rendered context (core only)."""

from __future__ import annotations

import pytest

from agentcore import Agent, AgentBuilder, AgentSession, ConfigError, FocusedConfig, Message
from agentcore.slots import SUMMARY_ACKNOWLEDGEMENT, SlotConfig, render_context
from agentcore.testing import MockProvider

HISTORY = [Message.user(f"q{i}") if i % 2 == 0 else Message.assistant(f"a{i}") for i in range(8)]


def test_pinned_messages_follow_the_summary_in_order() -> None:
    focused = FocusedConfig(
        summary_override="S", summary_covers=6, pinned=(3, 0), summary_role="system"
    )
    context = render_context("sys", HISTORY, SlotConfig(focused))
    assert [m.text for m in context] == ["sys", "[上下文摘要] S", "q0", "a3", "q6", "a7"]


def test_pinned_messages_outside_a_message_window_are_sent() -> None:
    focused = FocusedConfig(max_recent_messages=2, pinned=(1,))
    context = render_context(None, HISTORY, SlotConfig(focused))
    assert [m.text for m in context] == ["a1", "q6", "a7"]


def test_user_role_summary_is_paired_when_a_user_message_follows() -> None:
    focused = FocusedConfig(summary_override="S", summary_covers=6, summary_role="user")
    context = render_context("sys", HISTORY, SlotConfig(focused))
    assert [(m.role, m.text) for m in context] == [
        ("system", "sys"),
        ("user", "[上下文摘要] S"),
        ("assistant", SUMMARY_ACKNOWLEDGEMENT),
        ("user", "q6"),
        ("assistant", "a7"),
    ]
    at_assistant = FocusedConfig(summary_override="S", summary_covers=5, summary_role="user")
    roles = [m.role for m in render_context(None, HISTORY, SlotConfig(at_assistant))]
    assert roles == ["user", "assistant", "user", "assistant"]


def test_bad_pins_and_roles_are_refused() -> None:
    with pytest.raises(ConfigError, match="summary_role"):
        FocusedConfig(summary_role="tool")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="pinned"):
        FocusedConfig(pinned=(-1,))


async def test_pin_and_unpin_through_the_session() -> None:
    bundle = AgentBuilder().provider(MockProvider(["hi", "yo"])).load_plugins(False).build()
    session = AgentSession(Agent("a"), "s", bundle, FocusedConfig(max_recent_messages=2))
    await session.submit_turn("keep me")
    await session.submit_turn("later")
    assert await session.pin(0) == (0,)
    assert (await session.load_messages())[0] == Message.user("keep me")
    assert await session.unpin(0) == ()
    with pytest.raises(ConfigError, match="out of range"):
        await session.pin(-5)
