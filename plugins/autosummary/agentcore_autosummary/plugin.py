"""The hook implementations: the summary checkpoint after every turn."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import attrs
import pluggy

from agentcore import (
    AgentConfig,
    AgentSession,
    CompactError,
    ContextSlot,
    ModelCallInfo,
    PluginSetting,
    SlotConfig,
    SummaryInfo,
    TurnContext,
    hookimpl,
)
from agentcore_autosummary import hookspecs
from agentcore_autosummary.budget import (
    counter_for,
    turn_model,
)
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.fitting import ATTEMPTED_KEY, fit_request
from agentcore_autosummary.pins import check_pins_fit
from agentcore_autosummary.pipeline import catch_up, summarize, summarize_quietly
from agentcore_autosummary.plan import last_exchange_start, make_plan, warm_counts
from agentcore_autosummary.provider import check_summary_provider
from agentcore_autosummary.runtime import (
    SETTING,
    covered_and_previous,
    enabled_config,
    learn,
    load_state,
    runtime_of,
    session_correction,
)
from agentcore_autosummary.seed_rule import cumulative_due
from agentcore_autosummary.sent import record_sent
from agentcore_autosummary.tails import (
    messages_due,
    unsummarized,
    window_drops,
)
from agentcore_autosummary.trigger import is_due, may_retry, measure
from agentcore_autosummary.windows import effective_config, known_config

logger = logging.getLogger("agentcore.autosummary")

# -- hooks ------------------------------------------------------------------------


@hookimpl
def register_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Declare the summary hooks (:mod:`agentcore_autosummary.hookspecs`)."""
    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def register_settings() -> Sequence[PluginSetting]:
    """Declare ``summary_config``: a :class:`SummaryConfig` or a dict of its fields.

    At build, a ``summary_provider`` name is checked against the providers
    the bundle's plugins register (:func:`check_summary_provider`).
    """
    return [
        PluginSetting(
            SETTING,
            SummaryConfig.coerce,
            "Automatic conversation summaries (autosummary).",
            check=check_summary_provider,
        )
    ]


@hookimpl
def summary_memory_key(config: AgentConfig) -> str | None:
    """The session-data key of the summary snapshot, when summaries are enabled."""
    summary_config = enabled_config(config)
    return None if summary_config is None else summary_config.memory_key


@hookimpl
def check_slot_config(session: AgentSession, slot: ContextSlot, config: SlotConfig) -> None:
    """Refuse pins that cannot fit ``max_context_tokens`` (see :func:`check_pins_fit`)."""
    summary_config = enabled_config(session.bundle.config)
    if summary_config is not None:
        summary_config = known_config(session.bundle.provider, summary_config)
        check_pins_fit(session, slot, config, summary_config)


@hookimpl
async def before_model_call(ctx: TurnContext) -> None:
    """Keep the request about to be sent inside ``max_context_tokens`` (see :func:`fit_request`)."""
    await fit_request(ctx)


@hookimpl
def after_model_call(ctx: TurnContext, call: ModelCallInfo) -> None:
    """Remember the turn request just sent, the prefix a summary request reuses (sent.py)."""
    if enabled_config(ctx.config) is not None:
        record_sent(ctx, call)


@hookimpl
async def post_turn_end(ctx: TurnContext) -> None:
    """The summary checkpoint: learn from the reply's usage, summarize at the watermark."""
    config = enabled_config(ctx.config)
    if config is None:
        return
    config = await effective_config(ctx, config)
    runtime = runtime_of(ctx.session)
    slot = ctx.slot
    sent = runtime.sent.pop(slot.id, None)
    usage = ctx.response.usage if ctx.response is not None else None
    if sent is not None and usage is not None:
        await learn(ctx, runtime, turn_model(ctx), sent, usage.input_tokens)
    correction = await session_correction(ctx, runtime)
    model = turn_model(ctx)
    tokens = await measure(ctx, config, counter_for(ctx, model), correction.factor(model))
    runtime.last_context[slot.id] = tokens
    pending = runtime.pending.get(slot.id)
    if pending is not None and not pending.done():
        return
    attempted = ctx.extra.get(ATTEMPTED_KEY)
    if isinstance(attempted, set) and slot.id in attempted:
        return  # this turn already tried before a call
    state = await load_state(ctx, runtime)
    covered, _ = covered_and_previous(slot, state)
    if config.trigger == "cumulative":
        if not (await cumulative_due(ctx, config) or window_drops(slot, covered)):
            return
    elif not may_retry(state, ctx.turn_index):
        return  # summaries keep failing: wait out the backoff
    elif not (
        is_due(config, state, ctx.turn_index, tokens)
        or messages_due(config, state, ctx.turn_index, unsummarized(slot, covered))
        or window_drops(slot, covered)
    ):
        return
    await warm_counts(ctx, config, state)
    plan = make_plan(ctx, config, state, correction)
    if plan is None:
        return
    runtime.states[slot.id] = attrs.evolve(state, last_attempt_turn=ctx.turn_index)
    if config.mode == "inline":
        await summarize_quietly(ctx, config, runtime, plan, "watermark")
    else:
        work = catch_up(ctx, config, runtime, plan, "watermark")
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
    config = enabled_config(ctx.config)
    if config is None:
        return None
    config = await effective_config(ctx, config)
    slot = ctx.slot
    if slot.config.focused is None:
        raise CompactError(
            f"slot {slot.id!r} is in Full mode, which sends every message and is never "
            "summarized: switch it to a FocusedConfig (session.set_mode) to compact it"
        )
    runtime = runtime_of(ctx.session)
    pending = runtime.pending.get(slot.id)
    if pending is not None and not pending.done():
        await asyncio.shield(pending)
    state = await load_state(ctx, runtime)
    await warm_counts(ctx, config, state)
    correction = await session_correction(ctx, runtime)
    plan = make_plan(ctx, config, state, correction)
    if plan is None:
        # Everything lies in the verbatim tail: a manual compact folds all but the last
        # exchange (the last user message and what answered it).
        covered, _ = covered_and_previous(slot, state)
        last = last_exchange_start(slot.messages, covered)
        plan = make_plan(ctx, config, state, correction, keep_from=last)
    if plan is None:
        raise CompactError(
            f"nothing to compact in slot {slot.id!r}: beside the last exchange and the pinned "
            "messages, every message is already covered by the summary"
        )
    runtime.states[slot.id] = attrs.evolve(state, last_attempt_turn=ctx.turn_index)
    try:
        return await summarize(ctx, config, runtime, plan, "compact", instructions, strict=True)
    except CompactError:
        raise
    except Exception as exc:
        raise CompactError(f"the summary failed: {type(exc).__name__}: {exc}") from exc
