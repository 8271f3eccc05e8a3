"""What tokens cost: list prices per model, and the dollars of a :class:`~agentcore.Usage`.

:data:`LIST_PRICES` holds the published prices of current OpenAI, Anthropic
and Google models in US dollars per million tokens: uncached input, input
read from the prompt cache, input written to it, and output. Prices change:
:data:`PRICES_CHECKED` says when these were compared with the providers'
pricing pages (:data:`PRICE_SOURCES`), and a :class:`PriceTable` takes your
own prices on top (a negotiated rate, a model the table lacks, a local
model at 0).

Example::

    table = PriceTable({"my-finetune": Price(input=1.0, output=4.0)})
    dollars = table.dollars(session.cost.total(), "claude-sonnet-4-5")
"""

from __future__ import annotations

from collections.abc import Mapping

from attrs import field, frozen

from agentcore.errors import ConfigError
from agentcore.usage import Usage
from agentcore.validators import Rule, is_number

PER = 1_000_000
"""Prices are per this many tokens."""


_DOLLARS = Rule("a finite number of dollars >= 0", lambda value: is_number(value) and value >= 0)
_OPTIONAL_DOLLARS = _DOLLARS.or_none()


@frozen
class Price:
    """The price of one model, in US dollars per million tokens.

    ``cached_input`` is what a token read from the prompt cache costs
    (``Usage.cached_input_tokens``); ``cache_write`` what a token written to
    it costs (``Usage.cache_write_tokens``; Anthropic's 5-minute entries,
    and ``cache_write_1h`` for its 1-hour ones). Left None they cost the
    ``input`` price: no discount, no premium.
    """

    input: float = field(validator=_DOLLARS)
    output: float = field(validator=_DOLLARS)
    cached_input: float | None = field(default=None, validator=_OPTIONAL_DOLLARS)
    cache_write: float | None = field(default=None, validator=_OPTIONAL_DOLLARS)
    cache_write_1h: float | None = field(default=None, validator=_OPTIONAL_DOLLARS)

    def dollars(self, usage: Usage, *, cache_ttl: str = "5m") -> float:
        """What ``usage`` costs at this price, in dollars.

        ``cache_ttl="1h"`` prices cache writes at the 1-hour rate.
        """
        if not isinstance(usage, Usage):
            raise ConfigError(f"a price applies to a Usage, got {usage!r}")
        if cache_ttl not in ("5m", "1h"):
            raise ConfigError(f"cache_ttl must be '5m' or '1h', got {cache_ttl!r}")
        read = self.input if self.cached_input is None else self.cached_input
        write = self.input if self.cache_write is None else self.cache_write
        if cache_ttl == "1h" and self.cache_write_1h is not None:
            write = self.cache_write_1h
        return (
            usage.uncached_input_tokens * self.input
            + usage.cached_input_tokens * read
            + usage.cache_write_tokens * write
            + usage.output_tokens * self.output
        ) / PER


def _anthropic(input: float, output: float) -> Price:
    # Anthropic: cache reads 0.1x the input price, writes 1.25x (5 minutes) or 2x (1 hour).
    return Price(
        input=input,
        output=output,
        cached_input=round(input * 0.1, 6),
        cache_write=round(input * 1.25, 6),
        cache_write_1h=round(input * 2, 6),
    )


def _cached_at(input: float, cached_input: float, output: float) -> Price:
    # OpenAI and Google: cached prefixes are read at a discount; writing them costs nothing extra.
    return Price(input=input, output=output, cached_input=cached_input, cache_write=input)


LIST_PRICES: Mapping[str, Price] = {
    # Anthropic (prompts up to 200k tokens)
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    "claude-opus-4-1": _anthropic(15.0, 75.0),
    "claude-opus-4": _anthropic(15.0, 75.0),
    "claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "claude-sonnet-4": _anthropic(3.0, 15.0),
    "claude-3-7-sonnet": _anthropic(3.0, 15.0),
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    "claude-3-haiku": _anthropic(0.25, 1.25),
    # OpenAI
    "gpt-5": _cached_at(1.25, 0.125, 10.0),
    "gpt-5-mini": _cached_at(0.25, 0.025, 2.0),
    "gpt-5-nano": _cached_at(0.05, 0.005, 0.4),
    "gpt-4.1": _cached_at(2.0, 0.5, 8.0),
    "gpt-4.1-mini": _cached_at(0.4, 0.1, 1.6),
    "gpt-4.1-nano": _cached_at(0.1, 0.025, 0.4),
    "gpt-4o": _cached_at(2.5, 1.25, 10.0),
    "gpt-4o-mini": _cached_at(0.15, 0.075, 0.6),
    "o3": _cached_at(2.0, 0.5, 8.0),
    "o4-mini": _cached_at(1.1, 0.275, 4.4),
    # Google (prompts up to 200k tokens; context-cache storage per hour is not modelled)
    "gemini-2.5-pro": _cached_at(1.25, 0.31, 10.0),
    "gemini-2.5-flash": _cached_at(0.3, 0.075, 2.5),
    "gemini-2.5-flash-lite": _cached_at(0.1, 0.025, 0.4),
}
"""List prices by model name (a dated or suffixed id resolves to its family: see
:meth:`PriceTable.price_for`)."""

PRICES_CHECKED = "2026-12-01"
"""When :data:`LIST_PRICES` was last compared with :data:`PRICE_SOURCES`."""

PRICE_SOURCES: Mapping[str, str] = {
    "anthropic": "https://docs.anthropic.com/en/docs/about-claude/pricing",
    "openai": "https://platform.openai.com/docs/pricing",
    "google": "https://ai.google.dev/gemini-api/docs/pricing",
}
"""The pricing pages :data:`LIST_PRICES` comes from."""


class PriceTable:
    """Prices by model: :data:`LIST_PRICES` with ``overrides`` on top.

    ``overrides`` maps model names to :class:`Price`; a name in both wins
    here. ``include_list_prices=False`` starts from an empty table.
    """

    def __init__(
        self, overrides: Mapping[str, Price] | None = None, *, include_list_prices: bool = True
    ) -> None:
        prices = dict(LIST_PRICES) if include_list_prices else {}
        for name, price in (overrides or {}).items():
            if not isinstance(name, str) or not name:
                raise ConfigError(
                    f"a model name in a price table must be a non-empty str: {name!r}"
                )
            if not isinstance(price, Price):
                raise ConfigError(f"the price of {name!r} must be a Price, got {price!r}")
            prices[name] = price
        self._prices = prices

    def price_for(self, model: str) -> Price | None:
        """The price of ``model``, or None when the table has none.

        A ``"provider:model"`` name is looked up without its prefix, and a
        model id that extends a known name after a ``-`` (a date or a
        version, as in ``claude-sonnet-4-5-20250929`` or
        ``gpt-4.1-mini-2025-04-14``) takes the longest such name.
        """
        if not isinstance(model, str) or not model:
            raise ConfigError(f"a model name must be a non-empty str, got {model!r}")
        name = model.split(":", 1)[1] if ":" in model else model
        if name in self._prices:
            return self._prices[name]
        best: str | None = None
        for known in self._prices:
            if name.startswith(known + "-") and (best is None or len(known) > len(best)):
                best = known
        return None if best is None else self._prices[best]

    def dollars(self, usage: Usage, model: str, *, cache_ttl: str = "5m") -> float | None:
        """What ``usage`` of ``model`` costs, or None when the table has no price for it."""
        price = self.price_for(model)
        return None if price is None else price.dollars(usage, cache_ttl=cache_ttl)
