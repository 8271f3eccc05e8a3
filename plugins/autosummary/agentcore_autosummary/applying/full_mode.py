"""Sessions in the Full mode: switched to the Focused mode on first use, or told once.

A summary is sent only by a Focused slot (its ``summary_override``); a Full
slot sends every message. Sessions created before autosummary was enabled,
or without a mode, are Full: the first model call of such a slot switches it
to ``FocusedConfig()`` (one stored config write; later resumes find it
Focused). When the app chose the mode itself (``AgentSession(...,
mode="full")``, see :attr:`agentcore.AgentSession.mode_chosen`), the slot is
left alone, as the seed's Full-mode rule asks, and the plugin says once per
live session and slot how to change it.
"""

from __future__ import annotations

import logging

from agentcore import FocusedConfig, TurnContext
from agentcore_autosummary.keeping.runtime import runtime_of

logger = logging.getLogger("agentcore.autosummary")

FIX = (
    "pass FocusedConfig() as the session's mode (AgentSession(agent, id, bundle, "
    "FocusedConfig())) or call `await session.set_mode(FocusedConfig())`"
)
"""The exact fix the plugin names for a Full slot the app chose."""


async def focus_full_slot(ctx: TurnContext) -> None:
    """Switch the turn's Full slot to the Focused mode, or tell once why it stays Full."""
    slot = ctx.slot
    if slot.config.focused is not None:
        return
    session = ctx.session
    if not session.mode_chosen:
        await session.set_mode(FocusedConfig(), slot.id)
        logger.info(
            "session %s: slot %r was in the Full mode, which never sends a summary; "
            "autosummary switched it to the Focused mode (pass mode='full' to the "
            "session to keep it Full)",
            session.session_id,
            slot.id,
        )
        return
    told = runtime_of(session).told_full
    if slot.id in told:
        return
    told.add(slot.id)
    logger.warning(
        "session %s: slot %r is in the Full mode the app chose, so every message is sent "
        "and no summary is: requests grow until they leave out the oldest messages. "
        "To send summaries, %s",
        session.session_id,
        slot.id,
        FIX,
    )
