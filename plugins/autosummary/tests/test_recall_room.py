"""Automatic recall when the context is a few tokens short of the window."""

from __future__ import annotations

from summary_helpers import TINY_WINDOW
from test_recall import (
    MakeSession,
    Model,
    assert_summarized_away,
    config,
    recalled_blocks,
    tell_the_ports,
)

from agentcore import AgentSession, FocusedConfig, Message
from agentcore.plugin_api import get_token_counter, reply_reservation
from agentcore.testing import MockProvider

QUESTION = "Which port does the ledger service use?"


def request_room(session: AgentSession) -> int:
    """What the window leaves a request besides its reply."""
    window = TINY_WINDOW["max_context_tokens"]
    return window - reply_reservation(session.agent.max_tokens, window)


async def asked_when_full(make_session: MakeSession, mode: str) -> tuple[Model, int]:
    """The question asked in the last 40 tokens before the room, once the ports are
    summarized, under ``mode``: the model, and the summaries made before the question.

    Summaries are made only when a request would not fit (the watermark is past it).
    """
    model = Model()
    summary = config("auto", trigger_token_ratio=0.95, keep_recent_tokens=100, mode=mode)
    session = make_session(MockProvider(responder=model), summary=summary, mode=FocusedConfig())
    room = request_room(session)
    counter = get_token_counter()

    def left() -> int:
        sent = [*model.turns[-1].messages, Message.assistant("Noted."), Message.user(QUESTION)]
        return room - counter.count_messages(sent)

    await tell_the_ports(session)
    for filler in range(300):  # turns of about 15 tokens
        if model.summaries and 0 <= left() < 40:
            break
        await session.submit_turn(f"ok {filler}.")
    await assert_summarized_away(session)
    assert 0 <= left() < 40
    summaries = model.summaries
    await session.submit_turn(QUESTION)
    assert counter.count_messages(model.turns[-1].messages) <= room
    return model, summaries


async def test_a_question_asked_when_the_context_is_full_still_recalls_its_answer(
    make_session: MakeSession,
) -> None:
    # A question asked a few tokens before the next summary left no room for what it
    # recalls: the summary the next turns would need is made at that turn instead.
    model, before = await asked_when_full(make_session, "inline")
    assert model.summaries > before  # made at the question, not a turn later
    assert "ledger service listens on port 8444" in recalled_blocks(model.turns[-1])[0]


async def test_a_background_session_does_not_wait_for_a_summary_to_recall(
    make_session: MakeSession,
) -> None:
    # Its user chose turns that never wait for a summary they can go without.
    model, before = await asked_when_full(make_session, "background")
    assert model.summaries == before
    assert recalled_blocks(model.turns[-1]) == []
