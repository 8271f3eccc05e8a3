"""The context window when ``max_context_tokens`` is not given: discovered once, then cached."""

from __future__ import annotations

import logging
import weakref

import attrs

from agentcore import ConfigError, LlmProvider, TurnContext
from agentcore.providers.windows import discover_context_window
from agentcore_autosummary.budget import turn_model
from agentcore_autosummary.config import DEFAULT_MAX_CONTEXT_TOKENS, SummaryConfig

logger = logging.getLogger("agentcore.autosummary")

_resolved: weakref.WeakKeyDictionary[
    LlmProvider, dict[tuple[SummaryConfig, str | None], SummaryConfig]
]
_resolved = weakref.WeakKeyDictionary()


def _provider(ctx: TurnContext) -> LlmProvider:
    return ctx.session.bundle.provider


async def resolve_config(ctx: TurnContext, config: SummaryConfig) -> SummaryConfig:
    """``config`` with ``max_context_tokens`` set: as given, else discovered for the turn model.

    Discovery (:func:`~agentcore.providers.windows.discover_context_window`)
    runs once per provider, model and config; without an answer the window
    is ``DEFAULT_MAX_CONTEXT_TOKENS``, with a warning. A discovered window
    too small for the rest of the config raises :class:`ConfigError`.
    """
    if config.max_context_tokens is not None:
        return config
    provider = _provider(ctx)
    model = turn_model(ctx)
    cache = _resolved.setdefault(provider, {})
    cached = cache.get((config, model))
    if cached is not None:
        return cached
    window = await discover_context_window(provider, model)
    if window is None:
        logger.warning(
            "the context window of model %r is not known and its server reported none: "
            "assuming %d tokens; set summary_config max_context_tokens to the real window",
            model,
            DEFAULT_MAX_CONTEXT_TOKENS,
        )
        window = DEFAULT_MAX_CONTEXT_TOKENS
    else:
        logger.info("the context window of model %r is %d tokens", model, window)
    try:
        resolved = attrs.evolve(config, max_context_tokens=window)
    except ValueError as exc:
        raise ConfigError(
            f"the context window of model {model!r} is {window} tokens, too small for "
            f"summary_config: {exc}"
        ) from None
    cache[(config, model)] = resolved
    return resolved


def known_config(ctx_provider: LlmProvider, config: SummaryConfig) -> SummaryConfig:
    """``config`` as :func:`resolve_config` resolved it for ``ctx_provider``, if it did."""
    if config.max_context_tokens is not None:
        return config
    for (original, _), resolved in _resolved.get(ctx_provider, {}).items():
        if original == config:
            return resolved
    return config
