"""How long a turn waits for a summary still running in the background.

A turn whose request would not fit waits for the slot's pending summary
(``mode="background"``, or the rest of a backlog), since its result makes the
room. A slow summarizer (a local model on a CPU, a backlog of several calls)
may run longer than the user should wait: the turn waits at most
``SummaryConfig.background_wait`` seconds (30 by default), never more than
:data:`PENDING_SHARE` of what is left of its deadline (``turn_timeout``), and
goes out without it, inside the window (its oldest uncovered messages left out
of that request, see :func:`~agentcore_autosummary.applying.leaving_out.leave_out_oldest`),
rather than failing at its deadline. The summary goes on and is applied when it
is done. With neither bound the turn waits for it.
"""

from __future__ import annotations

import asyncio
import logging
import time

from agentcore import TurnContext
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.keeping.runtime import runtime_of
from agentcore_autosummary.log_names import at_turn

logger = logging.getLogger("agentcore.autosummary")

PENDING_SHARE = 0.5
"""The share of what is left of a turn's deadline it may spend waiting for a pending summary."""


def wait_limit(ctx: TurnContext, config: SummaryConfig) -> float | None:
    """Seconds the turn may wait for a pending summary; None: no bound."""
    limits = [] if config.background_wait is None else [float(config.background_wait)]
    timeout = ctx.config.turn_timeout
    if timeout is not None:
        left = timeout - (time.time() - ctx.started_at)
        limits.append(max(0.0, left * PENDING_SHARE))
    return min(limits) if limits else None


async def wait_pending(
    ctx: TurnContext, config: SummaryConfig, pending: asyncio.Task[None]
) -> bool:
    """Wait for ``pending`` within :func:`wait_limit`; whether it is done.

    The task is shielded: a turn that stops waiting (or is cancelled) leaves
    the summary running. A turn that stopped waiting once does not wait again,
    nor does a later turn for the same summary: it would only wait as long again.
    """
    runtime = runtime_of(ctx.session)
    if runtime.waited_out.get(ctx.slot.id) is pending:
        return pending.done()
    limit = wait_limit(ctx, config)
    try:
        await asyncio.wait_for(asyncio.shield(pending), limit)
    except asyncio.TimeoutError:
        runtime.waited_out[ctx.slot.id] = pending
        logger.warning(
            "%s did not wait longer than %.0f s for the summary running in the background "
            "(background_wait, or half of what its turn_timeout left): its request goes "
            "out without it",
            at_turn(ctx),
            limit or 0.0,
        )
        return False
    return True
