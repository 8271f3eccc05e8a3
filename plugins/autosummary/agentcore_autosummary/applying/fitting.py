"""Fitting a turn request into the window: wait, summarize, give up the tail, leave out."""

from __future__ import annotations

import logging

from agentcore import (
    ContextWindowExceededError,
    TurnContext,
)
from agentcore.plugin_api import OVERFLOW_KEY, StashKey
from agentcore_autosummary.applying.attachments import release_kept_images
from agentcore_autosummary.applying.leaving_out import leave_out_oldest
from agentcore_autosummary.applying.pending import wait_pending
from agentcore_autosummary.calling.pipeline import catch_up, summarize_quietly
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.budget import (
    TurnBudget,
    cut_tool_results,
    overflow_prompt_tokens,
    refuse_oversized_input,
    turn_budget,
    turn_model,
)
from agentcore_autosummary.deciding.plan import make_plan, plan_next, start_attempt
from agentcore_autosummary.deciding.tails import (
    window_drops,
)
from agentcore_autosummary.deciding.trigger import backoff_turns, may_retry
from agentcore_autosummary.deciding.windows import effective_config, learn_served_window
from agentcore_autosummary.keeping.runtime import (
    SessionRuntime,
    covered_of,
    enabled_config,
    learn,
    load_state,
    runtime_of,
    session_correction,
)
from agentcore_autosummary.log_names import at_turn

logger = logging.getLogger("agentcore.autosummary")

ATTEMPTED_KEY = StashKey[set[str]]("autosummary attempted")
"""``ctx.stash``: the ids of the slots this turn summarized for the hard limit."""


async def fit_request(ctx: TurnContext, effective: SummaryConfig | None = None) -> None:
    """Keep the request about to be sent inside ``max_context_tokens``.

    ``effective`` is the config :func:`effective_config` gave for this call, when the
    caller has it already (no await since): it is not worked out again.

    The request's size is its corrected count plus tool definitions plus the
    reply reservation (:mod:`agentcore_autosummary.deciding.budget`). A turn whose own
    new input (with the system prompt and the pinned messages, but for those the
    plugin keeps for images) cannot fit is refused with
    :class:`~agentcore.errors.ContextWindowExceededError` before any call.
    When the request would not fit: wait for a pending background summary
    (at most half of what is left of the turn's deadline, see
    :mod:`agentcore_autosummary.applying.pending`);
    if it still would not fit, summarize now whatever the debounce
    says (once per turn, and once more after the server refused the request
    as too long; while attempts keep failing, at most every
    :func:`~agentcore_autosummary.deciding.trigger.backoff_turns` turns), giving up
    as much of the verbatim tail as needed; if it still would not fit, give up
    the images the plugin keeps (recorded in the summary:
    :func:`~agentcore_autosummary.applying.attachments.release_kept_images`); then cut
    the turn's in-flight tool results for this request; if it still would
    not fit, degrade: this request leaves out the oldest messages the
    summary does not cover (:func:`leave_out_oldest`), and the turn goes out
    inside the window.
    """
    config = enabled_config(ctx.config)
    if config is None or not config.window_guard:
        return
    config = effective if effective is not None else await effective_config(ctx, config)
    runtime = runtime_of(ctx.session)
    await before_window_drops(ctx, config, runtime)
    overflow = ctx.stash.get(OVERFLOW_KEY, None)
    learned_window = overflow is not None and (
        await learn_served_window(ctx, turn_model(ctx), overflow.limit_tokens, config.window)
    )
    if learned_window:
        config = await effective_config(ctx, config)
    budget = turn_budget(ctx, config, await session_correction(ctx, runtime))
    if overflow is not None and not learned_window:
        budget = await learn_from_overflow(ctx, config, runtime, budget, overflow)
    local = await budget.turn_local(ctx, limit=budget.room)
    tokens = budget.sized(local)
    if tokens <= budget.window and overflow is None:
        # It fits as it is (the common turn): so does the smallest request, a part of it.
        runtime.sent[ctx.slot.id] = local
        return
    await refuse_oversized_input(ctx, budget, (await load_state(ctx, runtime)).kept)
    tokens = await make_room(ctx, config, runtime, budget, forced=overflow is not None)
    if tokens > budget.window and await release_kept_images(ctx, config, runtime):
        tokens = await budget.turn_size(ctx, exact=False)
    if tokens > budget.window and await cut_tool_results(ctx, budget, tokens - budget.window):
        tokens = await budget.turn_size(ctx, exact=False)
    if tokens > budget.window:
        backlog = bool(runtime.backlog.get(ctx.slot.id)) and ctx.slot.config.focused is not None
        why = runtime.why.get(ctx.slot.id, "no summary could make room")
        ctx.context = await leave_out_oldest(ctx, budget, backlog=backlog, why=why)
        tokens = await budget.turn_size(ctx, exact=False)
    if tokens > budget.window:
        raise ContextWindowExceededError(
            f"the request needs about {tokens} tokens (reply reservation included) even "
            f"with every message the summary does not cover left out: the turn's new input, "
            f"the system prompt and the pinned messages exceed max_context_tokens "
            f"({budget.window}); nothing of the turn was stored",
            prompt_tokens=tokens - budget.reserve,
            limit_tokens=budget.window,
            requested_tokens=tokens,
        )
    runtime.sent[ctx.slot.id] = await budget.turn_local(ctx)


async def before_window_drops(
    ctx: TurnContext, config: SummaryConfig, runtime: SessionRuntime
) -> None:
    """Wait for a pending summary when the slot's window would leave messages out."""
    pending = runtime.pending.get(ctx.slot.id)
    if pending is None or pending.done():
        return
    covered = covered_of(ctx.slot, await load_state(ctx, runtime))
    if window_drops(ctx.slot, covered):
        await wait_pending(ctx, config, pending)


async def make_room(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: SessionRuntime,
    budget: TurnBudget,
    *,
    forced: bool,
) -> int:
    """Wait for a pending summary, then summarize if the request still does not fit."""
    runtime.why.pop(ctx.slot.id, None)
    pending = runtime.pending.get(ctx.slot.id)
    if pending is not None and not pending.done() and runtime.backlog.get(ctx.slot.id):
        # A backlog is being caught up in the background: the request leaves it out
        # (see without_backlog) rather than wait for all of it.
        return await budget.turn_size(ctx, exact=False)
    if pending is not None and not pending.done():
        logger.info(
            "%s waits for the pending summary to stay within %d tokens",
            at_turn(ctx),
            config.window,
        )
        if not await wait_pending(ctx, config, pending):
            runtime.why[ctx.slot.id] = (
                "the summary running in the background took longer than the turn may wait"
            )
            return await budget.turn_size(ctx, exact=False)
    tokens = await budget.turn_size(ctx, exact=False)
    if tokens <= budget.window and not forced:
        return tokens
    if ctx.slot.config.focused is None:
        runtime.why[ctx.slot.id] = (
            "the slot is in Full mode, which is never summarized (switch it to a "
            "FocusedConfig with session.set_mode)"
        )
        return tokens
    attempted = ctx.stash.setdefault(ATTEMPTED_KEY, set())
    if ctx.slot.id in attempted and not forced:
        return tokens
    attempted.add(ctx.slot.id)
    state = await load_state(ctx, runtime)
    if not may_retry(state, ctx.turn_index):
        assert state.last_attempt_turn is not None
        due = state.last_attempt_turn + backoff_turns(state.failures) - ctx.turn_index
        runtime.why[ctx.slot.id] = (
            f"the last {state.failures} summary attempts failed; the next one is due in "
            f"{due} turn{'s' if due != 1 else ''}"
        )
        return tokens
    plan = (await plan_next(ctx, config, runtime)).plan
    if plan is None:
        runtime.backlog.pop(ctx.slot.id, None)
        runtime.why[ctx.slot.id] = "every message the summary does not cover is in the tail"
    else:
        start_attempt(ctx, runtime, state)
        info = await summarize_quietly(ctx, config, runtime, plan, "budget")
        if info is not None and info.covers < plan.covers:
            if config.mode == "background":
                # The rest of the backlog goes on after this call, not inside it.
                work = catch_up(ctx, config, runtime, None, "budget")
                runtime.pending[ctx.slot.id] = ctx.session.run_in_background(work)
            return await budget.turn_size(ctx, exact=False)
        tokens = await budget.turn_size(ctx, exact=False)
        if tokens <= budget.window or info is None:
            return tokens
    return await give_up_tail(ctx, config, runtime, budget, plan is not None)


async def summarize_for_room(ctx: TurnContext, config: SummaryConfig, spare: int) -> bool:
    """Summarize now so that the turn's request leaves ``spare`` more tokens of the window.

    For what is added to a request once it fits (automatic recall's part, see
    :mod:`agentcore_autosummary.recalling.automatic`): the summary the window would
    need within a few turns, made at this one. Never more than the fitting would do:
    one attempt a turn (the fitting's counts), none while failed attempts back off
    or another summary is running, and the verbatim tail stays. Not under
    ``mode="background"``, whose user chose turns that never wait for a summary the
    request can go without. Whether a summary was applied.
    """
    runtime = runtime_of(ctx.session)
    if config.mode == "background" or ctx.slot.config.focused is None:
        return False
    pending = runtime.pending.get(ctx.slot.id)
    if pending is not None and not pending.done():
        return False  # a summary is on its way: this turn is not kept waiting for it
    attempted = ctx.stash.setdefault(ATTEMPTED_KEY, set())
    state = await load_state(ctx, runtime)
    if ctx.slot.id in attempted or not may_retry(state, ctx.turn_index):
        return False
    planned = await plan_next(ctx, config, runtime)
    if planned.plan is None:
        return False
    attempted.add(ctx.slot.id)
    logger.info("%s: summarizing to make room for %d more tokens", at_turn(ctx), spare)
    start_attempt(ctx, runtime, planned.state)
    return await summarize_quietly(ctx, config, runtime, planned.plan, "budget") is not None


async def give_up_tail(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: SessionRuntime,
    budget: TurnBudget,
    summarized: bool,
) -> int:
    """Summarize part or all of the verbatim tail when the request still does not fit.

    The recent tail (``keep_recent_tokens``) is kept verbatim while the window
    allows; a request that cannot fit otherwise (a large new message, a
    server that counts more than agentcore, tool definitions) summarizes first
    what the overflow requires of it, then all of it. Never more than two
    summaries; the pinned messages stay verbatim.
    """
    model = budget.model
    full_tail = budget.correction.unapply(model, config.recent_budget)
    tokens = await budget.turn_size(ctx)
    over = budget.correction.unapply(model, tokens - budget.window) + 1
    for recent in sorted({max(0, full_tail - over), 0}, reverse=True):
        state = await load_state(ctx, runtime)
        plan = make_plan(ctx, config, state, budget.correction, recent=recent)
        if plan is None:
            continue
        summarized = True
        logger.info(
            "%s: the request needs %d tokens of %d; summarizing the recent tail down to %d tokens",
            at_turn(ctx),
            tokens,
            budget.window,
            recent,
        )
        if await summarize_quietly(ctx, config, runtime, plan, "budget") is None:
            break
        tokens = await budget.turn_size(ctx)
        if tokens <= budget.window:
            break
    if not summarized:
        runtime.why[ctx.slot.id] = "nothing is left to summarize"
    elif tokens > budget.window and ctx.slot.id not in runtime.why:
        runtime.why[ctx.slot.id] = "the summary did not make enough room"
    return tokens


async def learn_from_overflow(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: SessionRuntime,
    budget: TurnBudget,
    error: ContextWindowExceededError,
) -> TurnBudget:
    """Learn from the figures of a server's refusal of the last request."""
    sent = runtime.sent.get(ctx.slot.id)
    if sent is None:
        return budget
    logger.warning(
        "%s: the server refused a request counted %d tokens here as too long "
        "(%s); summarizing and retrying once",
        at_turn(ctx),
        sent,
        error,
    )
    server = overflow_prompt_tokens(error, config.window, ctx.session.agent.max_tokens)
    return budget.with_correction(await learn(ctx, runtime, budget.model, sent, server))
