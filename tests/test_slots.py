from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcore import ConfigError, FocusedConfig, Message, SlotConfig, ToolUseBlock
from agentcore._slot_config_json import config_from_json, config_to_json
from agentcore.slots import (
    SUMMARY_ACKNOWLEDGEMENT,
    ContextSlot,
    focused_window,
    render_context,
)


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


def test_focused_summary_goes_after_the_system_prompt_as_a_user_message_by_default() -> None:
    messages = _conversation()
    config = SlotConfig(FocusedConfig(summary_override="they talked", summary_covers=2))
    rendered = render_context("sys", messages, config)
    assert rendered[0] == Message.system("sys")
    # A user-side context message, answered so that the next user message alternates.
    assert rendered[1] == Message.user("[上下文摘要] they talked")
    assert rendered[2] == Message.assistant(SUMMARY_ACKNOWLEDGEMENT)
    assert rendered[3:] == messages[2:]
    assert [m.role for m in rendered].count("system") == 1


def test_focused_summary_as_a_system_message_when_asked() -> None:
    messages = _conversation()
    focused = FocusedConfig(summary_override="they talked", summary_covers=2, summary_role="system")
    rendered = render_context("sys", messages, SlotConfig(focused))
    assert rendered[:2] == [Message.system("sys"), Message.system("[上下文摘要] they talked")]
    assert rendered[2:] == messages[2:]


def test_focused_summary_at_the_end_as_in_the_seed() -> None:
    messages = _conversation()
    config = SlotConfig(
        FocusedConfig(
            summary_override="s",
            summary_position="end",
            summary_label="[Summary]",
            summary_role="system",
        )
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


def test_a_stored_focused_config_keeps_the_role_it_was_stored_with() -> None:
    # Stored before the default became "user": the field was left out when it held the
    # default, "system", so a config without it loads as "system".
    focused: dict[str, Any] = {"summary_override": "S", "summary_covers": 2}
    old: dict[str, Any] = {"mode": "focused", "state": {}, "focused": focused}
    assert config_from_json(old, where="old").focused == FocusedConfig(
        summary_override="S", summary_covers=2, summary_role="system"
    )
    stored_user = {**old, "focused": {**focused, "summary_role": "user"}}
    loaded = config_from_json(stored_user, where="old").focused
    assert loaded is not None and loaded.summary_role == "user"
    # Every config stored now carries its role, the default one too, and reads back the same.
    for role in ("user", "system"):
        config = SlotConfig(FocusedConfig(summary_override="S", summary_role=role))
        stored = config_to_json(config)
        assert stored["focused"]["summary_role"] == role
        assert config_from_json(stored, where="new") == config
    assert config_to_json(SlotConfig()) == {"mode": "full", "state": {}}


async def test_a_live_session_holds_its_window_not_its_age(tmp_path: Any) -> None:
    """After each summary the session lets go of what it covers; history() still has it all."""
    from agentcore import Agent, AgentBuilder, AgentSession, SqliteStore
    from agentcore.slots import FocusedConfig, SlotConfig
    from agentcore.testing import MockProvider

    store = SqliteStore(tmp_path / "window.db")
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=lambda r: "ok"))
        .store(store)
        .load_plugins(False)
        .build()
    )
    session = AgentSession(Agent("a"), "s", bundle, FocusedConfig(max_recent_messages=8))
    held = []
    for turn in range(200):
        await session.submit_turn(f"turn {turn}", pin=turn == 3)
        if turn % 10 == 9:  # a summary of everything but the last 4 messages
            slot = await session.get_slot()
            focused = slot.config.focused
            assert focused is not None
            covers = slot.message_count() - 4
            summary = FocusedConfig(
                max_recent_messages=8,
                summary_override=f"summary of {covers} messages",
                summary_covers=covers,
                pinned=focused.pinned,
            )
            await session.write_slot_config(slot.id, SlotConfig(summary))
            held.append(slot.message_count() - slot.offset)
    slot = await session.get_slot()
    # Bounded by the window and the turns since the last summary, not by 400 messages.
    assert max(held) <= 8 and slot.message_count() == 400
    assert slot.messages[6].text == "turn 3"  # the pinned message stays held
    texts = [m.text for m in await session.history()]
    assert texts == [t for n in range(200) for t in (f"turn {n}", "ok")]
    context = await session.load_messages()
    assert [m.text for m in context[-4:]] == ["turn 198", "ok", "turn 199", "ok"]
    await session.aclose()
    await store.close()


_ROLES = st.sampled_from(["user", "assistant", "tool"])
_MODES = st.one_of(
    st.just(None),
    st.builds(
        FocusedConfig,
        summary_override=st.one_of(st.none(), st.just("the summary")),
        summary_covers=st.integers(0, 8),
        max_recent_messages=st.one_of(st.none(), st.integers(1, 4)),
        summary_role=st.sampled_from(["user", "system"]),
        summary_position=st.sampled_from(["after_system", "end"]),
        pinned=st.lists(st.integers(0, 8), max_size=2, unique=True).map(tuple),
    ),
)


def _message(role: str, index: int) -> Message:
    if role == "tool":
        return Message.tool_result(f"call{index}", f"result {index}")
    return Message(role, f"{role} message {index}")  # type: ignore[arg-type]


@given(_MODES, st.lists(_ROLES, max_size=6), st.lists(_ROLES, min_size=1, max_size=8))
def test_a_slots_request_is_its_history_rendered_afresh_after_every_append(
    mode: FocusedConfig | None, first: list[str], appended: list[str]
) -> None:
    config = SlotConfig() if mode is None else SlotConfig(mode)
    history = [_message(role, index) for index, role in enumerate(first)]
    slot = ContextSlot("s", "default", config, "sys", messages=list(history))
    assert slot.load_messages() == render_context("sys", history, config)
    for index, role in enumerate(appended, len(history)):
        message = _message(role, index)
        history.append(message)
        slot.record_appended([message])
        # The render a slot keeps between appends is the one made from the whole history.
        assert slot.load_messages() == render_context("sys", history, config)
        assert list(slot.load_messages_with([])) == render_context("sys", history, config)
