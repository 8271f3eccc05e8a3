"""Between two summaries: the summary loses the values the verbatim tail has since replaced.

Under ``strategy="segments"`` a summary's parts are pruned when the summary is
made (:func:`~agentcore_autosummary.judging.pruning.current_parts`). The
conversation goes on after it: when a later turn changes or withdraws a value
the summary states ("we are not using Redis after all", "the budget is now
76,000"), the request would carry the old value in the summary and the new one
in the tail, and a model may answer with either. After each turn that makes no
summary, the summary's parts are pruned against the verbatim tail; when that
changes them, the pruned summary is written over the old one, covering the same
messages, without a model call. A turn that changes nothing writes nothing, so
the request's prefix stays as the prompt cache holds it; a change costs one
cache miss, as any summary does. The work of a turn is bounded by the summary's
room and the tail's newest characters
(:data:`~agentcore_autosummary.judging.pruning.TAIL_CHARS`), never by the history.
"""

from __future__ import annotations

import logging

import attrs

from agentcore import ConflictError, TurnContext
from agentcore_autosummary.applying.fencing import fence_summary
from agentcore_autosummary.applying.record import record_lines, with_record
from agentcore_autosummary.calling.segments import render_segments
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.judging.pruning import current_parts, newest_tail
from agentcore_autosummary.keeping.runtime import SessionRuntime
from agentcore_autosummary.keeping.state import SummaryState, state_key, state_to_json
from agentcore_autosummary.log_names import fields

__all__ = ["prune_to_tail"]

logger = logging.getLogger("agentcore.autosummary")


async def prune_to_tail(
    ctx: TurnContext, config: SummaryConfig, runtime: SessionRuntime, state: SummaryState
) -> bool:
    """Write the slot's summary less what its verbatim tail replaced; whether it changed.

    Only a Focused slot's summary made of parts (``strategy="segments"``) whose
    last part ends where the summary's coverage does. The write is conditional on
    the slot's config version: when a summary was applied meanwhile, nothing is
    written (that summary was pruned as it was made). A failed write is logged;
    the turn is stored already and the summary stays as it was.
    """
    slot = ctx.slot
    focused = slot.config.focused
    segments = state.segments
    if (
        config.strategy != "segments"
        or focused is None
        or focused.summary_override is None
        or not segments
        or segments[-1].end != state.covered
    ):
        return False
    tail = newest_tail(slot.messages, state.covered)
    if not tail:
        return False
    parts = current_parts(segments[:-1], segments[-1], (), tail)
    if parts == segments:
        return False
    summary = with_record(render_segments(parts), state.attachments, record_lines(config))
    pruned = attrs.evolve(state, segments=parts)
    new_focused = attrs.evolve(focused, summary_override=fence_summary(summary))
    async with runtime.lock:
        try:
            await ctx.session.write_slot_config(
                slot.id,
                attrs.evolve(slot.config, mode=new_focused),
                expected_version=slot.version,
                data={config.memory_key: summary, state_key(slot.id): state_to_json(pruned)},
                purpose="summary",
            )
        except ConflictError:
            return False
        except Exception as exc:  # the store's faults: the summary stays as it was
            logger.error(
                "could not write the summary pruned to its tail (%s): %s: %s",
                fields(ctx, slot.id, ctx.turn_index),
                type(exc).__name__,
                exc,
            )
            return False
        runtime.states[slot.id] = pruned
    logger.info(
        "summary pruned to its tail (%s): a later message replaced a value it stated",
        fields(ctx, slot.id, ctx.turn_index),
    )
    return True
