"""Plays a demo script through a session and reports what each turn did to the context."""

from __future__ import annotations

from collections.abc import AsyncIterator

from attrs import frozen

from agentcore import AgentSession
from agentcore_autosummary.demo.measure import (
    SummaryWritten,
    context_tokens,
    new_summary,
    summary_state,
)
from agentcore_autosummary.demo.script import DemoScript


@frozen
class TurnReport:
    """What one turn of the demo did.

    :param number: The turn's number, counting from 1.
    :param user: What the user said.
    :param reply: The assistant's reply.
    :param context_tokens: The context the turn grew to: what the next request
        would carry without the summary this turn wrote, if any.
    :param summary: The summary the turn wrote, or None.
    """

    number: int
    user: str
    reply: str
    context_tokens: int
    summary: SummaryWritten | None = None


async def play(
    session: AgentSession, script: DemoScript, *, turns: int | None = None
) -> AsyncIterator[TurnReport | SummaryWritten]:
    """Submit the first ``turns`` user messages of ``script`` (all by default) to ``session``.

    Yields a :class:`TurnReport` per turn. A summary that lands only once the
    session's background work is done (background summaries) comes last, as
    a bare :class:`~agentcore_autosummary.demo.measure.SummaryWritten`.
    """
    known = summary_state(await session.get_slot())
    for number, turn in enumerate(script.turns[:turns], start=1):
        config_before = (await session.get_slot()).config
        reply = await session.submit_turn(turn.user)
        grown = await context_tokens(session, as_config=config_before)
        summary = await new_summary(session, known)
        if summary is not None:
            known = summary_state(await session.get_slot())
        yield TurnReport(number, turn.user, reply.text, grown, summary)
    await session.aclose()
    late = await new_summary(session, known)
    if late is not None:
        yield late
