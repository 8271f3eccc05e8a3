"""What the plugin's log lines call the conversation they are about.

A session is named by its id, its slot and its turn. A conversation the
session only stands in for, such as the message list a
:class:`~agentcore_autosummary.Compactor` fits, is named as its owner says
(:data:`LOG_NAME` on the session's stash), never by the stand-in session's
internal id or turn numbers.
"""

from __future__ import annotations

from agentcore import TurnContext
from agentcore.plugin_api import SessionHandle, StashKey

LOG_NAME = StashKey[str]("autosummary log name")
"""How log lines name a session's conversation instead of its id (``session.stash``)."""


def session_name(session: SessionHandle) -> str:
    """``session 'ID'``, or the name its owner gave the conversation."""
    named = session.stash.get(LOG_NAME, None)
    return named if named is not None else f"session {session.session_id!r}"


def at_turn(ctx: TurnContext, turn: int | None = None) -> str:
    """``session 'ID' turn N`` (the context's turn unless ``turn``), or the given name alone."""
    named = ctx.session.stash.get(LOG_NAME, None)
    if named is not None:
        return named
    return f"session {ctx.session_id!r} turn {ctx.turn_index if turn is None else turn}"


def fields(ctx: TurnContext, slot: str, turn: int) -> str:
    """``session=ID, slot=SLOT, turn=N`` for a line's parenthesis, or the given name alone."""
    named = ctx.session.stash.get(LOG_NAME, None)
    if named is not None:
        return named
    return f"session={ctx.session_id}, slot={slot}, turn={turn}"
