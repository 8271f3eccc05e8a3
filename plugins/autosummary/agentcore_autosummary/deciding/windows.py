"""The context window when ``max_context_tokens`` is not given: discovered once, then cached.

What is learned about the bundle's provider (the discovered windows, the
windows a server's refusal showed it serves) is kept in the bundle's stash
(``AgentBundle.stash``, under :data:`WINDOWS`), one record per provider
object: the sessions of a bundle share it, and it lives as long as the
bundle does. A served window is also stored with the session, so a resumed
session (another bundle, another process) knows it from its first turn.
"""

from __future__ import annotations

import logging

import attrs
from attrs import define, field

from agentcore import AgentBundle, ConfigError, LlmProvider, TurnContext
from agentcore.plugin_api import StashKey, discover_context_window
from agentcore_autosummary.config import (
    DEFAULT_MAX_CONTEXT_TOKENS,
    SERVED_WINDOW_KEY,
    SummaryConfig,
)
from agentcore_autosummary.deciding.budget import turn_model
from agentcore_autosummary.keeping.runtime import runtime_of
from agentcore_autosummary.log_names import session_name

logger = logging.getLogger("agentcore.autosummary")


@define
class ProviderWindows:
    """What autosummary learned about the windows of one provider object."""

    provider: LlmProvider
    """The provider it was learned from (held, so its ``id`` stays its own)."""
    resolved: dict[tuple[SummaryConfig, str | None], SummaryConfig] = field(factory=dict)
    """Per (config, model): the config with the discovered ``max_context_tokens``."""
    served: dict[str, int] = field(factory=dict)
    """Per model name (``""`` for the provider's default): the window a refusal taught."""


WINDOWS = StashKey[dict[int, ProviderWindows]]("autosummary windows")
"""Where a bundle keeps :class:`ProviderWindows` (``bundle.stash``), by ``id`` of the provider.

Keyed per provider rather than one record per bundle: ``attrs.evolve`` of
a bundle with another provider shares the stash, and what one provider
taught must not size another's requests.
"""


def provider_windows(bundle: AgentBundle) -> ProviderWindows:
    """The record of ``bundle.provider`` in the bundle's stash, made on first use."""
    records = bundle.stash.get(WINDOWS, None)
    if records is None:
        records = bundle.stash.setdefault(WINDOWS, {})
    record = records.get(id(bundle.provider))
    if record is None or record.provider is not bundle.provider:
        record = records[id(bundle.provider)] = ProviderWindows(bundle.provider)
    return record


async def resolve_config(ctx: TurnContext, config: SummaryConfig) -> SummaryConfig:
    """``config`` with ``max_context_tokens`` set: as given, else discovered for the turn model.

    Discovery (``agentcore.providers.windows.discover_context_window``)
    runs once per bundle, provider, model and config; without an answer the window
    is ``DEFAULT_MAX_CONTEXT_TOKENS``, with a warning. A discovered window
    too small for the rest of the config raises :class:`ConfigError`.
    """
    if config.max_context_tokens is not None:
        return config
    record = provider_windows(ctx.session.bundle)
    model = turn_model(ctx)
    cache = record.resolved
    cached = cache.get((config, model))
    if cached is not None:
        return cached
    window = await discover_context_window(record.provider, model)
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


def known_config(bundle: AgentBundle, config: SummaryConfig) -> SummaryConfig:
    """``config`` as :func:`resolve_config` resolved it for ``bundle``'s provider, if it did."""
    if config.max_context_tokens is not None:
        return config
    for (original, _), resolved in provider_windows(bundle).resolved.items():
        if original == config:
            return resolved
    return config


def _model_key(model: str | None) -> str:
    return model or ""


async def _session_served(ctx: TurnContext) -> dict[str, int]:
    """The served windows stored with the session (read once per live session)."""
    runtime = runtime_of(ctx.session)
    if runtime.served is None:
        stored = await ctx.memory.get(SERVED_WINDOW_KEY)
        runtime.served = {
            str(model): window
            for model, window in (stored.items() if isinstance(stored, dict) else ())
            if isinstance(window, int) and not isinstance(window, bool) and window > 0
        }
    return runtime.served


async def served_window(ctx: TurnContext, model: str | None) -> int | None:
    """The window the server showed it serves ``model``, if a refusal taught one."""
    key = _model_key(model)
    cached = provider_windows(ctx.session.bundle).served.get(key)
    served = runtime_of(ctx.session).served  # read once per live session, then kept
    stored = (served if served is not None else await _session_served(ctx)).get(key)
    if cached is None or stored is None:
        return stored if cached is None else cached
    return min(cached, stored)


async def learn_served_window(
    ctx: TurnContext, model: str | None, limit: int | None, window: int
) -> bool:
    """Learn from a refusal for length that the server serves ``limit`` tokens, not ``window``.

    Returns whether ``limit`` is news (smaller than ``window``): it is then
    cached for the bundle's provider, stored with the session next to the token
    correction (so it survives a resume), and a warning says the configured
    or discovered window was larger than the served one. The provider's
    record is the bundle's (:func:`provider_windows`).
    """
    if limit is None or limit <= 0 or limit >= window:
        return False
    key = _model_key(model)
    provider_windows(ctx.session.bundle).served[key] = limit
    served = await _session_served(ctx)
    served[key] = limit
    logger.warning(
        "%s: the server refused a request for model %r as longer than %d tokens, "
        "but the window was taken to be %d: requests are planned for %d tokens from now on "
        "(set summary_config max_context_tokens to the served window to skip this refusal)",
        session_name(ctx.session),
        model,
        limit,
        window,
        limit,
    )
    try:
        await ctx.memory.set(SERVED_WINDOW_KEY, dict(served))
    except Exception as exc:
        logger.error("%s: could not store the served window: %s", session_name(ctx.session), exc)
    return True


def with_window(config: SummaryConfig, window: int) -> SummaryConfig:
    """``config`` planned for ``window`` tokens.

    Explicit token sizes that do not fit the smaller window give way to the
    ones derived from it, with a warning, rather than refusing every turn.
    """
    try:
        return attrs.evolve(config, max_context_tokens=window)
    except ConfigError as exc:
        logger.warning(
            "the served window of %d tokens is too small for summary_config (%s): its token "
            "sizes are derived from the window instead",
            window,
            exc,
        )
        return attrs.evolve(
            config, max_context_tokens=window, max_summary_tokens=None, keep_recent_tokens=None
        )


async def effective_config(ctx: TurnContext, config: SummaryConfig) -> SummaryConfig:
    """:func:`resolve_config`, then no larger than the window the server showed it serves."""
    resolved = config  # a config with its window needs no resolving: no coroutine is made
    if config.max_context_tokens is None:
        resolved = await resolve_config(ctx, config)
    served = await served_window(ctx, turn_model(ctx))
    if served is not None and served < resolved.window and resolved.window_guard:
        return with_window(resolved, served)
    return resolved
