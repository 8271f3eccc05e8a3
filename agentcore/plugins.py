"""The plugin manager factory, plugin discovery and listing."""

from __future__ import annotations

import inspect
import os
import types
from collections.abc import Iterable
from typing import Any

import pluggy
from attrs import frozen

from agentcore import hookspecs
from agentcore._hook_loop import await_me_maybe as await_me_maybe
from agentcore._hook_loop import trace_after, trace_before
from agentcore._hook_policy import caller_policy
from agentcore.errors import ConfigError

DISABLE_AUTOLOAD_ENV = "AGENTCORE_DISABLE_PLUGIN_AUTOLOAD"
"""Set to ``1`` to skip loading plugins from the ``agentcore`` entry-point group."""

DISABLED_PLUGINS_ENV = "AGENTCORE_DISABLED_PLUGINS"
"""Comma-separated plugin names that are never loaded."""

TRACE_ENV = "AGENTCORE_TRACE_PLUGINS"
"""Set to ``1`` to log every hook call and result at DEBUG on ``agentcore.plugins``.

Read once, when a plugin manager is created (:func:`create_plugin_manager`):
bundles built before it was set do not trace."""

BUILTIN_PLUGIN_MODULES: tuple[str, ...] = ("agentcore.providers.builtin",)
"""Modules of agentcore itself registered as plugins in every manager."""

SPEC_PLUGIN_MODULES: tuple[str, ...] = ("agentcore.cli.hookspecs",)
"""Modules registered first in every manager, declaring hooks beyond the core's.

The command line's hooks (:mod:`agentcore.cli.hookspecs`) are declared the
way a plugin declares its own, before any plugin registers, so a plugin's
implementations of them are checked as they register and a library that
never runs the command line still accepts them."""


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def create_plugin_manager(
    *, load_entrypoints: bool | None = None, plugins: Iterable[object] = ()
) -> pluggy.PluginManager:
    """A new plugin manager with agentcore's hookspecs and plugins.

    Entry-point plugins are loaded unless ``load_entrypoints`` is False, or is
    None and :data:`DISABLE_AUTOLOAD_ENV` is set. Plugins named in
    :data:`DISABLED_PLUGINS_ENV` are blocked. ``plugins`` are registered
    after discovery. :data:`TRACE_ENV` is read here, once per manager.
    """
    import importlib

    pm = _PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    # Each plugin, as it registers, may add hooks of its own (checked below, after all).
    pm.hook.register_hookspecs.call_historic(kwargs={"pluginmanager": pm})
    for module_name in SPEC_PLUGIN_MODULES:
        pm.register(importlib.import_module(module_name), name=module_name)
    for name in os.environ.get(DISABLED_PLUGINS_ENV, "").split(","):
        if name.strip():
            pm.set_blocked(name.strip())
    if load_entrypoints is None:
        load_entrypoints = not _env_flag(DISABLE_AUTOLOAD_ENV)
    if load_entrypoints:
        pm.load_setuptools_entrypoints(hookspecs.PROJECT_NAME)
    for module_name in BUILTIN_PLUGIN_MODULES:
        if not pm.is_blocked(module_name):
            pm.register(importlib.import_module(module_name), name=module_name)
    for plugin in plugins:
        if not pm.is_registered(plugin):
            pm.register(plugin)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise ConfigError(
            f"{exc}: no installed plugin declares that hook. Install the plugin that adds it, "
            "or mark an implementation that should load without it "
            "@hookimpl(optionalhook=True)"
        ) from exc
    if _env_flag(TRACE_ENV):
        pm.trace_calls = True
        pm.add_hookcall_monitoring(trace_before, trace_after)
    return pm


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, refusing at registration what agentcore cannot run as declared."""

    trace_calls = False
    """Whether :func:`~agentcore.hook_calls.call_hook` logs calls (:data:`TRACE_ENV`)."""

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register ``plugin`` after checking how its hooks will be called.

        Raises :class:`~agentcore.errors.ConfigError` for an ``async``
        wrapper, which pluggy would never await, and for an ``async``
        implementation of a hook called synchronously.
        """
        if self.is_blocked(name or self.get_canonical_name(plugin)):
            return super().register(plugin, name)
        plugin_name = name or _label(plugin)
        for attr in dir(plugin):
            opts = self.parse_hookimpl_opts(plugin, attr)
            if opts is not None:
                hook = opts.get("specname") or attr
                _check_impl(plugin_name, hook, getattr(plugin, attr), opts, self._is_sync(hook))
        return super().register(plugin, name)

    def _is_sync(self, hook: str) -> bool:
        """Whether ``hook`` is declared ``sync=True`` (by the core, or a plugin's spec)."""
        caller: pluggy.HookCaller | None = getattr(self.hook, hook, None)
        if caller is not None and caller.spec is not None:
            return caller_policy(caller).sync
        return hook in hookspecs.SYNC_HOOKS


def _label(plugin: object) -> str:
    """How errors name a plugin registered without a name."""
    if isinstance(plugin, types.ModuleType):
        return plugin.__name__
    kind = plugin if isinstance(plugin, type) else type(plugin)
    return f"{kind.__module__}.{kind.__qualname__}"


def _check_impl(plugin_name: str, hook: str, function: Any, opts: Any, sync: bool) -> None:
    is_async = inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)
    if not is_async:
        return
    if opts.get("wrapper") or opts.get("hookwrapper"):
        option = "wrapper=True" if opts.get("wrapper") else "hookwrapper=True"
        raise ConfigError(
            f"plugin {plugin_name!r}: the {option} implementation of {hook!r} is async; "
            "pluggy runs a wrapper as a plain generator and would never await it. "
            f"Write it as `def {hook}(...)` with one `yield` (agentcore awaits the async "
            "implementations inside it), or make it an ordinary `async def` implementation "
            "without wrapper=True."
        )
    if sync:
        raise ConfigError(
            f"plugin {plugin_name!r}: {hook!r} is called synchronously, so an async "
            "implementation would never be awaited; write it as a plain `def`."
        )


@frozen
class PluginInfo:
    """An installed plugin: its name, the hooks it implements, where it comes from."""

    name: str
    hooks: tuple[str, ...]
    distribution: str | None = None
    version: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The plugin as JSON-ready data."""
        data: dict[str, Any] = {"name": self.name, "hooks": list(self.hooks)}
        if self.distribution is not None:
            data["distribution"] = self.distribution
            data["version"] = self.version
        return data


def list_plugins(pm: pluggy.PluginManager) -> list[PluginInfo]:
    """Every plugin registered in ``pm`` with the hooks it implements, sorted by name."""
    # list_plugin_distinfo: in every pluggy this package supports (list_plugin_distributions
    # is new in pluggy 1.7); its wrapper passes ``metadata`` and ``version`` through.
    distributions: dict[int, Any] = {id(plugin): dist for plugin, dist in pm.list_plugin_distinfo()}
    infos = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None or name is None:
            continue
        callers = pm.get_hookcallers(plugin) or []
        dist = distributions.get(id(plugin))
        infos.append(
            PluginInfo(
                name=name,
                hooks=tuple(sorted(caller.name for caller in callers)),
                distribution=dist.metadata["name"] if dist is not None else None,
                version=dist.version if dist is not None else None,
            )
        )
    return sorted(infos, key=lambda info: info.name)
