"""The hook implementations: the summary checkpoint after every turn."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Coroutine, Sequence
from typing import Any

import attrs
from attrs import define, field, frozen

from agentcore import (
    AgentConfig,
    AgentSession,
    ConflictError,
    ContextSlot,
    CostTracker,
    FocusedConfig,
    Message,
    PluginSetting,
    TurnContext,
    Usage,
    hookimpl,
)
from agentcore.slots import DEFAULT_SUMMARY_LABEL
from agentcore.tokens import count_text_tokens, count_tokens, get_token_counter
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.formatting import MAX_CONVERSATION_CHARS
from agentcore_autosummary.planner import chunk_end, recent_tail_start
from agentcore_autosummary.state import SummaryState, state_from_json, state_key, state_to_json
from agentcore_autosummary.summarizer import SummaryFailedError, request_summary
from agentcore_autosummary.trigger import is_due, measure

logger = logging.getLogger("agentcore.autosummary")

SETTING = "summary_config"
"""The builder setting that enables the plugin."""

_INPUT_MARGIN_TOKENS = 64

_WARNED_KEY = "autosummary.overflow_warned"


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
async def before_model_call(ctx: TurnContext) -> None:
    """Keep the request about to be sent inside ``max_context_tokens``.

    When the request would not fit, wait for a pending background summary;
    if it still would not fit and a summary is allowed (the debounce window
    has passed, and this turn has not tried yet), summarize now, before the
    call. Only Focused slots can shrink, so Full slots are left alone.
    """
    config = _config(ctx.config)
    if config is None or ctx.slot.config.focused is None:
        return
    tokens = _request_tokens(ctx)
    if tokens < config.max_context_tokens:
        return
    runtime = _runtime(ctx.session)
    pending = runtime.pending.get(ctx.slot.id)
    if pending is not None and not pending.done():
        logger.info(
            "session %s turn %d waits for the pending summary to stay within %d tokens",
            ctx.session_id,
            ctx.turn_index,
            config.max_context_tokens,
        )
        await asyncio.shield(pending)
        tokens = _request_tokens(ctx)
        if tokens < config.max_context_tokens:
            return
    state = await _load_state(ctx, runtime)
    if state.last_attempt_turn == ctx.turn_index or not is_due(
        config, state, ctx.turn_index, tokens
    ):
        return
    plan = _plan(ctx, config, state)
    if plan is None:
        if ctx.extra.get(_WARNED_KEY):
            return
        ctx.extra[_WARNED_KEY] = True
        logger.warning(
            "session %s turn %d: the request exceeds %d tokens and nothing is left to summarize",
            ctx.session_id,
            ctx.turn_index,
            config.max_context_tokens,
        )
        return
    runtime.states[ctx.slot.id] = attrs.evolve(state, last_attempt_turn=ctx.turn_index)
    await _summarize(ctx, config, runtime, plan)


def _request_tokens(ctx: TurnContext) -> int:
    """The counted size of the request a turn is about to send."""
    return count_tokens([*ctx.slot.load_messages(), *ctx.messages], ctx.session.agent.model)


@hookimpl
async def post_turn_end(ctx: TurnContext) -> None:
    """The summary checkpoint: summarize when the watermark is reached."""
    config = _config(ctx.config)
    if config is None:
        return
    runtime = _runtime(ctx.session)
    slot = ctx.slot
    tokens = measure(ctx, config)
    runtime.last_context[slot.id] = tokens
    pending = runtime.pending.get(slot.id)
    if pending is not None and not pending.done():
        return
    state = await _load_state(ctx, runtime)
    if not is_due(config, state, ctx.turn_index, tokens):
        return
    plan = _plan(ctx, config, state)
    if plan is None:
        return
    runtime.states[slot.id] = attrs.evolve(state, last_attempt_turn=ctx.turn_index)
    work = _summarize(ctx, config, runtime, plan)
    if config.mode == "inline":
        await work
    else:
        runtime.pending[slot.id] = ctx.session.run_in_background(work)


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


def _plan(ctx: TurnContext, config: SummaryConfig, state: SummaryState) -> _Plan | None:
    slot = ctx.slot
    covered, previous = _covered_and_previous(slot, state)
    counter = get_token_counter(ctx.session.agent.model)
    tail = recent_tail_start(slot.messages, covered, config.recent_budget, counter)
    if config.strategy == "full":
        # The original rule: the whole history, front-truncated when formatted.
        start, end, previous = 0, slot.message_count(), None
    else:
        start, end = covered, tail
    if end <= start:
        return None
    return _Plan(
        slot=slot,
        turn_index=ctx.turn_index,
        base_generation=state.generation,
        previous=previous,
        start=start,
        end=end,
        covers=max(covered, tail),
        messages=tuple(slot.raw_messages(start, end)),
        model=config.summary_model or ctx.session.agent.model,
    )


async def _summarize(
    ctx: TurnContext, config: SummaryConfig, runtime: _SessionRuntime, plan: _Plan
) -> None:
    """Make the summary of ``plan`` and apply it; any failure is logged, never raised.

    A ``CancelledError`` raised by the summary call itself (not a
    cancellation of the task running this) counts as a failed attempt like
    any other error. A cancellation of the task (the session closed with
    ``aclose(cancel_pending=True)``, or a turn cancelled while it summarizes
    inline) propagates, and nothing of the summary is stored. What the
    summary calls cost is stored with the summary, or with the session's
    next write when the summary is not applied.
    """
    version = plan.slot.version
    spent = CostTracker()
    try:
        summary = await _isolated(_make_summary(attrs.evolve(ctx, cost=spent), config, plan))
        usage = spent.total("summary") if spent.breakdown() else None
        await _apply(ctx, config, runtime, plan, summary, version, usage)
    except Exception as exc:  # a summary must never break a session
        for purpose, usage in spent.breakdown().items():
            ctx.cost.add(usage, purpose)
        logger.error(
            "summary failed (session=%s, slot=%s, turn=%d): %s: %s",
            ctx.session_id,
            plan.slot.id,
            plan.turn_index,
            type(exc).__name__,
            exc,
            exc_info=logger.isEnabledFor(logging.DEBUG),
        )
        await _record_failure(ctx, runtime, plan)
    except asyncio.CancelledError:
        for purpose, usage in spent.breakdown().items():
            ctx.cost.add(usage, purpose)
        raise


async def _isolated(work: Coroutine[Any, Any, str]) -> str:
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


async def _make_summary(ctx: TurnContext, config: SummaryConfig, plan: _Plan) -> str:
    if config.strategy == "full":
        text, usage = await request_summary(
            ctx.provider,
            config,
            plan.messages,
            model=plan.model,
            max_chars=MAX_CONVERSATION_CHARS,
        )
        ctx.cost.add(usage, purpose="summary")
        return text
    label = _label(plan.slot)
    counter = get_token_counter(ctx.session.agent.model)
    previous = plan.previous
    start = 0
    while start < len(plan.messages):
        head = [Message.system(f"{label} {previous}")] if previous else []
        budget = _input_budget(config, head, plan.model)
        end = chunk_end(
            plan.messages, start, len(plan.messages), budget, counter, config.max_tool_result_chars
        )
        previous, usage = await request_summary(
            ctx.provider,
            config,
            [*head, *plan.messages[start:end]],
            model=plan.model,
            max_chars=None,
        )
        ctx.cost.add(usage, purpose="summary")
        start = end
    assert previous is not None
    return previous


def _label(slot: ContextSlot) -> str:
    focused = slot.config.focused
    return focused.summary_label if focused is not None else DEFAULT_SUMMARY_LABEL


def _input_budget(config: SummaryConfig, head: list[Message], model: str | None) -> int:
    """Tokens of conversation one summary request may carry."""
    reply = min(config.max_summary_tokens, config.max_context_tokens // 4)
    fixed = count_text_tokens(config.summary_prompt, model) + reply
    fixed += sum(count_text_tokens(message.text, model) for message in head)
    return max(config.max_context_tokens - fixed - _INPUT_MARGIN_TOKENS, 256)


async def _apply(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: _SessionRuntime,
    plan: _Plan,
    summary: str,
    version: int,
    usage: Usage | None,
) -> None:
    """Write the summary, its snapshot, the session state and the summary's cost at once.

    The write goes through :meth:`AgentSession.write_slot_config`, conditional
    on ``version``, the slot's config version the plan was made from: when
    another summary (or a mode change) was applied since, the store refuses
    it atomically and the summary is dropped.
    """
    slot = plan.slot
    async with runtime.lock:
        state = SummaryState(
            last_summary_turn=plan.turn_index,
            last_attempt_turn=plan.turn_index,
            covered=plan.covers,
            generation=plan.base_generation + 1,
            summary=summary,
        )
        data = {config.memory_key: summary, state_key(slot.id): state_to_json(state)}
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
                ctx.cost.add(usage, "summary")
            return
        runtime.states[slot.id] = state
        logger.info(
            "summary written (session=%s, slot=%s, turn=%d): covers messages 0..%d",
            ctx.session_id,
            slot.id,
            plan.turn_index,
            plan.covers - 1,
        )


async def _record_failure(ctx: TurnContext, runtime: _SessionRuntime, plan: _Plan) -> None:
    """Persist the failed attempt so the debounce window holds across a resume."""
    slot_id = plan.slot.id
    state = attrs.evolve(
        runtime.states.get(slot_id, SummaryState()), last_attempt_turn=plan.turn_index
    )
    runtime.states[slot_id] = state
    try:
        async with runtime.lock:
            await ctx.memory.set(state_key(slot_id), state_to_json(state))
    except Exception as exc:
        logger.error(
            "could not record the failed summary attempt (session=%s, turn=%d): %s",
            ctx.session_id,
            plan.turn_index,
            exc,
        )
