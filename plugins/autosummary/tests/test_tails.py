"""Triggers and tails by message count, and the slot's window never dropping messages."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from summary_helpers import Replies

from agentcore import AgentSession, FocusedConfig, Message
from agentcore.slots import SUMMARY_ACKNOWLEDGEMENT
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig

MakeSession = Callable[..., AgentSession]


async def test_a_message_window_never_drops_a_message_silently(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    # The token watermark (24,000 tokens) is never reached by 80 short messages.
    session = make_session(
        provider,
        summary=SummaryConfig(request_shape="transcript"),  # the transcripts show what was read
        mode=FocusedConfig(max_recent_messages=20),
    )
    summarized: set[str] = set()
    for turn in range(40):
        await session.submit_turn(f"message {turn}")
        for call in provider.calls_for("summary"):
            summarized.update(m.text for m in call.messages)
        slot = await session.get_slot()
        focused = slot.config.focused
        assert focused is not None
        context = await session.load_messages()
        for index, message in enumerate(await session.history()):
            covered = index < focused.summary_covers
            assert covered or message in context, f"message {index} left the context"
    assert slot.message_count() == 80
    assert provider.calls_for("summary")
    # Every covered user message was read by a summary request.
    prompts = " ".join(summarized)
    history = await session.history()
    assert focused is not None  # the last turn's, checked in the loop
    for index in range(focused.summary_covers):
        message = history[index]
        if message.role == "user":
            assert f"{message.text}\n" in prompts or prompts.endswith(message.text)


async def test_trigger_by_message_count_with_a_message_tail(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    config = SummaryConfig(trigger_messages=6, keep_recent_messages=2, debounce_turns=0)
    session = make_session(provider, summary=config, mode=FocusedConfig())
    # Messages long enough that their summary, fenced, is smaller than they are.
    await session.submit_turn("one: the first message of this conversation")
    await session.submit_turn("two: the second message of this conversation")
    assert not provider.calls_for("summary")
    await session.submit_turn("three: the third message of this conversation")
    assert len(provider.calls_for("summary")) == 1
    context = await session.load_messages()
    roles = ["system", "user", "assistant", "user", "assistant"]
    assert [m.role for m in context] == roles  # the summary, answered, then the tail
    assert context[3] == Message.user("three: the third message of this conversation")


def test_message_tail_must_stay_below_the_message_trigger() -> None:
    with pytest.raises(ValueError, match=r"keep_recent_messages \(6\).*trigger_messages \(6\)"):
        SummaryConfig(trigger_messages=6, keep_recent_messages=6)
    with pytest.raises(ValueError, match="trigger_messages"):
        SummaryConfig(trigger_messages=0)


@pytest.mark.parametrize("position", ["after_system", "end"])
async def test_user_role_summary_keeps_alternation(
    make_session: MakeSession, position: str
) -> None:
    provider = MockProvider(responder=Replies())
    config = SummaryConfig(trigger_messages=4, keep_recent_messages=2, debounce_turns=0)
    mode = FocusedConfig(summary_role="user", summary_position=position)  # type: ignore[arg-type]
    session = make_session(provider, summary=config, mode=mode)
    for text in ("alpha", "beta", "gamma"):
        await session.submit_turn(f"{text} is a long message about the project plan " * 5)
    assert provider.calls_for("summary")
    request = provider.calls_for("turn")[-1].messages
    assert not any(m.role == "system" and "summary #" in m.text for m in request)
    summary = next(m for m in request if "summary #" in m.text)
    assert summary.role == "user"
    roles = [m.role for m in request if m.role != "system"]
    assert all(a != b for a, b in itertools.pairwise(roles)), roles
    assert roles[0] == "user" and roles[-1] == "user"
    assert Message.assistant(SUMMARY_ACKNOWLEDGEMENT) in request
