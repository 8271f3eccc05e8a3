"""The next summary to make of a slot: what it reads and what it covers."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs
from attrs import frozen

from agentcore import (
    ContextSlot,
    Message,
    TurnContext,
)
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.budget import (
    counter_for,
    turn_model,
)
from agentcore_autosummary.deciding.pins import unpinned
from agentcore_autosummary.deciding.planner import recent_tail_start
from agentcore_autosummary.deciding.tails import (
    cap_tail,
    tail_cap,
)
from agentcore_autosummary.deciding.token_correction import TokenCorrection
from agentcore_autosummary.keeping.runtime import (
    SessionRuntime,
    covered_and_previous,
    covered_of,
    load_state,
    session_correction,
)
from agentcore_autosummary.keeping.state import SummaryState
from agentcore_autosummary.requesting.provider import summary_model

logger = logging.getLogger("agentcore.autosummary")


@frozen
class Plan:
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


async def warm_counts(
    ctx: TurnContext, config: SummaryConfig, state: SummaryState, correction: TokenCorrection
) -> None:
    """Load the messages a plan reads; count the recent tail's off the event loop.

    A resumed slot holds only the messages its mode sends; what a plan
    reads before that window (all of it for the ``"full"`` strategy) is
    read from the store first, so the plan made next finds it loaded.
    :func:`make_plan` walks the recent tail back from the newest message
    (``keep_recent_tokens``, ``correction`` applied): those messages are
    counted here, a long one in a worker thread, as far as that walk reads.
    The messages before the tail are counted when a chunk of the summary
    reads them (:func:`~agentcore_autosummary.deciding.planner.plan_chunks`), so a
    backlog summarized a few chunks a turn is not all counted on the first.
    """
    covered = covered_of(ctx.slot, state)
    await ctx.slot.ensure_loaded(ctx.store, 0 if config.strategy == "full" else covered)
    model = turn_model(ctx)
    counter = counter_for(ctx, model)
    recent = correction.unapply(model, config.recent_budget)
    messages = ctx.slot.messages
    total = 0
    for index in range(len(messages) - 1, covered - 1, -1):
        total += await counter.count_message_async(messages[index])
        if total > recent:
            break


def last_exchange_start(messages: Sequence[Message], start: int) -> int:
    """Raw index of the last user message at or after ``start`` (``start`` if none)."""
    for index in range(len(messages) - 1, start - 1, -1):
        if messages[index].role == "user":
            return index
    return start


def make_plan(
    ctx: TurnContext,
    config: SummaryConfig,
    state: SummaryState,
    correction: TokenCorrection,
    *,
    recent: int | None = None,
    keep_from: int | None = None,
) -> Plan | None:
    """The next summary of ``ctx.slot``, or None when nothing lies before the recent tail.

    ``recent``: local tokens of the tail kept verbatim (default: ``keep_recent_tokens``).
    ``keep_from``: the raw index the verbatim tail starts at, in place of ``recent``.
    """
    slot = ctx.slot
    covered, previous = covered_and_previous(slot, state)
    model = turn_model(ctx)
    if recent is None:
        recent = correction.unapply(model, config.recent_budget)
    if keep_from is not None:
        tail = max(covered, keep_from)
    else:
        tail = recent_tail_start(slot.messages, covered, recent, counter_for(ctx, model))
        tail = cap_tail(slot.messages, tail, tail_cap(config, slot))
    if config.strategy == "full":
        # The original rule: the whole history, front-truncated when formatted.
        start, end, previous = 0, slot.message_count(), None
    else:
        start, end = covered, tail
    if end <= start or not unpinned(slot, start, end):
        return None
    return Plan(
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


@frozen
class Planned:
    """The next summary of a slot, with the state and the correction it was planned from."""

    state: SummaryState
    correction: TokenCorrection
    plan: Plan | None


async def plan_next(ctx: TurnContext, config: SummaryConfig, runtime: SessionRuntime) -> Planned:
    """Plan the next summary of ``ctx.slot``: the prologue every summary attempt shares.

    Reads the slot's summary state and the session's token correction (each
    read from the session data once, then kept in ``runtime``), loads and
    counts what the plan reads (:func:`warm_counts`) and makes the plan
    (:func:`make_plan`). The turn's checkpoint, the window guard, the
    background catch-up and ``compact()`` all start here.
    """
    state = await load_state(ctx, runtime)
    correction = await session_correction(ctx, runtime)
    await warm_counts(ctx, config, state, correction)
    return Planned(state, correction, make_plan(ctx, config, state, correction))


def start_attempt(ctx: TurnContext, runtime: SessionRuntime, state: SummaryState) -> None:
    """Record that a summary attempt of ``ctx.slot`` starts at this turn (for the backoff)."""
    runtime.states[ctx.slot.id] = attrs.evolve(state, last_attempt_turn=ctx.turn_index)
