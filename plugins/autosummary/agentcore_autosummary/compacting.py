"""What a user calls on a session between turns: compact it now, read its summary.

:func:`compact` runs inside :meth:`agentcore.AgentSession.exclusive`, the
core's one way to act on a session from outside a turn: under the session's
turn lock and its write checks, with the same kind of context a hook gets.
"""

from __future__ import annotations

import asyncio

from agentcore import AgentSession, ConfigError, TurnContext
from agentcore_autosummary.calling.pipeline import summarize
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.plan import (
    last_exchange_start,
    make_plan,
    plan_next,
    start_attempt,
)
from agentcore_autosummary.deciding.windows import effective_config
from agentcore_autosummary.keeping.runtime import (
    covered_of,
    enabled_config,
    runtime_of,
)
from agentcore_autosummary.keeping.summary_info import CompactError, SummaryInfo

DEFAULT_MEMORY_KEY = "conversation_summary"
"""The session-data key of the summary snapshot in the original design (and by default)."""


async def compact(session: AgentSession, instructions: str | None = None) -> SummaryInfo:
    """Summarize now whatever the session's current slot can give up, and return what was done.

    The summary ignores the automatic trigger (watermark, debounce) but keeps
    the plugin's budget rules and its verbatim recent tail; when everything
    lies in that tail, all but the last exchange is folded. ``instructions``
    (such as ``"keep the API design decisions"``) are added to the summary
    prompt. Runs between turns, under the session's turn lock
    (:meth:`~agentcore.AgentSession.exclusive`), after a pending background
    summary of the slot has finished.

    :param session: A session of a bundle built with a ``summary_config`` setting.
    :param instructions: Focus instructions for this summary, or None.
    :return: The applied summary: its text, the raw messages it covers, the
        context's tokens before and after.
    :raises CompactError: The bundle has no ``summary_config``, the slot is not
        Focused, nothing can be given up, a hook vetoed the summary, or the
        summary failed (the cause chained). The session is unchanged.
    :raises ConfigError: ``instructions`` is not a non-empty str or None, or
        ``session`` is not an :class:`~agentcore.AgentSession`.
    :raises ReadonlySessionError: The session is read-only.
    """
    if not isinstance(session, AgentSession):
        raise ConfigError(f"session must be an AgentSession, got {session!r}")
    if instructions is not None and (not isinstance(instructions, str) or not instructions.strip()):
        raise ConfigError(f"instructions must be a non-empty str or None, got {instructions!r}")
    async with session.exclusive("compact") as ctx:
        config = enabled_config(ctx.config)
        if config is None:
            raise CompactError(
                f"session {session.session_id!r}: summaries are not enabled for its bundle; "
                'build it with .setting("summary_config", SummaryConfig(...)) to compact'
            )
        return await compact_slot(ctx, config, instructions)


async def get_conversation_summary(session: AgentSession) -> str | None:
    """The latest conversation summary stored for ``session``, or None.

    Read from the session data under the ``memory_key`` of the bundle's
    ``summary_config``, else under the original design's
    ``"conversation_summary"`` (so a summary stored with the default key is
    found by a bundle that does not configure summaries).

    :raises ConfigError: ``session`` is not an :class:`~agentcore.AgentSession`.
    """
    if not isinstance(session, AgentSession):
        raise ConfigError(f"session must be an AgentSession, got {session!r}")
    config = enabled_config(session.bundle.config)
    key = DEFAULT_MEMORY_KEY if config is None else config.memory_key
    value = await session.get_session_data(key)
    return value if isinstance(value, str) else None


async def compact_slot(
    ctx: TurnContext, config: SummaryConfig, instructions: str | None
) -> SummaryInfo:
    """Summarize now what ``ctx.slot`` can give up (the body of :func:`compact`).

    Ignores the watermark and the debounce, keeps the recent tail verbatim
    and sizes the summary requests to the window like any summary. Waits for
    a pending background summary first. Raises :class:`CompactError` for a
    Full slot, when nothing lies before the recent tail, and when the summary
    fails (chained), is vetoed or is dropped.
    """
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
    planned = await plan_next(ctx, config, runtime)
    state, plan = planned.state, planned.plan
    if plan is None:
        # Everything lies in the verbatim tail: a manual compact folds all but the last
        # exchange (the last user message and what answered it).
        covered = covered_of(slot, state)
        last = last_exchange_start(slot.messages, covered)
        plan = make_plan(ctx, config, state, planned.correction, keep_from=last)
    if plan is None:
        raise CompactError(
            f"nothing to compact in slot {slot.id!r}: beside the last exchange and the pinned "
            "messages, every message is already covered by the summary"
        )
    start_attempt(ctx, runtime, state)
    try:
        info = await summarize(ctx, config, runtime, plan, "compact", instructions, strict=True)
    except CompactError:
        raise
    except Exception as exc:
        raise CompactError(f"the summary failed: {type(exc).__name__}: {exc}") from exc
    if info is None:  # strict: summarize raises rather than returning None
        raise CompactError("the summary was not applied")
    return info
