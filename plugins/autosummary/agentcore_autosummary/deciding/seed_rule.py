"""``trigger="cumulative"``: the seed's ``should_summarize``, step by step.

The seed checks, after each turn and before its index advances::

    turn_index - last_summary_turn >= debounce_turns
        and cost_so_far.total_tokens >= max_context_tokens * trigger_token_ratio

``last_summary_turn`` starts at 0, is one counter for the whole session and
moves only when a summary is applied, so a failed summary is tried again on
the next turn. The watermark is the exact product, compared as a float.
"""

from __future__ import annotations

from agentcore import TurnContext
from agentcore.plugin_api import is_int
from agentcore_autosummary.config import SESSION_COUNTER_KEY, SummaryConfig


async def last_summary_turn(ctx: TurnContext) -> int:
    """The session's ``last_summary_turn``: the turn of its last applied summary, else 0."""
    stored = await ctx.memory.get(SESSION_COUNTER_KEY)
    return stored if is_int(stored) else 0


def seed_watermark_reached(config: SummaryConfig, tokens: int) -> bool:
    """``tokens >= max_context_tokens * trigger_token_ratio``, with no rounding."""
    return float(tokens) >= config.window * config.trigger_token_ratio


async def cumulative_due(ctx: TurnContext, config: SummaryConfig) -> bool:
    """The seed's ``should_summarize`` for the turn of ``ctx``.

    ``tokens`` is every token the session's turns have used (summary calls
    not included, as in the seed).
    """
    tokens = ctx.cost.total("turn").total_tokens
    since = ctx.turn_index - await last_summary_turn(ctx)
    return since >= config.debounce_turns and seed_watermark_reached(config, tokens)
