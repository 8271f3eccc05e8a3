"""Measures what a session's next request carries and notices new summaries."""

from __future__ import annotations

from attrs import frozen

from agentcore import AgentSession, ContextSlot
from agentcore.cli.plugin_api import context_tokens as context_tokens
from agentcore.plugin_api import count_text_tokens
from agentcore_autosummary.applying.fencing import unfence_summary

SummaryState = tuple[str | None, int]
"""A slot's summary text (None before the first) and the index it covers up to."""


@frozen
class SummaryWritten:
    """A summary that replaced the start of the history.

    :param covers: The index of the first raw message the summary does not
        cover: messages ``0 .. covers - 1`` are summarized.
    :param text: The summary.
    :param tokens: The summary's size in tokens.
    :param context_tokens: The size of the context once the summary is in place.
    :param pruned: The summary covers what the one before did: it is that summary less
        the values a later message replaced (no model call; see
        ``agentcore_autosummary.applying.tail_pruning``).
    """

    covers: int
    text: str
    tokens: int
    context_tokens: int
    pruned: bool = False


def summary_state(slot: ContextSlot) -> SummaryState:
    """The summary a Focused ``slot`` holds, unfenced, and how far it covers ((None, 0) if none)."""
    focused = slot.config.focused
    if focused is None or focused.summary_override is None:
        return (None, 0 if focused is None else focused.summary_covers)
    return (unfence_summary(focused.summary_override), focused.summary_covers)


async def new_summary(
    session: AgentSession, known: SummaryState, *, model: str | None = None
) -> SummaryWritten | None:
    """The current slot's summary if it differs from ``known``, else None."""
    text, covers = summary_state(await session.get_slot())
    if text is None or (text, covers) == known:
        return None
    return SummaryWritten(
        covers=covers,
        text=text,
        tokens=count_text_tokens(text, model),
        context_tokens=await context_tokens(session, model=model),
        pruned=known[0] is not None and covers == known[1],
    )
