"""Providers selectable by name (``"openai:gpt-4o-mini"``), registered by plugins."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentcore._hook_attribution import running_plugin
from agentcore.errors import ConfigError
from agentcore.hook_calls import CoreHooks
from agentcore.llm import LlmProvider

if TYPE_CHECKING:
    import pluggy

    from agentcore.hookspecs import ProviderFactory

_NAME_FORMAT = (
    "a provider name is 'prefix:model', for example 'openai:gpt-4o-mini' "
    "or 'anthropic:claude-sonnet-4-5'"
)


def available_providers(
    plugin_manager: pluggy.PluginManager | None = None,
) -> Mapping[str, ProviderFactory]:
    """Every registered provider factory by prefix.

    Every plugin's ``register_providers`` hook is asked; ``plugin_manager``
    defaults to a new one from :func:`agentcore.plugins.create_plugin_manager`.
    Raises :class:`~agentcore.errors.ConfigError` when two plugins register
    the same prefix.
    """
    registered = _collect(plugin_manager)
    return {prefix: _single(prefix, entries) for prefix, entries in sorted(registered.items())}


def get_provider(
    name: str, *, plugin_manager: pluggy.PluginManager | None = None, **options: Any
) -> LlmProvider:
    """The provider for ``name``, such as ``"openai:gpt-4o-mini"``.

    The part before the first ``:`` selects the factory a plugin registered
    through the ``register_providers`` hook; the rest is the model name
    (which may itself hold colons, as Ollama's ``llama3.1:8b`` does).
    ``options`` go to the factory; the built-in ones pass them to the
    provider's constructor (``base_url=``, ``api_key=``, ``timeout=``...).

    :raises ConfigError: the name is not ``prefix:model``, no plugin registers
        the prefix, two plugins register it, or the factory rejects the options.
    """
    prefix, model = _split(name)
    registered = _collect(plugin_manager)
    _check_known(name, prefix, registered)
    factory = _single(prefix, registered[prefix])
    _check_options(prefix, factory, model, options)
    provider = factory(model, **options) if options else factory(model)
    if not isinstance(provider, LlmProvider):
        raise ConfigError(
            f"the factory registered for {prefix!r} returned {type(provider).__name__}, "
            "which does not implement LlmProvider (complete and stream)"
        )
    return provider


def check_provider_name(name: str, *, plugin_manager: pluggy.PluginManager | None = None) -> None:
    """Check that ``name`` would select a provider, without building one.

    The checks of :func:`get_provider` that need no options: ``name`` is
    ``prefix:model`` and exactly one plugin registers the prefix. A setting
    that names a provider calls it when the bundle is built, so a misspelt
    prefix fails ``build()`` instead of every later call; the factory
    itself (which may need credentials) runs only when the provider is used.

    :raises ConfigError: As :func:`get_provider`; the message names ``name``
        and the known prefixes.
    """
    prefix, _ = _split(name)
    registered = _collect(plugin_manager)
    _check_known(name, prefix, registered)
    _single(prefix, registered[prefix])


def _split(name: Any) -> tuple[str, str]:
    """``name`` as its lower-case prefix and its model; ConfigError if either is missing."""
    if not isinstance(name, str) or ":" not in name:
        raise ConfigError(f"{_NAME_FORMAT}; got {name!r}")
    prefix, _, model = name.partition(":")
    prefix, model = prefix.strip().lower(), model.strip()
    if not prefix or not model:
        raise ConfigError(
            f"{_NAME_FORMAT}; {name!r} lacks the {'prefix' if not prefix else 'model'}"
        )
    return prefix, model


def _check_known(
    name: str, prefix: str, registered: Mapping[str, list[tuple[str, ProviderFactory]]]
) -> None:
    if prefix not in registered:
        known = ", ".join(sorted(registered)) or "none"
        raise ConfigError(
            f"no provider is registered for the prefix {prefix!r} (in {name!r}); "
            f"known prefixes: {known}. Install the plugin that provides it, or check the spelling"
        )


def _collect(
    plugin_manager: pluggy.PluginManager | None,
) -> dict[str, list[tuple[str, ProviderFactory]]]:
    if plugin_manager is None:
        from agentcore.plugins import create_plugin_manager

        plugin_manager = create_plugin_manager()
    registered: dict[str, list[tuple[str, ProviderFactory]]] = {}
    caller = plugin_manager.hook.register_providers

    def register(prefix: str, factory: ProviderFactory) -> None:
        # One call through pluggy (wrappers run too); each entry credited to its plugin.
        plugin = running_plugin(caller) or "unknown"
        _check_registration(plugin, prefix, factory)
        entries = registered.setdefault(prefix.strip().lower(), [])
        if all(existing is not factory for _, existing in entries):
            entries.append((plugin, factory))

    CoreHooks(plugin_manager).register_providers(register=register)
    return registered


def _check_registration(plugin: str, prefix: Any, factory: Any) -> None:
    if not isinstance(prefix, str) or not prefix.strip() or ":" in prefix:
        raise ConfigError(
            f"plugin {plugin!r} registered the provider prefix {prefix!r}; "
            "a prefix is a non-empty string without ':'"
        )
    if not callable(factory):
        raise ConfigError(
            f"plugin {plugin!r} registered {factory!r} for {prefix!r}; "
            "a factory is a callable taking the model name"
        )


def _single(prefix: str, entries: list[tuple[str, ProviderFactory]]) -> ProviderFactory:
    if len(entries) > 1:
        plugins = " and ".join(repr(plugin) for plugin, _ in entries)
        raise ConfigError(
            f"the provider prefix {prefix!r} is registered by {plugins}; block one of them "
            "(AGENTCORE_DISABLED_PLUGINS) or uninstall it"
        )
    return entries[0][1]


def _check_options(
    prefix: str, factory: ProviderFactory, model: str, options: Mapping[str, Any]
) -> None:
    if not options:
        return
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(model, **options)
    except TypeError as exc:
        raise ConfigError(
            f"the provider {prefix!r} does not take the options {sorted(options)}: {exc}"
        ) from None
