"""Dollars beside tokens: what a session's usage costs at its model's list price."""

from __future__ import annotations

from agentcore.cli.meter import format_tokens
from agentcore.errors import ConfigError
from agentcore.pricing import PriceTable
from agentcore.usage import Usage

MODEL_KEY = "cli.model"
"""Session-data key where ``agentcore chat`` records its ``--model`` (``PROVIDER:MODEL``),
so ``agentcore sessions show`` can price the session's usage later."""


def format_dollars(amount: float) -> str:
    """``$0.0042`` below a dollar (a turn costs fractions of a cent), else ``$1.25``."""
    if amount < 1:
        return f"${amount:.4f}"
    return f"${amount:,.2f}"


def dollars_for(usage: Usage, model: str | None, prices: PriceTable | None = None) -> float | None:
    """What ``usage`` costs at the price of ``model`` (``agentcore.pricing``), or None.

    None when no model is known or the table has no price for it (a local
    model, a fine-tune): the caller then shows tokens only.
    """
    if not model:
        return None
    table = prices if prices is not None else PriceTable()
    try:
        return table.dollars(usage, model)
    except ConfigError:
        return None


def cost_line(usage: Usage, model: str | None, prices: PriceTable | None = None) -> str:
    """``cost     1,234 in (800 cache reads, 0 cache writes) + 56 out tokens  $0.0003``.

    The dollars are left out when :func:`dollars_for` finds no price.
    """
    line = (
        f"cost     {format_tokens(usage.input_tokens)} in "
        f"({format_tokens(usage.cached_input_tokens)} cache reads, "
        f"{format_tokens(usage.cache_write_tokens)} cache writes) + "
        f"{format_tokens(usage.output_tokens)} out tokens"
    )
    amount = dollars_for(usage, model, prices)
    return line if amount is None else f"{line}  {format_dollars(amount)}"
