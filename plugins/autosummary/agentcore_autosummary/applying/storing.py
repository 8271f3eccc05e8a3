"""Storing a summary, a failed attempt, and what summary calls cost."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

import attrs

from agentcore import (
    ConflictError,
    FocusedConfig,
    Message,
    TurnContext,
    Usage,
)
from agentcore.plugin_api import JsonValue
from agentcore_autosummary.applying.attachments import Settled, settle_attachments
from agentcore_autosummary.applying.fencing import fence_summary
from agentcore_autosummary.config import SESSION_COUNTER_KEY, SummaryConfig
from agentcore_autosummary.deciding.budget import (
    counter_for,
    turn_model,
)
from agentcore_autosummary.deciding.context_size import ContextSize, context_size
from agentcore_autosummary.deciding.plan import Plan
from agentcore_autosummary.keeping.runtime import SessionRuntime
from agentcore_autosummary.keeping.state import (
    Segment,
    SummaryState,
    state_from_json,
    state_key,
    state_to_json,
)
from agentcore_autosummary.log_names import at_turn, fields, session_name

logger = logging.getLogger("agentcore.autosummary")


async def context_size_now(ctx: TurnContext, config: SummaryConfig, slot_id: str) -> ContextSize:
    """The context slot ``slot_id`` sends now, counted for the turn model (:func:`context_size`)."""
    slot = await ctx.session.get_slot(slot_id)
    return await context_size(slot, counter_for(ctx, turn_model(ctx)), config.window)


async def store_call_cost(ctx: TurnContext, usage: Usage) -> None:
    """Store what one summary call cost, in its own write, as soon as the call returned.

    Counted under the purpose ``"summary"`` with
    :meth:`~agentcore.AgentSession.record_usage` (the session state alone,
    no config write), so the cost survives whatever happens to the summary
    next: refused by the gate, failing its checks, dropped for a newer one,
    cancelled, or its process killed before it is applied. The writes that
    follow (the apply, a failed attempt) do not count it again. When this
    write fails the cost is kept in memory (``ctx.session.cost``), so the
    session's next write stores it, and the failure is logged.
    """
    try:
        await ctx.session.record_usage(usage, "summary")
    except Exception as exc:
        ctx.session.cost.add(usage, "summary")
        logger.error(
            "could not store the cost of a summary call (%s): %s", session_name(ctx.session), exc
        )


async def store_data(
    ctx: TurnContext,
    what: str,
    data: dict[str, JsonValue] | None = None,
    lock: asyncio.Lock | None = None,
) -> None:
    """Store the session ``data`` of a summary that was not applied, in one write (under ``lock``).

    What the summary's calls cost is not stored here: each call's usage was
    stored as the call returned (:func:`store_call_cost`). Without ``data``
    nothing is written. When the write fails, the failure is logged as
    "could not store ``what``".
    """
    if not data:
        return
    try:
        async with lock or contextlib.nullcontext():
            await ctx.session.record_usage(None, "summary", data=data)
    except Exception as exc:
        logger.error("could not store %s (%s): %s", what, session_name(ctx.session), exc)


async def apply_summary(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: SessionRuntime,
    plan: Plan,
    summary: str,
    version: int,
    segments: tuple[Segment, ...] = (),
    pending: Sequence[Message] = (),
) -> Settled | None:
    """Write the summary, its snapshot and the session state at once.

    ``segments`` are the parts the summary is made of (``strategy="segments"``),
    kept in the state for the next summary. ``pending``: the turn's messages not
    stored yet, which its request carries too (a summary made to fit it).

    The attachments of what the summary covers are settled first
    (:func:`~agentcore_autosummary.applying.attachments.settle_attachments`): the
    newest images stay pinned, the others are named in the summary's record.
    A Focused slot's ``summary_override`` receives the summary and its record
    fenced as data (:func:`~agentcore_autosummary.applying.fencing.fence_summary`);
    the ``memory_key`` snapshot and :class:`~agentcore_autosummary.SummaryInfo` hold
    them unfenced.

    Returns what was written, or None when the summary was dropped for a newer one. What the
    summary's calls cost is not added: each call's usage was stored as the
    call returned (:func:`store_call_cost`), so the state written here
    already holds it.

    The write goes through :meth:`AgentSession.write_slot_config`, conditional
    on ``version``, the slot's config version the plan was made from: when
    another summary (or a mode change) was applied since, the store refuses
    it atomically and the summary is dropped.
    """
    slot = plan.slot
    async with runtime.lock:
        before = runtime.states.get(slot.id, SummaryState())
        settled = await settle_attachments(ctx, config, runtime, plan, summary, before, pending)
        summary = settled.text
        # A Focused slot's config holds the summary; the state keeps its own copy
        # only for a slot without one. The memory_key snapshot is the public copy.
        state = SummaryState(
            last_summary_turn=plan.turn_index,
            last_attempt_turn=plan.turn_index,
            covered=plan.covers,
            generation=plan.base_generation + 1,
            summary=summary if slot.config.focused is None else None,
            segments=segments,
            attachments=settled.attachments,
            kept=settled.kept,
            turns=settled.turns,
        )
        data: dict[str, Any] = {
            config.memory_key: summary,
            state_key(slot.id): state_to_json(state),
        }
        if config.trigger == "cumulative":
            data[SESSION_COUNTER_KEY] = plan.turn_index  # the seed's one counter per session
        new_config = slot.config
        focused = slot.config.focused
        if focused is not None:
            new_focused: FocusedConfig = attrs.evolve(
                focused,
                summary_override=fence_summary(summary),
                summary_covers=plan.covers,
                summary_role=config.summary_role or focused.summary_role,
                summary_position=config.summary_position or focused.summary_position,
                pinned=settled.pinned,
            )
            new_config = attrs.evolve(slot.config, mode=new_focused)
        try:
            await ctx.session.write_slot_config(
                slot.id,
                new_config,
                expected_version=version,
                data=data,
                purpose="summary",
            )
        except ConflictError:
            logger.info(
                "summary of %s dropped: a newer summary was applied meanwhile",
                at_turn(ctx, plan.turn_index),
            )
            stored = await ctx.memory.get(state_key(slot.id))
            runtime.states[slot.id] = state_from_json(stored, slot_id=slot.id)
            return None
        runtime.states[slot.id] = state
        logger.info(
            "summary written (%s): covers messages 0..%d",
            fields(ctx, slot.id, plan.turn_index),
            plan.covers - 1,
        )
        return settled


async def record_failure(ctx: TurnContext, runtime: SessionRuntime, plan: Plan) -> None:
    """Persist the failed attempt in one store write.

    The attempt is stored so the debounce window holds across a resume. What
    its calls cost was stored as each call returned
    (:func:`store_call_cost`), so a resumed session counts the same tokens
    as this one.

    When another writer applied a newer summary meanwhile (the stored
    state's generation is past the plan's: the session may have reloaded
    it while storing a call's cost), the attempt is stale: its state is not
    written over the newer one, which the plugin takes up instead.
    """
    slot_id = plan.slot.id
    try:
        stored = state_from_json(await ctx.memory.get(state_key(slot_id)), slot_id=slot_id)
    except Exception:  # the failure is stored from what this object holds, as before
        stored = None
    if stored is not None and stored.generation > plan.base_generation:
        runtime.states[slot_id] = stored
        logger.info(
            "summary of %s dropped: a newer summary was applied meanwhile",
            at_turn(ctx, plan.turn_index),
        )
        return
    previous = runtime.states.get(slot_id, SummaryState())
    state = attrs.evolve(
        previous, last_attempt_turn=plan.turn_index, failures=previous.failures + 1
    )
    runtime.states[slot_id] = state
    data: dict[str, JsonValue] = {state_key(slot_id): state_to_json(state)}
    what = f"the failed summary attempt of turn {plan.turn_index}"
    await store_data(ctx, what, data, runtime.lock)
