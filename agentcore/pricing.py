"""What tokens cost: prices per model, and the dollars of a :class:`~agentcore.Usage`.

Prices come, in this order, from the prices you give a :class:`PriceTable`
(a negotiated rate, a model no table has, a local model at 0), from
`genai-prices <https://github.com/pydantic/genai-prices>`_ when it is
installed (the ``prices`` extra, Python 3.11 and later; its maintainers keep
it current as models ship and prices change, with tiers by prompt length),
and from :data:`LIST_PRICES`, the published prices of current OpenAI,
Anthropic and Google models kept here by hand as the offline fallback:
:data:`PRICES_CHECKED` says when they were last compared with the providers'
pricing pages (:data:`PRICE_SOURCES`). Nothing here downloads prices: genai-prices is read
from the data its installed version ships.

Example::

    table = PriceTable({"my-finetune": Price(input=1.0, output=4.0)})
    dollars = table.dollars(session.cost.total(), "claude-sonnet-4-5")
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

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


MAINTAINED_PROVIDERS: Mapping[str, str] = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "google": "google",
    "gemini": "google",
}
"""The ``provider:`` prefixes whose models genai-prices prices, and its id for each. A model
under another prefix (``ollama:`` and other local servers) is never priced from it."""


@functools.cache
def maintained_prices() -> Any | None:
    """The ``genai_prices`` module when it is installed, else None (imported once)."""
    try:
        import genai_prices
    except ImportError:
        return None
    return genai_prices


def _per_million(value: Any) -> float | None:
    """A genai-prices price per million tokens as a float: a tiered price's base tier."""
    if value is None:
        return None
    return float(getattr(value, "base", value))


class PriceTable:
    """Prices by model: ``overrides`` first, then genai-prices, then :data:`LIST_PRICES`.

    ``overrides`` maps model names to :class:`Price`; a name there wins.
    ``include_list_prices=False`` leaves only ``overrides``. ``maintained``
    says whether genai-prices is asked (default: when it is installed; True
    requires it, False keeps to the hand table).
    """

    def __init__(
        self,
        overrides: Mapping[str, Price] | None = None,
        *,
        include_list_prices: bool = True,
        maintained: bool | None = None,
    ) -> None:
        own: dict[str, Price] = {}
        for name, price in (overrides or {}).items():
            if not isinstance(name, str) or not name:
                raise ConfigError(
                    f"a model name in a price table must be a non-empty str: {name!r}"
                )
            if not isinstance(price, Price):
                raise ConfigError(f"the price of {name!r} must be a Price, got {price!r}")
            own[name] = price
        if maintained not in (None, True, False):
            raise ConfigError(f"maintained must be True, False or None, got {maintained!r}")
        module = maintained_prices() if include_list_prices and maintained is not False else None
        if maintained is True and module is None:
            raise ConfigError(
                "maintained=True needs genai-prices: install the prices extra "
                '(pip install "genai-prices>=0.2")'
            )
        self._own = own
        self._list = dict(LIST_PRICES) if include_list_prices else {}
        self._maintained = module

    @property
    def maintained(self) -> bool:
        """Whether genai-prices is asked for the models ``overrides`` does not price."""
        return self._maintained is not None

    def price_for(self, model: str) -> Price | None:
        """The price of ``model``, or None when no source has one.

        A ``"provider:model"`` name is looked up without its prefix, and a
        model id that extends a known name after a ``-`` (a date or a
        version, as in ``claude-sonnet-4-5-20250929`` or
        ``gpt-4.1-mini-2025-04-14``) takes the longest such name. A price
        genai-prices tiers by prompt length is given at its base tier here;
        :meth:`dollars` applies the tiers.
        """
        name, provider = _split(model)
        own = _family(self._own, name)
        if own is not None:
            return own
        found = self._maintained_model(name, provider)
        if found is not None:
            prices = found.model_price
            input_price = _per_million(prices.input_mtok)
            output_price = _per_million(prices.output_mtok)
            if input_price is not None and output_price is not None:
                return Price(
                    input=input_price,
                    output=output_price,
                    cached_input=_per_million(prices.cache_read_mtok),
                    cache_write=_per_million(prices.cache_write_mtok),
                )
        return _family(self._list, name)

    def price_source(self, model: str) -> str | None:
        """Where :meth:`dollars` takes ``model``'s price from.

        ``"override"``, ``"genai-prices"``, ``"list"`` (:data:`LIST_PRICES`), or
        None when no source prices it.
        """
        name, provider = _split(model)
        if _family(self._own, name) is not None:
            return "override"
        if self._maintained_model(name, provider) is not None:
            return "genai-prices"
        return "list" if _family(self._list, name) is not None else None

    def dollars(self, usage: Usage, model: str, *, cache_ttl: str = "5m") -> float | None:
        """What ``usage`` of ``model`` costs, or None when no source prices it.

        ``cache_ttl="1h"`` prices cache writes at Anthropic's 1-hour rate,
        which only the hand table has: such usage is priced from it.
        """
        if not isinstance(usage, Usage):
            raise ConfigError(f"a price applies to a Usage, got {usage!r}")
        name, provider = _split(model)
        own = _family(self._own, name)
        if own is not None:
            return own.dollars(usage, cache_ttl=cache_ttl)
        if cache_ttl == "5m" or usage.cache_write_tokens == 0:
            found = self._maintained_model(name, provider, usage)
            if found is not None:
                return float(found.total_price)
        listed = _family(self._list, name)
        return None if listed is None else listed.dollars(usage, cache_ttl=cache_ttl)

    def _maintained_model(self, name: str, provider: str | None, usage: Usage | None = None) -> Any:
        """genai-prices' price calculation for ``usage`` (or one token) of ``name``, or None."""
        module = self._maintained
        if module is None or (provider is not None and provider not in MAINTAINED_PROVIDERS):
            return None
        usage = usage if usage is not None else Usage(1, 0)
        asked = module.Usage(
            input_tokens=usage.input_tokens,
            cache_read_tokens=usage.cached_input_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            output_tokens=usage.output_tokens,
        )
        provider_id = None if provider is None else MAINTAINED_PROVIDERS[provider]
        try:
            return module.calc_price(asked, model_ref=name, provider_id=provider_id)
        except (LookupError, ValueError):
            return None


def _split(model: str) -> tuple[str, str | None]:
    """``model`` without its ``provider:`` prefix, and the prefix (None without one)."""
    if not isinstance(model, str) or not model:
        raise ConfigError(f"a model name must be a non-empty str, got {model!r}")
    if ":" in model:
        provider, name = model.split(":", 1)
        return name, provider
    return model, None


def _family(prices: Mapping[str, Price], name: str) -> Price | None:
    """``name``'s price in ``prices``: its own, or the longest known name it extends by ``-``."""
    if name in prices:
        return prices[name]
    best: str | None = None
    for known in prices:
        if name.startswith(known + "-") and (best is None or len(known) > len(best)):
            best = known
    return None if best is None else prices[best]
