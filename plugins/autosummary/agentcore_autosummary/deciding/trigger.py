"""When a summary is due."""

from __future__ import annotations

import math

from agentcore import TurnContext
from agentcore.plugin_api import TokenCounter
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.keeping.state import SummaryState


async def measure(
    ctx: TurnContext, config: SummaryConfig, counter: TokenCounter, factor: float = 1.0
) -> int:
    """The tokens the trigger compares with the watermark.

    ``"context"``: the context the conversation occupies now, that is the
    last provider call's reported input + output tokens, or, without usage,
    the size of the slot's next context counted by ``counter``, times the token correction
    ``factor`` (counted only as far as the watermark: past it, the figure is a
    lower bound). ``"cumulative"``: every
    token the session's turns have used (summary calls not included).
    """
    if config.trigger == "cumulative":
        return ctx.cost.total("turn").total_tokens
    usage = ctx.response.usage if ctx.response is not None else None
    if usage is not None:
        return usage.input_tokens + usage.output_tokens
    limit = math.ceil(config.trigger_tokens / factor)
    return math.ceil(await ctx.slot.count_context(counter, limit=limit) * factor)


MAX_BACKOFF_TURNS = 8
"""The longest wait, in turns, between two attempts while summaries keep failing."""


def backoff_turns(failures: int) -> int:
    """Turns to wait after ``failures`` failed attempts in a row: 0, then 1, 2, 4, 8, 8, ..."""
    if failures <= 0:
        return 0
    return int(min(2 ** (failures - 1), MAX_BACKOFF_TURNS))


def may_retry(state: SummaryState, turn_index: int) -> bool:
    """False while the attempts that failed in a row ask to wait (:func:`backoff_turns`)."""
    last = state.last_attempt_turn
    if state.failures <= 0 or last is None:
        return True
    return turn_index - last >= backoff_turns(state.failures)


def is_due(config: SummaryConfig, state: SummaryState, turn_index: int, tokens: int) -> bool:
    """True when ``tokens`` reached the watermark and the debounce window has passed."""
    if tokens < config.trigger_tokens:
        return False
    last = state.last_attempt_turn
    return last is None or turn_index - last >= config.debounce_turns
