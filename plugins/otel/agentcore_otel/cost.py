"""The usage and cost attributes of a chat or turn span: tokens, cache reads and writes, dollars."""

from __future__ import annotations

from typing import Any

from agentcore import ConfigError, Usage
from agentcore.plugin_api import PriceTable
from agentcore_otel import attributes as attr

_PRICES = PriceTable()


def dollars(usage: Usage, model: str | None) -> float | None:
    """What ``usage`` costs at the list price of ``model`` (``agentcore.pricing``), or None."""
    if not model:
        return None
    try:
        return _PRICES.dollars(usage, model)
    except ConfigError:
        return None


def usage_attributes(usage: Usage, model: str | None) -> dict[str, Any]:
    """The span attributes of ``usage``: tokens in and out, cache reads and writes, dollars.

    The cache attributes are set when the provider reported cache use; the
    cost (:data:`~agentcore_otel.attributes.USAGE_COST_USD`) when ``model``
    has a list price.
    """
    attributes: dict[str, Any] = {
        attr.USAGE_INPUT_TOKENS: usage.input_tokens,
        attr.USAGE_OUTPUT_TOKENS: usage.output_tokens,
    }
    if usage.cached_input_tokens:
        attributes[attr.USAGE_CACHE_READ_INPUT_TOKENS] = usage.cached_input_tokens
    if usage.cache_write_tokens:
        attributes[attr.USAGE_CACHE_CREATION_INPUT_TOKENS] = usage.cache_write_tokens
    cost = dollars(usage, model)
    if cost is not None:
        attributes[attr.USAGE_COST_USD] = cost
    return attributes
