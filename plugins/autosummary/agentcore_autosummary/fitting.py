"""Fitting a turn request into the window: wait, summarize, give up the tail, leave out."""

from __future__ import annotations

import asyncio
import logging

import attrs

from agentcore import (
    Message,
    TurnContext,
)
from agentcore.budget import OVERFLOW_KEY
from agentcore.errors import ContextWindowExceededError
from agentcore.slots import render_parts
from agentcore_autosummary.budget import (
    TurnBudget,
    cut_tool_results,
    overflow_prompt_tokens,
    refuse_oversized_input,
    turn_budget,
)
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.pipeline import catch_up, summarize_quietly
from agentcore_autosummary.plan import make_plan, warm_counts
from agentcore_autosummary.planner import recent_tail_start
from agentcore_autosummary.runtime import (
    SessionRuntime,
    covered_and_previous,
    enabled_config,
    learn,
    load_state,
    runtime_of,
    session_correction,
)
from agentcore_autosummary.tails import (
    window_drops,
)
from agentcore_autosummary.windows import resolve_config

logger = logging.getLogger("agentcore.autosummary")

_WARNED_KEY = "autosummary.overflow_warned"
_LEFT_OUT_SIZER = Message.system(
    "[9999999 earlier messages are still being summarized and are left out of this request.]"
)  # sizes the note of without_backlog, whatever its number
ATTEMPTED_KEY = "autosummary.attempted"  # ctx.extra: slots summarized for the hard limit


async def fit_request(ctx: TurnContext) -> None:
    """Keep the request about to be sent inside ``max_context_tokens``.

    The request's size is its corrected count plus tool definitions plus the
    reply reservation (:mod:`agentcore_autosummary.budget`). A user message
    that cannot fit even alone is refused with
    :class:`~agentcore.errors.ContextWindowExceededError` before any call.
    When the request would not fit: wait for a pending background summary;
    if it still would not fit, summarize now whatever the debounce says (once
    per turn, and once more after the server refused the request as too
    long), giving up as much of the verbatim tail as needed; if it still
    would not fit, cut the turn's in-flight tool results for this request.
    Only Focused slots can be summarized; a Focused slot whose request cannot
    be made to fit raises ``ContextWindowExceededError`` rather than sending it.
    """
    config = enabled_config(ctx.config)
    if config is None:
        return
    config = await resolve_config(ctx, config)
    runtime = runtime_of(ctx.session)
    await before_window_drops(ctx, runtime)
    budget = turn_budget(ctx, config, await session_correction(ctx, runtime))
    overflow = ctx.extra.get(OVERFLOW_KEY)
    if isinstance(overflow, ContextWindowExceededError):
        budget = await learn_from_overflow(ctx, config, runtime, budget, overflow)
    await refuse_oversized_input(ctx, budget)
    tokens = await budget.turn_size(ctx)
    if tokens > budget.window or overflow is not None:
        tokens = await make_room(ctx, config, runtime, budget, forced=overflow is not None)
    if tokens > budget.window and await cut_tool_results(ctx, budget, tokens - budget.window):
        tokens = await budget.turn_size(ctx)
    backlog = runtime.backlog.get(ctx.slot.id)
    if tokens > budget.window and backlog and ctx.slot.config.focused is not None:
        ctx.context = await without_backlog(ctx, budget)
        tokens = await budget.turn_size(ctx)
    if tokens > budget.window:
        if ctx.slot.config.focused is not None:
            raise ContextWindowExceededError(
                f"the request needs about {tokens} tokens (reply reservation included) and "
                f"neither a summary nor cutting the turn's tool results brought it within "
                f"max_context_tokens ({budget.window}); nothing of the turn was stored",
                prompt_tokens=tokens - budget.reserve,
                limit_tokens=budget.window,
                requested_tokens=tokens,
            )
        warn_once(ctx, config, "the request exceeds %d tokens and a Full slot is never summarized")
    runtime.sent[ctx.slot.id] = await budget.turn_local(ctx)


async def without_backlog(ctx: TurnContext, budget: TurnBudget) -> list[Message]:
    """The slot's context for this request, the part still awaiting its summary left out.

    While a backlog larger than ``max_summary_calls_per_turn`` calls is
    caught up, the request carries the summary made so far, a note saying how
    many messages are left out, and the newest messages that fit.
    """
    slot = ctx.slot
    counter = budget.counter
    before, start, after = render_parts(slot.system_prompt, slot.messages, slot.config)
    fixed = await counter.count_messages_async([*before, _LEFT_OUT_SIZER, *after, *ctx.messages])
    room = budget.correction.unapply(budget.model, budget.window - budget.reserve)
    room -= fixed + counter.count_tools(budget.tools)
    tail = recent_tail_start(slot.messages, start, max(0, room), counter)
    note = Message.system(
        f"[{tail - start} earlier messages are still being summarized and are left out "
        "of this request.]"
    )
    logger.info(
        "session %s turn %d: %d messages await their summary; this request leaves them out",
        ctx.session_id,
        ctx.turn_index,
        tail - start,
    )
    return [*before, note, *slot.raw_messages(tail), *after]


async def before_window_drops(ctx: TurnContext, runtime: SessionRuntime) -> None:
    """Wait for a pending summary when the slot's window would leave messages out."""
    pending = runtime.pending.get(ctx.slot.id)
    if pending is None or pending.done():
        return
    covered, _ = covered_and_previous(ctx.slot, await load_state(ctx, runtime))
    if window_drops(ctx.slot, covered):
        await asyncio.shield(pending)


def warn_once(ctx: TurnContext, config: SummaryConfig, message: str) -> None:
    """Log ``message`` (formatted with the window) as a warning, once per turn."""
    if ctx.extra.get(_WARNED_KEY):
        return
    ctx.extra[_WARNED_KEY] = True
    logger.warning("session %s turn %d: " + message, ctx.session_id, ctx.turn_index, config.window)


async def make_room(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: SessionRuntime,
    budget: TurnBudget,
    *,
    forced: bool,
) -> int:
    """Wait for a pending summary, then summarize if the request still does not fit."""
    pending = runtime.pending.get(ctx.slot.id)
    if pending is not None and not pending.done() and runtime.backlog.get(ctx.slot.id):
        # A backlog is being caught up in the background: the request leaves it out
        # (see without_backlog) rather than wait for all of it.
        return await budget.turn_size(ctx)
    if pending is not None and not pending.done():
        logger.info(
            "session %s turn %d waits for the pending summary to stay within %d tokens",
            ctx.session_id,
            ctx.turn_index,
            config.window,
        )
        await asyncio.shield(pending)
    tokens = await budget.turn_size(ctx)
    if (tokens <= budget.window and not forced) or ctx.slot.config.focused is None:
        return tokens
    attempted = ctx.extra.setdefault(ATTEMPTED_KEY, set())
    assert isinstance(attempted, set)
    if ctx.slot.id in attempted and not forced:
        return tokens
    attempted.add(ctx.slot.id)
    state = await load_state(ctx, runtime)
    await warm_counts(ctx, config, state)
    plan = make_plan(ctx, config, state, budget.correction)
    if plan is None:
        runtime.backlog.pop(ctx.slot.id, None)
    else:
        runtime.states[ctx.slot.id] = attrs.evolve(state, last_attempt_turn=ctx.turn_index)
        info = await summarize_quietly(ctx, config, runtime, plan, "budget")
        if info is not None and info.covers < plan.covers:
            if config.mode == "background":
                # The rest of the backlog goes on after this call, not inside it.
                work = catch_up(ctx, config, runtime, None, "budget")
                runtime.pending[ctx.slot.id] = ctx.session.run_in_background(work)
            return await budget.turn_size(ctx)
        tokens = await budget.turn_size(ctx)
        if tokens <= budget.window or info is None:
            return tokens
    return await give_up_tail(ctx, config, runtime, budget, plan is not None)


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
            "session %s turn %d: the request needs %d tokens of %d; summarizing the recent "
            "tail down to %d tokens",
            ctx.session_id,
            ctx.turn_index,
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
        warn_once(ctx, config, "the request exceeds %d tokens and nothing is left to summarize")
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
        "session %s turn %d: the server refused a request counted %d tokens here as too long "
        "(%s); summarizing and retrying once",
        ctx.session_id,
        ctx.turn_index,
        sent,
        error,
    )
    server = overflow_prompt_tokens(error, config.window, ctx.session.agent.max_tokens)
    return budget.with_correction(await learn(ctx, runtime, budget.model, sent, server))
