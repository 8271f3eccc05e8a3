"""The provider summary calls go to: the turns' own, or ``SummaryConfig.summary_provider``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcore import ConfigError, LlmProvider, TurnContext
from agentcore.plugin_api import (
    HookedProvider,
    StashKey,
    check_provider_name,
    get_provider,
    provider_model,
)
from agentcore_autosummary.config import SummaryConfig

if TYPE_CHECKING:
    import pluggy

SUMMARY_PROVIDERS = StashKey[dict[str, LlmProvider]]("autosummary summary providers")
"""Where a session keeps the providers its ``summary_provider`` names built (``session.stash``)."""


def _resolve(ctx: TurnContext, name: str) -> LlmProvider:
    """The provider named ``name`` (``"prefix:model"``), built once per session."""
    cache = ctx.session.stash.setdefault(SUMMARY_PROVIDERS, {})
    provider = cache.get(name)
    if provider is None:
        provider = cache[name] = get_provider(
            name, plugin_manager=ctx.session.bundle.plugin_manager
        )
    return provider


def check_summary_provider(config: SummaryConfig, plugin_manager: pluggy.PluginManager) -> None:
    """Refuse a ``summary_provider`` name that no plugin of the bundle registers.

    Run when the bundle is built (the ``check`` of the ``summary_config``
    setting), so a misspelt prefix fails ``AgentBuilder().build()`` before
    any model call is paid for, instead of failing every summary. The
    provider itself is built at the first summary, as before.

    :raises ConfigError: The message names the value and the known prefixes.
    """
    name = config.summary_provider
    if not isinstance(name, str):
        return
    try:
        check_provider_name(name, plugin_manager=plugin_manager)
    except ConfigError as exc:
        raise ConfigError(f"summary_provider {name!r} cannot be used: {exc}") from exc


def summary_provider(ctx: TurnContext, config: SummaryConfig) -> LlmProvider:
    """The provider for the summary calls of ``ctx``, wrapped so ``after_model_call`` fires.

    Without ``summary_provider`` it is ``ctx.provider``, the turn's hooked
    provider. A name is resolved with :func:`agentcore.providers.get_provider`
    (plugins of the session's bundle included) and cached per session; its
    prefix was checked at build (:func:`check_summary_provider`), and a
    :class:`~agentcore.errors.ConfigError` of the factory fails the summary.
    """
    chosen = config.summary_provider
    if chosen is None:
        return ctx.provider
    provider = _resolve(ctx, chosen) if isinstance(chosen, str) else chosen
    return HookedProvider(provider, ctx.session.bundle.plugin_manager, ctx)


def summary_model(ctx: TurnContext, config: SummaryConfig) -> str | None:
    """The model summary calls ask for: ``summary_model``, else the summarizer's own.

    With the turns' provider that is the agent's model (else the provider's
    default); with a ``summary_provider``, the default model of that provider.
    """
    if config.summary_model is not None:
        return config.summary_model
    if config.summary_provider is None:
        return ctx.session.agent.model
    return None


def counting_model(ctx: TurnContext, config: SummaryConfig) -> str | None:
    """The model whose tokenizer and learned correction size the summary requests."""
    model = summary_model(ctx, config)
    if model is not None:
        return model
    return provider_model(summary_provider(ctx, config))
