"""The hook implementations: the summary checkpoint after every turn."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import attrs
from attrs import define, field, frozen

from agentcore import (
    AgentConfig,
    AgentSession,
    CompactError,
    ConflictError,
    ContextSlot,
    CostTracker,
    FocusedConfig,
    Message,
    PluginSetting,
    SlotConfig,
    SummaryInfo,
    SummaryRequestInfo,
    TurnContext,
    Usage,
    hookimpl,
)
from agentcore.budget import OVERFLOW_KEY, TokenCorrection
from agentcore.compaction import SummaryReason
from agentcore.errors import ContextWindowExceededError
from agentcore.slots import DEFAULT_SUMMARY_LABEL, render_context, render_parts
from agentcore.stores.base import JsonValue
from agentcore_autosummary.budget import (
    TurnBudget,
    counter_for,
    cut_tool_results,
    load_correction,
    overflow_prompt_tokens,
    refuse_oversized_input,
    save_correction,
    turn_budget,
    turn_model,
)
from agentcore_autosummary.config import SESSION_COUNTER_KEY, SummaryConfig
from agentcore_autosummary.formatting import MAX_CONVERSATION_CHARS
from agentcore_autosummary.hooks import (
    after_summary,
    before_summary,
    summary_error,
    with_instructions,
)
from agentcore_autosummary.pins import check_pins_fit, unpinned, unpinned_indices
from agentcore_autosummary.planner import plan_chunks, recent_tail_start
from agentcore_autosummary.provider import counting_model, summary_model, summary_provider
from agentcore_autosummary.retention import append_missing, log_missing, missing_identifiers
from agentcore_autosummary.seed_rule import cumulative_due
from agentcore_autosummary.state import SummaryState, state_from_json, state_key, state_to_json
from agentcore_autosummary.summarizer import (
    SummaryFailedError,
    SummaryFit,
    SummaryOverflowError,
    SummaryReply,
    request_summary,
)
from agentcore_autosummary.tails import (
    cap_tail,
    messages_due,
    tail_cap,
    unsummarized,
    window_drops,
)
from agentcore_autosummary.trigger import is_due, measure
from agentcore_autosummary.windows import known_config, resolve_config

logger = logging.getLogger("agentcore.autosummary")

SETTING = "summary_config"
"""The builder setting that enables the plugin."""

_INPUT_MARGIN_TOKENS = 32

_PART_OVERHEAD_TOKENS = 16

CHUNK_CONCURRENCY = 4
"""How many chunk summaries of one backlog are requested at once."""

T = TypeVar("T")

_WARNED_KEY = "autosummary.overflow_warned"
_LEFT_OUT_SIZER = Message.system(
    "[9999999 earlier messages are still being summarized and are left out of this request.]"
)  # sizes the note of _without_backlog, whatever its number
_ATTEMPTED_KEY = "autosummary.attempted"  # ctx.extra: slots summarized for the hard limit


@frozen
class _Plan:
    """One summary to make.

    The summarizer reads ``previous`` and raw messages ``start:end`` of the
    slot; once applied, the summary covers every raw message before ``covers``.
    """

    slot: ContextSlot
    turn_index: int
    base_generation: int
    previous: str | None
    start: int
    end: int
    covers: int
    messages: tuple[Message, ...]
    model: str | None


@define
class _SessionRuntime:
    """What the plugin keeps in memory for one live session."""

    lock: asyncio.Lock = field(factory=asyncio.Lock)
    states: dict[str, SummaryState] = field(factory=dict)
    pending: dict[str, asyncio.Task[None]] = field(factory=dict)
    last_context: dict[str, int] = field(factory=dict)
    correction: TokenCorrection | None = None
    sent: dict[str, int] = field(factory=dict)
    """Per slot: the local count of the last turn request sent."""
    backlog: dict[str, int] = field(factory=dict)
    """Per slot: messages the last capped summary left uncovered (see ``_without_backlog``)."""


_runtimes: weakref.WeakKeyDictionary[AgentSession, _SessionRuntime] = weakref.WeakKeyDictionary()


def _runtime(session: AgentSession) -> _SessionRuntime:
    runtime = _runtimes.get(session)
    if runtime is None:
        runtime = _runtimes[session] = _SessionRuntime()
    return runtime


def _config(config: AgentConfig) -> SummaryConfig | None:
    value = config.get(SETTING)
    return value if isinstance(value, SummaryConfig) else None


# -- hooks ------------------------------------------------------------------------


@hookimpl
def register_settings() -> Sequence[PluginSetting]:
    """Declare ``summary_config``: a :class:`SummaryConfig` or a dict of its fields."""
    return [
        PluginSetting(
            SETTING, SummaryConfig.coerce, "Automatic conversation summaries (autosummary)."
        )
    ]


@hookimpl
def summary_memory_key(config: AgentConfig) -> str | None:
    """The session-data key of the summary snapshot, when summaries are enabled."""
    summary_config = _config(config)
    return None if summary_config is None else summary_config.memory_key


@hookimpl
def check_slot_config(session: AgentSession, slot: ContextSlot, config: SlotConfig) -> None:
    """Refuse pins that cannot fit ``max_context_tokens`` (see :func:`check_pins_fit`)."""
    summary_config = _config(session.bundle.config)
    if summary_config is not None:
        summary_config = known_config(session.bundle.provider, summary_config)
        check_pins_fit(session, slot, config, summary_config)


@hookimpl
async def before_model_call(ctx: TurnContext) -> None:
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
    config = _config(ctx.config)
    if config is None:
        return
    config = await resolve_config(ctx, config)
    runtime = _runtime(ctx.session)
    await _before_window_drops(ctx, runtime)
    budget = turn_budget(ctx, config, await _correction(ctx, runtime))
    overflow = ctx.extra.get(OVERFLOW_KEY)
    if isinstance(overflow, ContextWindowExceededError):
        budget = await _learn_from_overflow(ctx, config, runtime, budget, overflow)
    await refuse_oversized_input(ctx, budget)
    tokens = await budget.turn_size(ctx)
    if tokens > budget.window or overflow is not None:
        tokens = await _make_room(ctx, config, runtime, budget, forced=overflow is not None)
    if tokens > budget.window and await cut_tool_results(ctx, budget, tokens - budget.window):
        tokens = await budget.turn_size(ctx)
    backlog = runtime.backlog.get(ctx.slot.id)
    if tokens > budget.window and backlog and ctx.slot.config.focused is not None:
        ctx.context = await _without_backlog(ctx, budget)
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
        _warn_once(ctx, config, "the request exceeds %d tokens and a Full slot is never summarized")
    runtime.sent[ctx.slot.id] = await budget.turn_local(ctx)


async def _without_backlog(ctx: TurnContext, budget: TurnBudget) -> list[Message]:
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


async def _before_window_drops(ctx: TurnContext, runtime: _SessionRuntime) -> None:
    """Wait for a pending summary when the slot's window would leave messages out."""
    pending = runtime.pending.get(ctx.slot.id)
    if pending is None or pending.done():
        return
    covered, _ = _covered_and_previous(ctx.slot, await _load_state(ctx, runtime))
    if window_drops(ctx.slot, covered):
        await asyncio.shield(pending)


def _warn_once(ctx: TurnContext, config: SummaryConfig, message: str) -> None:
    if ctx.extra.get(_WARNED_KEY):
        return
    ctx.extra[_WARNED_KEY] = True
    logger.warning("session %s turn %d: " + message, ctx.session_id, ctx.turn_index, config.window)


async def _make_room(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: _SessionRuntime,
    budget: TurnBudget,
    *,
    forced: bool,
) -> int:
    """Wait for a pending summary, then summarize if the request still does not fit."""
    pending = runtime.pending.get(ctx.slot.id)
    if pending is not None and not pending.done() and runtime.backlog.get(ctx.slot.id):
        # A backlog is being caught up in the background: the request leaves it out
        # (see _without_backlog) rather than wait for all of it.
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
    attempted = ctx.extra.setdefault(_ATTEMPTED_KEY, set())
    assert isinstance(attempted, set)
    if ctx.slot.id in attempted and not forced:
        return tokens
    attempted.add(ctx.slot.id)
    state = await _load_state(ctx, runtime)
    await _warm_counts(ctx, config, state)
    plan = _plan(ctx, config, state, budget.correction)
    if plan is None:
        runtime.backlog.pop(ctx.slot.id, None)
    else:
        runtime.states[ctx.slot.id] = attrs.evolve(state, last_attempt_turn=ctx.turn_index)
        info = await _summarize_quietly(ctx, config, runtime, plan, "budget")
        if info is not None and info.covers < plan.covers:
            if config.mode == "background":
                # The rest of the backlog goes on after this call, not inside it.
                work = _catch_up(ctx, config, runtime, None, "budget")
                runtime.pending[ctx.slot.id] = ctx.session.run_in_background(work)
            return await budget.turn_size(ctx)
        tokens = await budget.turn_size(ctx)
        if tokens <= budget.window or info is None:
            return tokens
    return await _give_up_tail(ctx, config, runtime, budget, plan is not None)


async def _give_up_tail(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: _SessionRuntime,
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
        state = await _load_state(ctx, runtime)
        plan = _plan(ctx, config, state, budget.correction, recent=recent)
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
        if await _summarize_quietly(ctx, config, runtime, plan, "budget") is None:
            break
        tokens = await budget.turn_size(ctx)
        if tokens <= budget.window:
            break
    if not summarized:
        _warn_once(ctx, config, "the request exceeds %d tokens and nothing is left to summarize")
    return tokens


async def _correction(ctx: TurnContext, runtime: _SessionRuntime) -> TokenCorrection:
    if runtime.correction is None:
        runtime.correction = await load_correction(ctx)
    return runtime.correction


async def _learn(
    ctx: TurnContext, runtime: _SessionRuntime, model: str | None, local: int, server: int
) -> TokenCorrection:
    """Fold one observation into the session's correction, storing it when it changed."""
    current = await _correction(ctx, runtime)
    learned = current.observe(model, local, server)
    if learned is not current:
        runtime.correction = learned
        logger.info(
            "session %s: the server counts %.3fx agentcore's tokens for model %r",
            ctx.session_id,
            learned.factor(model),
            model,
        )
        await save_correction(ctx, learned)
    return learned


async def _learn_from_overflow(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: _SessionRuntime,
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
    return budget.with_correction(await _learn(ctx, runtime, budget.model, sent, server))


@hookimpl
async def post_turn_end(ctx: TurnContext) -> None:
    """The summary checkpoint: learn from the reply's usage, summarize at the watermark."""
    config = _config(ctx.config)
    if config is None:
        return
    config = await resolve_config(ctx, config)
    runtime = _runtime(ctx.session)
    slot = ctx.slot
    sent = runtime.sent.pop(slot.id, None)
    usage = ctx.response.usage if ctx.response is not None else None
    if sent is not None and usage is not None:
        await _learn(ctx, runtime, turn_model(ctx), sent, usage.input_tokens)
    correction = await _correction(ctx, runtime)
    model = turn_model(ctx)
    tokens = await measure(ctx, config, counter_for(ctx, model), correction.factor(model))
    runtime.last_context[slot.id] = tokens
    pending = runtime.pending.get(slot.id)
    if pending is not None and not pending.done():
        return
    attempted = ctx.extra.get(_ATTEMPTED_KEY)
    if isinstance(attempted, set) and slot.id in attempted:
        return  # this turn already tried before a call
    state = await _load_state(ctx, runtime)
    covered, _ = _covered_and_previous(slot, state)
    if config.trigger == "cumulative":
        if not (await cumulative_due(ctx, config) or window_drops(slot, covered)):
            return
    elif not (
        is_due(config, state, ctx.turn_index, tokens)
        or messages_due(config, state, ctx.turn_index, unsummarized(slot, covered))
        or window_drops(slot, covered)
    ):
        return
    await _warm_counts(ctx, config, state)
    plan = _plan(ctx, config, state, correction)
    if plan is None:
        return
    runtime.states[slot.id] = attrs.evolve(state, last_attempt_turn=ctx.turn_index)
    if config.mode == "inline":
        await _summarize_quietly(ctx, config, runtime, plan, "watermark")
    else:
        work = _catch_up(ctx, config, runtime, plan, "watermark")
        runtime.pending[slot.id] = ctx.session.run_in_background(work)


@hookimpl
async def compact_session(ctx: TurnContext, instructions: str | None) -> SummaryInfo | None:
    """Summarize now what ``ctx.slot`` can give up: :meth:`AgentSession.compact`.

    Ignores the watermark and the debounce, keeps the recent tail verbatim
    and sizes the summary requests to the window like any summary. Waits for
    a pending background summary first. Raises :class:`CompactError` for a
    Full slot, when nothing lies before the recent tail, and when the summary
    fails (chained), is vetoed or is dropped.
    """
    config = _config(ctx.config)
    if config is None:
        return None
    config = await resolve_config(ctx, config)
    slot = ctx.slot
    if slot.config.focused is None:
        raise CompactError(
            f"slot {slot.id!r} is in Full mode, which sends every message and is never "
            "summarized: switch it to a FocusedConfig (session.set_mode) to compact it"
        )
    runtime = _runtime(ctx.session)
    pending = runtime.pending.get(slot.id)
    if pending is not None and not pending.done():
        await asyncio.shield(pending)
    state = await _load_state(ctx, runtime)
    await _warm_counts(ctx, config, state)
    plan = _plan(ctx, config, state, await _correction(ctx, runtime))
    if plan is None:
        raise CompactError(
            f"nothing to compact in slot {slot.id!r}: every message the summary does not "
            f"cover yet is within the recent tail kept verbatim ({config.recent_budget} tokens, "
            "keep_recent_tokens)"
        )
    runtime.states[slot.id] = attrs.evolve(state, last_attempt_turn=ctx.turn_index)
    try:
        return await _summarize(ctx, config, runtime, plan, "compact", instructions, strict=True)
    except CompactError:
        raise
    except Exception as exc:
        raise CompactError(f"the summary failed: {type(exc).__name__}: {exc}") from exc


async def _catch_up(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: _SessionRuntime,
    plan: _Plan | None,
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
            state = await _load_state(ctx, runtime)
            await _warm_counts(ctx, config, state)
            plan = _plan(ctx, config, state, await _correction(ctx, runtime))
            if plan is None:
                runtime.backlog.pop(ctx.slot.id, None)  # all of it is covered
                return
            if plan.start <= last_start:
                return
        last_start = plan.start
        info = await _summarize_quietly(ctx, config, runtime, plan, reason)
        if info is None or info.covers >= plan.covers:
            return
        plan = None


# -- steps ------------------------------------------------------------------------


async def _load_state(ctx: TurnContext, runtime: _SessionRuntime) -> SummaryState:
    state = runtime.states.get(ctx.slot.id)
    if state is None:
        stored = await ctx.memory.get(state_key(ctx.slot.id))
        state = runtime.states[ctx.slot.id] = state_from_json(stored, slot_id=ctx.slot.id)
    return state


def _covered_and_previous(slot: ContextSlot, state: SummaryState) -> tuple[int, str | None]:
    focused = slot.config.focused
    if focused is not None:
        return focused.summary_covers, focused.summary_override
    return state.covered, state.summary


async def _warm_counts(ctx: TurnContext, config: SummaryConfig, state: SummaryState) -> None:
    """Load the messages a plan reads and count them off the event loop.

    A resumed slot holds only the messages its mode sends; what a plan
    reads before that window (all of it for the ``"full"`` strategy) is
    read from the store first, so the plan made next finds it loaded.
    """
    covered, _ = _covered_and_previous(ctx.slot, state)
    await ctx.slot.ensure_loaded(ctx.store, 0 if config.strategy == "full" else covered)
    counter = counter_for(ctx, turn_model(ctx))
    for message in ctx.slot.messages[covered:]:
        await counter.count_message_async(message)


def _plan(
    ctx: TurnContext,
    config: SummaryConfig,
    state: SummaryState,
    correction: TokenCorrection,
    *,
    recent: int | None = None,
) -> _Plan | None:
    """The next summary of ``ctx.slot``, or None when nothing lies before the recent tail.

    ``recent``: local tokens of the tail kept verbatim (default: ``keep_recent_tokens``).
    """
    slot = ctx.slot
    covered, previous = _covered_and_previous(slot, state)
    model = turn_model(ctx)
    if recent is None:
        recent = correction.unapply(model, config.recent_budget)
    tail = recent_tail_start(slot.messages, covered, recent, counter_for(ctx, model))
    tail = cap_tail(slot.messages, tail, tail_cap(config, slot))
    if config.strategy == "full":
        # The original rule: the whole history, front-truncated when formatted.
        start, end, previous = 0, slot.message_count(), None
    else:
        start, end = covered, tail
    if end <= start or not unpinned(slot, start, end):
        return None
    return _Plan(
        slot=slot,
        turn_index=ctx.turn_index,
        base_generation=state.generation,
        previous=previous,
        start=start,
        end=end,
        covers=max(covered, tail),
        messages=unpinned(slot, start, end),
        model=summary_model(ctx, config),
    )


async def _summarize_quietly(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: _SessionRuntime,
    plan: _Plan,
    reason: SummaryReason,
) -> SummaryInfo | None:
    """An automatic summary: a failure is logged and recorded by :func:`_summarize`, not raised."""
    try:
        info = await _summarize(ctx, config, runtime, plan, reason)
    except Exception:  # a summary must never break a session
        return None
    if info is not None and info.covers < plan.covers:
        runtime.backlog[plan.slot.id] = plan.covers - info.covers
    elif info is not None:
        runtime.backlog.pop(plan.slot.id, None)
    return info


async def _summarize(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: _SessionRuntime,
    plan: _Plan,
    reason: SummaryReason,
    instructions: str | None = None,
    *,
    strict: bool = False,
) -> SummaryInfo | None:
    """Make the summary of ``plan``, apply it and return it, firing the summary hooks.

    ``before_summary`` may edit the prompt and messages, or veto the summary
    (None is returned; with ``strict``, :class:`CompactError` is raised).
    A failure is logged, recorded (:func:`_record_failure`), reported to
    ``on_summary_error`` and raised. A summary dropped because a newer one
    was applied meanwhile returns None (``strict``: raises CompactError).

    The returned summary may cover less than ``plan`` (see
    ``max_summary_calls_per_turn``): its ``covers`` says how much.

    A ``CancelledError`` raised by the summary call itself (not a
    cancellation of the task running this) counts as a failed attempt like
    any other error. A cancellation of the task (the session closed with
    ``aclose(cancel_pending=True)``, or a turn cancelled while it summarizes
    inline) propagates, and nothing of the summary is stored. What the
    summary calls cost is stored with the summary, or with the session's
    next write when the summary is not applied.
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
            "summary of session %s turn %d vetoed by a before_summary hook",
            ctx.session_id,
            plan.turn_index,
        )
        if strict:
            raise CompactError("a before_summary hook vetoed the summary; nothing was changed")
        return None
    version = plan.slot.version
    spent = CostTracker()
    started = time.perf_counter()
    tokens_before = await _context_tokens(ctx, plan.slot.id)
    try:
        if request.prompt != config.summary_prompt:
            config = attrs.evolve(config, summary_prompt=request.prompt)
        plan = attrs.evolve(plan, messages=tuple(request.messages))
        summary, plan = await _isolated(_make_summary(attrs.evolve(ctx, cost=spent), config, plan))
        usage = spent.total("summary") if spent.breakdown() else None
        applied = await _apply(ctx, config, runtime, plan, summary, version, usage)
    except Exception as exc:
        logger.error(
            "summary failed (session=%s, slot=%s, turn=%d): %s: %s",
            ctx.session_id,
            plan.slot.id,
            plan.turn_index,
            type(exc).__name__,
            exc,
            exc_info=logger.isEnabledFor(logging.DEBUG),
        )
        await _record_failure(ctx, runtime, plan, spent)
        await summary_error(ctx, request, exc)
        raise
    except asyncio.CancelledError:
        # The summary is abandoned, but its finished calls were paid for: store their cost
        # (the write itself is out of the cancellation's reach), so a resume counts it too.
        await _store_spent(ctx, spent, "the cost of an abandoned summary")
        raise
    if not applied:
        if strict:
            raise CompactError("a newer summary was applied meanwhile; this one was dropped")
        return None
    info = SummaryInfo(
        slot_id=plan.slot.id,
        turn_index=plan.turn_index,
        reason=reason,
        summary=summary,
        start=plan.start,
        end=plan.end,
        covers=plan.covers,
        tokens_before=tokens_before,
        tokens_after=await _context_tokens(ctx, plan.slot.id),
        usage=usage,
        duration=time.perf_counter() - started,
        model=plan.model,
    )
    await after_summary(ctx, info)
    return info


async def _context_tokens(ctx: TurnContext, slot_id: str) -> int:
    """Tokens of the context slot ``slot_id`` sends now, counted for the turn model."""
    slot = await ctx.session.get_slot(slot_id)
    return await slot.count_context(counter_for(ctx, turn_model(ctx)))


async def _store_spent(
    ctx: TurnContext,
    spent: CostTracker,
    what: str,
    data: dict[str, JsonValue] | None = None,
    lock: asyncio.Lock | None = None,
) -> None:
    """Store what a summary's calls cost, with ``data``, in one write (under ``lock``).

    When that write fails the cost is kept in memory (``ctx.cost``) and the
    failure logged as "could not store ``what``".
    """
    breakdown = spent.breakdown()
    if not breakdown and not data:
        return
    usage = spent.total("summary") if breakdown else None
    try:
        async with lock or contextlib.nullcontext():
            await ctx.session.record_usage(usage, "summary", data=data)
    except Exception as exc:
        for purpose, part in breakdown.items():
            ctx.cost.add(part, purpose)
        logger.error("could not store %s (session=%s): %s", what, ctx.session_id, exc)


async def _isolated(work: Coroutine[Any, Any, T]) -> T:
    """Await ``work``; its own ``CancelledError`` becomes :class:`SummaryFailedError`.

    Only a cancellation of the current task propagates as ``CancelledError``:
    told apart by the task's ``cancelling()`` count (Python 3.11+), or on
    3.10 by running ``work`` as a shielded child task.
    """
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    if cancelling is not None:
        try:
            return await work
        except asyncio.CancelledError:
            if cancelling():
                raise
            raise SummaryFailedError("the summary call was cancelled") from None
    child = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(child)
    except asyncio.CancelledError:
        if not child.done():  # the current task is being cancelled
            child.cancel()
            raise
        if child.cancelled():
            raise SummaryFailedError("the summary call was cancelled") from None
        raise


async def _make_summary(ctx: TurnContext, config: SummaryConfig, plan: _Plan) -> tuple[str, _Plan]:
    """The summary of ``plan``, made in requests that each fit the window, and what it covers.

    The plan returned is ``plan`` cut to what the summary covers when the
    backlog needed more than ``max_summary_calls_per_turn`` calls. A summary
    applied to a Focused slot must leave a smaller context than the one it
    replaces, or it raises :class:`SummaryFailedError`.
    """
    if config.strategy == "full":
        reply = await _request_summary(ctx, config, plan, plan.messages, MAX_CONVERSATION_CHARS)
        summary = reply.text
    else:
        raw = unpinned_indices(plan.slot, plan.start, plan.end)
        # Messages edited by a before_summary hook no longer map to raw indices:
        # they are summarized whole, however many calls that takes.
        capped = len(raw) == len(plan.messages)
        max_calls = config.max_summary_calls_per_turn if capped else None
        summary, covered = await _summarize_in_chunks(ctx, config, plan, max_calls)
        if covered < len(plan.messages):
            # The rest of the backlog is left for the next summary.
            rest = raw[covered]
            plan = attrs.evolve(plan, end=rest, covers=rest, messages=plan.messages[:covered])
    summary = await _check_retention(ctx, config, plan, summary)
    await _check_shrinks(ctx, plan, summary)
    return summary, plan


async def _summarize_in_chunks(
    ctx: TurnContext, config: SummaryConfig, plan: _Plan, max_calls: int | None
) -> tuple[str, int]:
    """The summary of as much of ``plan`` as ``max_calls`` calls cover (None: all of it).

    Returns the summary and how many of ``plan.messages`` it covers. One
    chunk is summarized with the previous summary in one call; more chunks
    are summarized concurrently (:data:`CHUNK_CONCURRENCY` at once, after
    the first, whose usage calibrates the token correction) and merged with
    the previous summary by one more call. Without a cap, rounds of that
    follow each other until every message is covered.
    """
    previous = plan.previous
    covered = 0
    while True:
        summary, count = await _summary_round(
            ctx, config, plan, previous, plan.messages[covered:], max_calls
        )
        covered += count
        previous = summary
        if max_calls is not None or covered >= len(plan.messages):
            return summary, covered


async def _summary_round(
    ctx: TurnContext,
    config: SummaryConfig,
    plan: _Plan,
    previous: str | None,
    messages: Sequence[Message],
    max_calls: int | None,
) -> tuple[str, int]:
    """One round: the summary of ``previous`` and a head of ``messages``, and its length."""
    label = _label(plan.slot)
    fit = await _fit(ctx, config, plan)
    head = [Message.system(f"{label} {previous}")] if previous else []
    budget = _input_budget(config, head, fit)
    # The merge call carries the previous summary and every part: no more
    # parts than the input budget holds at max_summary_tokens each.
    parts_fit = budget // (config.max_summary_tokens + _PART_OVERHEAD_TOKENS)
    max_chunks = max(1, parts_fit if max_calls is None else min(max_calls - 1, parts_fit))
    spans = plan_chunks(
        messages, budget, fit.counter, config.max_tool_result_chars, max_chunks=max_chunks
    )
    if len(spans) == 1 or max_chunks == 1:
        start, end = spans[0]
        reply = await _request_summary(ctx, config, plan, [*head, *messages[start:end]], None)
        return reply.text, end
    limit = asyncio.Semaphore(CHUNK_CONCURRENCY)

    async def part(start: int, end: int) -> str:
        async with limit:
            reply = await _request_summary(ctx, config, plan, messages[start:end], None)
            return reply.text

    # The first part alone, so the token correction learned from its usage
    # sizes the others; then the rest at once.
    first = await part(*spans[0])
    parts = [first, *await asyncio.gather(*(part(start, end) for start, end in spans[1:]))]
    merged = [
        Message.user(f"{label} (part {number} of {len(parts)}) {text}")
        for number, text in enumerate(parts, 1)
    ]
    reply = await _request_summary(ctx, config, plan, [*head, *merged], None)
    return reply.text, spans[-1][1]


async def _fit(ctx: TurnContext, config: SummaryConfig, plan: _Plan) -> SummaryFit:
    model = plan.model or counting_model(ctx, config)
    correction = await _correction(ctx, _runtime(ctx.session))
    return SummaryFit(counter_for(ctx, model), correction, model)


async def _request_summary(
    ctx: TurnContext,
    config: SummaryConfig,
    plan: _Plan,
    messages: Sequence[Message],
    max_chars: int | None,
) -> SummaryReply:
    """One summary request; a server's overflow refusal teaches the correction, then one retry."""
    runtime = _runtime(ctx.session)
    for attempt in range(2):
        fit = await _fit(ctx, config, plan)
        try:
            reply = await request_summary(
                summary_provider(ctx, config),
                config,
                messages,
                model=plan.model,
                max_chars=max_chars,
                fit=fit,
            )
        except SummaryOverflowError as exc:
            if attempt:
                raise
            server = overflow_prompt_tokens(exc.error, config.window, exc.max_tokens)
            await _learn(ctx, runtime, fit.model, exc.local_tokens, server)
            continue
        ctx.cost.add(reply.usage, purpose="summary")
        if reply.reported:
            await _learn(ctx, runtime, fit.model, reply.request_tokens, reply.usage.input_tokens)
        return reply
    raise AssertionError("unreachable")  # pragma: no cover


async def _check_retention(
    ctx: TurnContext, config: SummaryConfig, plan: _Plan, summary: str
) -> str:
    """Apply ``config.retention_check`` to ``summary``: append or log what it left out."""
    if config.retention_check == "off":
        return summary
    previous = None if config.strategy == "full" else plan.previous
    missing = await asyncio.to_thread(
        missing_identifiers, summary, previous, plan.messages, config.max_tool_result_chars
    )
    if not missing:
        return summary
    if config.retention_check == "log":
        log_missing(ctx.session_id, missing)
        return summary
    counter = (await _fit(ctx, config, plan)).counter
    return append_missing(summary, missing, counter, config.max_summary_tokens)


async def _check_shrinks(ctx: TurnContext, plan: _Plan, summary: str) -> None:
    focused = plan.slot.config.focused
    if focused is None:
        return
    slot = plan.slot
    after = render_context(
        slot.system_prompt,
        slot.messages,
        attrs.evolve(
            slot.config,
            mode=attrs.evolve(focused, summary_override=summary, summary_covers=plan.covers),
        ),
    )
    counter = counter_for(ctx, turn_model(ctx))
    before_tokens = await slot.count_context(counter)
    after_tokens = await counter.count_messages_async(after)
    if after_tokens >= before_tokens:
        raise SummaryFailedError(
            f"the summary would leave a context of {after_tokens} tokens, not smaller than "
            f"the {before_tokens} it replaces: not applied"
        )


def _label(slot: ContextSlot) -> str:
    focused = slot.config.focused
    return focused.summary_label if focused is not None else DEFAULT_SUMMARY_LABEL


def _input_budget(config: SummaryConfig, head: list[Message], fit: SummaryFit) -> int:
    """Local tokens of conversation one summary request may carry."""
    room = fit.correction.unapply(fit.model, config.window - config.summary_reserve)
    fixed = fit.counter.count_text(config.summary_prompt)
    fixed += sum(fit.counter.count_text(message.text) for message in head)
    return max(room - fixed - _INPUT_MARGIN_TOKENS, 64)


async def _apply(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: _SessionRuntime,
    plan: _Plan,
    summary: str,
    version: int,
    usage: Usage | None,
) -> bool:
    """Write the summary, its snapshot, the session state and the summary's cost at once.

    Returns False when the summary was dropped for a newer one.

    The write goes through :meth:`AgentSession.write_slot_config`, conditional
    on ``version``, the slot's config version the plan was made from: when
    another summary (or a mode change) was applied since, the store refuses
    it atomically and the summary is dropped.
    """
    slot = plan.slot
    async with runtime.lock:
        # A Focused slot's config holds the summary; the state keeps its own copy
        # only for a slot without one. The memory_key snapshot is the public copy.
        state = SummaryState(
            last_summary_turn=plan.turn_index,
            last_attempt_turn=plan.turn_index,
            covered=plan.covers,
            generation=plan.base_generation + 1,
            summary=summary if slot.config.focused is None else None,
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
                focused, summary_override=summary, summary_covers=plan.covers
            )
            new_config = attrs.evolve(slot.config, mode=new_focused)
        try:
            await ctx.session.write_slot_config(
                slot.id,
                new_config,
                expected_version=version,
                data=data,
                usage=usage,
                purpose="summary",
            )
        except ConflictError:
            logger.info(
                "summary of session %s turn %d dropped: a newer summary was applied meanwhile",
                ctx.session_id,
                plan.turn_index,
            )
            stored = await ctx.memory.get(state_key(slot.id))
            runtime.states[slot.id] = state_from_json(stored, slot_id=slot.id)
            if usage is not None:
                await ctx.session.record_usage(usage, "summary")
            return False
        runtime.states[slot.id] = state
        logger.info(
            "summary written (session=%s, slot=%s, turn=%d): covers messages 0..%d",
            ctx.session_id,
            slot.id,
            plan.turn_index,
            plan.covers - 1,
        )
        return True


async def _record_failure(
    ctx: TurnContext, runtime: _SessionRuntime, plan: _Plan, spent: CostTracker
) -> None:
    """Persist the failed attempt, and what its calls cost, in one store write.

    The attempt is stored so the debounce window holds across a resume; the
    cost so that a resumed session counts the same tokens as this one.
    """
    slot_id = plan.slot.id
    state = attrs.evolve(
        runtime.states.get(slot_id, SummaryState()), last_attempt_turn=plan.turn_index
    )
    runtime.states[slot_id] = state
    data: dict[str, JsonValue] = {state_key(slot_id): state_to_json(state)}
    what = f"the failed summary attempt of turn {plan.turn_index}"
    await _store_spent(ctx, spent, what, data, runtime.lock)
