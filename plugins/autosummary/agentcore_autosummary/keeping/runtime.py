"""What the plugin keeps in memory for a live session, and the stored state it reads."""

from __future__ import annotations

import asyncio
import logging

from attrs import define, field

from agentcore import (
    AgentConfig,
    ContextSlot,
    TurnContext,
)
from agentcore.plugin_api import SessionHandle, StashKey
from agentcore_autosummary.applying.fencing import unfence_summary
from agentcore_autosummary.applying.record import without_record
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.budget import (
    load_correction,
    save_correction,
)
from agentcore_autosummary.deciding.token_correction import TokenCorrection
from agentcore_autosummary.keeping.state import SummaryState, state_from_json, state_key
from agentcore_autosummary.log_names import session_name

logger = logging.getLogger("agentcore.autosummary")

SETTING = "summary_config"
"""The builder setting that enables the plugin."""


@define
class SessionRuntime:
    """What the plugin keeps in memory for one live session."""

    lock: asyncio.Lock = field(factory=asyncio.Lock)
    states: dict[str, SummaryState] = field(factory=dict)
    pending: dict[str, asyncio.Task[None]] = field(factory=dict)
    correction: TokenCorrection | None = None
    sent: dict[str, int] = field(factory=dict)
    """Per slot: the local count of the last turn request sent."""
    backlog: dict[str, int] = field(factory=dict)
    """Per slot: messages the last capped summary left uncovered (see ``leave_out_oldest``)."""
    served: dict[str, int] | None = None
    """The served windows learned for this session, by model (None: not read yet)."""
    why: dict[str, str] = field(factory=dict)
    """Per slot: why the last automatic summary made no room, for the degraded request's log."""
    told_full: set[str] = field(factory=set)
    """Slots whose Full mode, chosen by the app, the plugin has warned about (once each)."""
    waited_out: dict[str, asyncio.Task[None]] = field(factory=dict)
    """Per slot: the pending summary a turn stopped waiting for (later turns do not wait)."""
    told_server: bool = False
    """Whether the plugin has warned that the server does not compact (once a session)."""
    turn_starts: dict[str, list[tuple[int, int]]] = field(factory=dict)
    """Per slot: ``(first raw index, turn)`` of the turns this live session saw stored,
    the newest :data:`KEPT_TURN_STARTS` (see :func:`turn_span`)."""


KEPT_TURN_STARTS = 1024
"""The most turn starts a live session remembers per slot."""


def note_turn_start(ctx: TurnContext, runtime: SessionRuntime) -> None:
    """Remember where the turn just stored starts in its slot (``runtime.turn_starts``)."""
    first = ctx.slot.message_count() - len(ctx.messages)
    if first < 0:
        return
    starts = runtime.turn_starts.setdefault(ctx.slot.id, [])
    if starts and starts[-1][0] >= first:
        return
    starts.append((first, ctx.turn_index))
    if len(starts) > KEPT_TURN_STARTS:
        del starts[: len(starts) - KEPT_TURN_STARTS]


def turn_span(
    runtime: SessionRuntime, slot_id: str, start: int, end: int
) -> tuple[int, int] | None:
    """The first and last turn that wrote raw messages ``start`` to ``end - 1`` of ``slot_id``.

    None unless this live session saw the turn of ``start`` stored (a resumed
    session, an imported history): a summary then names its messages only.
    """
    starts = runtime.turn_starts.get(slot_id, [])
    if not starts or start < starts[0][0] or end <= start:
        return None
    first = last = None
    for index, turn in starts:
        if index <= start:
            first = turn
        if index < end:
            last = turn
    return None if first is None or last is None else (first, last)


RUNTIME = StashKey[SessionRuntime]("autosummary runtime")
"""Where a live session keeps the plugin's runtime (``session.stash``)."""


def runtime_of(session: SessionHandle) -> SessionRuntime:
    """The in-memory runtime of ``session``, made on first use."""
    runtime = session.stash.get(RUNTIME, None)
    if runtime is None:
        runtime = session.stash.setdefault(RUNTIME, SessionRuntime())
    return runtime


def enabled_config(config: AgentConfig) -> SummaryConfig | None:
    """The :class:`SummaryConfig` of a bundle's config, or None when summaries are off."""
    value = config.get(SETTING)
    return value if isinstance(value, SummaryConfig) else None


async def session_correction(ctx: TurnContext, runtime: SessionRuntime) -> TokenCorrection:
    """The session's token correction, read from its data on first use."""
    if runtime.correction is None:
        runtime.correction = await load_correction(ctx)
    return runtime.correction


async def learn(
    ctx: TurnContext, runtime: SessionRuntime, model: str | None, local: int, server: int
) -> TokenCorrection:
    """Fold one observation into the session's correction, storing it when it changed."""
    current = await session_correction(ctx, runtime)
    learned = current.observe(model, local, server)
    if learned is not current:
        runtime.correction = learned
        logger.info(
            "%s: the server counts %.3fx agentcore's tokens for model %r",
            session_name(ctx.session),
            learned.factor(model),
            model,
        )
        await save_correction(ctx, learned)
    return learned


async def load_state(ctx: TurnContext, runtime: SessionRuntime) -> SummaryState:
    """The summary state of ``ctx.slot``, read from the session data on first use."""
    state = runtime.states.get(ctx.slot.id)
    if state is None:
        stored = await ctx.memory.get(state_key(ctx.slot.id))
        state = runtime.states[ctx.slot.id] = state_from_json(stored, slot_id=ctx.slot.id)
    return state


def covered_of(slot: ContextSlot, state: SummaryState) -> int:
    """How many raw messages the summary covers: :func:`covered_and_previous` without the text.

    The summary is not unfenced: a caller that needs only the count (every turn's
    checkpoint does) reads no summary text.
    """
    focused = slot.config.focused
    return focused.summary_covers if focused is not None else state.covered


def covered_and_previous(slot: ContextSlot, state: SummaryState) -> tuple[int, str | None]:
    """How many raw messages the summary covers, and the summary itself (or None).

    The summary as the summarizer wrote it: a Focused slot's fenced
    ``summary_override`` is unfenced
    (:func:`~agentcore_autosummary.applying.fencing.unfence_summary`; one stored
    before the fence existed is returned as it is), without the plugin's record of
    attachments (:func:`~agentcore_autosummary.applying.record.without_record`): the
    next summary is asked for, and judged, without it, and the plugin writes it again.
    """
    focused = slot.config.focused
    if focused is not None:
        return focused.summary_covers, previous_summary(focused.summary_override)
    return state.covered, state.summary


def previous_summary(override: str | None) -> str | None:
    """The summary a slot's ``summary_override`` holds, unfenced, without its record."""
    return None if override is None else without_record(unfence_summary(override))
