"""The summary pipeline: make a summary of a plan, fire its hooks, apply it."""

from __future__ import annotations

import logging
import time

import attrs

from agentcore import CostTracker, TurnContext
from agentcore_autosummary.applying.storing import (
    apply_summary,
    context_size_now,
    record_failure,
)
from agentcore_autosummary.calling.retries import make_summary_parts
from agentcore_autosummary.calling.summary_calls import isolated
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.plan import (
    Plan,
    plan_next,
)
from agentcore_autosummary.hooks import (
    after_summary,
    before_summary,
    summary_error,
    with_instructions,
)
from agentcore_autosummary.keeping.runtime import SessionRuntime
from agentcore_autosummary.keeping.summary_info import (
    CompactError,
    SummaryInfo,
    SummaryReason,
    SummaryRequestInfo,
)
from agentcore_autosummary.log_names import at_turn, fields

logger = logging.getLogger("agentcore.autosummary")


async def catch_up(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: SessionRuntime,
    plan: Plan | None,
    reason: SummaryReason,
) -> None:
    """Background summaries: one round of calls after another, until the backlog is covered.

    Each round is stored as soon as it is made, so a later turn's request
    benefits at once; the loop ends when a round covers its plan, fails, or
    makes no progress. ``plan`` None plans the first round from the slot.
    """
    last_start = -1
    while True:
        if plan is None:
            plan = (await plan_next(ctx, config, runtime)).plan
            if plan is None:
                runtime.backlog.pop(ctx.slot.id, None)  # all of it is covered
                return
            if plan.start <= last_start:
                return
        last_start = plan.start
        info = await summarize_quietly(ctx, config, runtime, plan, reason)
        if info is None or info.covers >= plan.covers:
            return
        plan = None


async def summarize_quietly(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: SessionRuntime,
    plan: Plan,
    reason: SummaryReason,
) -> SummaryInfo | None:
    """An automatic summary: a failure is logged and recorded by :func:`summarize`, not raised."""
    try:
        info = await summarize(ctx, config, runtime, plan, reason)
    except Exception as exc:  # a summary must never break a session
        runtime.why[plan.slot.id] = f"the summary failed ({type(exc).__name__}: {exc})"
        return None
    if info is None:
        runtime.why[plan.slot.id] = "the summary was vetoed by a hook or dropped for a newer one"
    if info is not None and info.covers < plan.covers:
        runtime.backlog[plan.slot.id] = plan.covers - info.covers
    elif info is not None:
        runtime.backlog.pop(plan.slot.id, None)
    return info


async def summarize(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: SessionRuntime,
    plan: Plan,
    reason: SummaryReason,
    instructions: str | None = None,
    *,
    strict: bool = False,
) -> SummaryInfo | None:
    """Make the summary of ``plan``, apply it and return it, firing the summary hooks.

    ``before_summary`` may edit the prompt and messages, or veto the summary
    (None is returned; with ``strict``, :class:`CompactError` is raised).
    A failure is logged, recorded (:func:`record_failure`), reported to
    ``on_summary_error`` and raised. A summary dropped because a newer one
    was applied meanwhile returns None (``strict``: raises CompactError).

    The returned summary may cover less than ``plan`` (see
    ``max_summary_calls_per_turn``): its ``covers`` says how much.

    A ``CancelledError`` raised by the summary call itself (not a
    cancellation of the task running this) counts as a failed attempt like
    any other error. A cancellation of the task (the session closed with
    ``aclose(cancel_pending=True)``, or a turn cancelled while it summarizes
    inline) propagates, and nothing of the summary is stored. What each
    summary call cost was stored as the call returned, applied or not.
    """
    request = SummaryRequestInfo(
        slot_id=plan.slot.id,
        turn_index=plan.turn_index,
        reason=reason,
        prompt=with_instructions(config.summary_prompt, instructions),
        messages=list(plan.messages),
        start=plan.start,
        end=plan.end,
        covers=plan.covers,
        model=plan.model,
        instructions=instructions,
    )
    if not await before_summary(ctx, request):
        logger.info(
            "summary of %s vetoed by a before_summary hook",
            at_turn(ctx, plan.turn_index),
        )
        if strict:
            raise CompactError("a before_summary hook vetoed the summary; nothing was changed")
        return None
    version = plan.slot.version
    spent = CostTracker()
    started = time.perf_counter()
    before = await context_size_now(ctx, config, plan.slot.id)
    try:
        if request.prompt != config.summary_prompt:
            config = attrs.evolve(config, summary_prompt=request.prompt)
        plan = attrs.evolve(plan, messages=tuple(request.messages))
        made = await isolated(make_summary_parts(attrs.evolve(ctx, cost=spent), config, plan))
        summary, plan, quality, segments = made
        usage = spent.total("summary") if spent.breakdown() else None
        # A summary made for a request that does not fit: its turn's messages are not
        # stored yet, and the request carries them beside what the summary leaves.
        pending = ctx.messages if reason == "budget" else ()
        applied = await apply_summary(
            ctx, config, runtime, plan, summary, version, segments, pending
        )
    except Exception as exc:
        logger.error(
            "summary failed (%s): %s: %s",
            fields(ctx, plan.slot.id, plan.turn_index),
            type(exc).__name__,
            exc,
            exc_info=logger.isEnabledFor(logging.DEBUG),
        )
        await record_failure(ctx, runtime, plan)
        await summary_error(ctx, request, exc)
        raise
    if applied is None:
        if strict:
            raise CompactError("a newer summary was applied meanwhile; this one was dropped")
        return None
    after = await context_size_now(ctx, config, plan.slot.id)
    info = SummaryInfo(
        slot_id=plan.slot.id,
        turn_index=plan.turn_index,
        reason=reason,
        summary=applied.text,
        start=plan.start,
        end=plan.end,
        covers=plan.covers,
        tokens_before=before.tokens,
        tokens_after=after.tokens,
        usage=usage,
        duration=time.perf_counter() - started,
        model=plan.model,
        quality=quality,
        tokens_estimated=before.estimated or after.estimated,
        attachments=applied.attachments,
        kept=applied.kept,
    )
    await after_summary(ctx, info)
    return info
