from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcore import ConfigError, FocusedConfig, Message, SlotConfig, ToolUseBlock
from agentcore.slots import focused_window, render_context


def _conversation() -> list[Message]:
    return [
        Message.user("q1"),
        Message.assistant("a1"),
        Message.user("look it up"),
        Message.assistant("", [ToolUseBlock("c1", "search"), ToolUseBlock("c2", "search")]),
        Message.tool_result("c1", "r1"),
        Message.tool_result("c2", "r2"),
        Message.assistant("a2"),
    ]


def test_full_mode_sends_everything_after_the_system_prompt() -> None:
    messages = _conversation()
    assert render_context("sys", messages, SlotConfig()) == [Message.system("sys"), *messages]


def test_focused_summary_goes_after_the_system_prompt_by_default() -> None:
    messages = _conversation()
    config = SlotConfig(FocusedConfig(summary_override="they talked", summary_covers=2))
    rendered = render_context("sys", messages, config)
    assert rendered[0] == Message.system("sys")
    assert rendered[1] == Message.system("[上下文摘要] they talked")
    assert rendered[2:] == messages[2:]


def test_focused_summary_at_the_end_as_in_the_seed() -> None:
    messages = _conversation()
    config = SlotConfig(
        FocusedConfig(summary_override="s", summary_position="end", summary_label="[Summary]")
    )
    rendered = render_context(None, messages, config)
    assert rendered[:-1] == messages
    assert rendered[-1] == Message.system("[Summary] s")


def test_kept_messages_never_start_with_orphaned_tool_results() -> None:
    messages = _conversation()
    # A cap of 3 would start at the second tool result: its call is cut off.
    config = SlotConfig(FocusedConfig(max_recent_messages=3))
    rendered = render_context(None, messages, config)
    assert rendered == [messages[-1]]
    covered = SlotConfig(FocusedConfig(summary_covers=4, summary_override="x"))
    assert render_context(None, messages, covered)[1:] == [messages[-1]]


@given(
    covers=st.integers(0, 10),
    cap=st.none() | st.integers(1, 10),
)
def test_focused_window_keeps_calls_with_their_results(covers: int, cap: int | None) -> None:
    messages = _conversation()
    start = focused_window(messages, FocusedConfig(summary_covers=covers, max_recent_messages=cap))
    kept = messages[start:]
    answered = {m.tool_call_id for m in kept if m.role == "tool"}
    called = {c.id for m in kept for c in m.tool_calls}
    assert answered <= called


def test_focused_config_validates_its_fields() -> None:
    with pytest.raises(ConfigError, match="summary_position"):
        FocusedConfig(summary_position="middle")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_recent_messages"):
        FocusedConfig(max_recent_messages=0)
    with pytest.raises(ConfigError, match="summary_covers"):
        FocusedConfig(summary_covers=-1)
    with pytest.raises(ConfigError, match="mode"):
        SlotConfig("focused")  # type: ignore[arg-type]
