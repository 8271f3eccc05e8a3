"""The turn each attachment was sent in, noted as the turn is stored, for the record to name.

A stored message does not say which turn wrote it; the record of attachments
(``agentcore_autosummary.applying.record``) names it, so recall and the model can
place an image. After a turn whose messages hold an attachment, the plugin notes
``(raw index, turn)`` in the slot's state (``SummaryState.turns``) and stores it: one
session-data write, only for such a turn. A summary that records the attachment
later, in this process or after a resume, reads the turn from there.
"""

from __future__ import annotations

import logging

import attrs

from agentcore import TurnContext
from agentcore_autosummary.keeping.attachments import has_attachments
from agentcore_autosummary.keeping.runtime import SessionRuntime, load_state
from agentcore_autosummary.keeping.state import state_key, state_to_json
from agentcore_autosummary.log_names import at_turn

logger = logging.getLogger("agentcore.autosummary")


async def note_attachment_turns(ctx: TurnContext, runtime: SessionRuntime) -> None:
    """Note the turn of the attachments ``ctx``'s stored turn added to its slot.

    ``ctx.messages`` are the turn's messages, the last ones of ``ctx.slot``. A failed
    write is logged; the record then names those attachments by message alone. A
    Full slot, which no summary covers, is left alone.
    """
    if ctx.slot.config.focused is None:
        return
    first = ctx.slot.message_count() - len(ctx.messages)
    seen = {
        first + offset: ctx.turn_index
        for offset, message in enumerate(ctx.messages)
        if has_attachments(message)
    }
    if not seen or first < 0:
        return
    async with runtime.lock:
        state = await load_state(ctx, runtime)
        turns = tuple(sorted({**dict(state.turns), **seen}.items()))
        state = runtime.states[ctx.slot.id] = attrs.evolve(state, turns=turns)
        try:
            await ctx.memory.set(state_key(ctx.slot.id), state_to_json(state))
        except Exception as exc:
            logger.error("%s: could not store the turn of its attachments: %s", at_turn(ctx), exc)
