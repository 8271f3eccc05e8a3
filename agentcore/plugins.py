"""The plugin manager factory, plugin discovery and listing."""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

import pluggy
from attrs import frozen

from agentcore import hookspecs

T = TypeVar("T")

DISABLE_AUTOLOAD_ENV = "AGENTCORE_DISABLE_PLUGIN_AUTOLOAD"
"""Set to ``1`` to skip loading plugins from the ``agentcore`` entry-point group."""

DISABLED_PLUGINS_ENV = "AGENTCORE_DISABLED_PLUGINS"
"""Comma-separated plugin names that are never loaded."""

TRACE_ENV = "AGENTCORE_TRACE_PLUGINS"
"""Set to ``1`` to log every hook call and result at DEBUG on ``agentcore.plugins``."""

BUILTIN_PLUGIN_MODULES: tuple[str, ...] = ("agentcore.providers.builtin",)
"""Modules of agentcore itself registered as plugins in every manager."""

logger = logging.getLogger(__name__)


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def create_plugin_manager(
    *, load_entrypoints: bool | None = None, plugins: Iterable[object] = ()
) -> pluggy.PluginManager:
    """A new plugin manager with agentcore's hookspecs and plugins.

    Entry-point plugins are loaded unless ``load_entrypoints`` is False, or is
    None and :data:`DISABLE_AUTOLOAD_ENV` is set. Plugins named in
    :data:`DISABLED_PLUGINS_ENV` are blocked. ``plugins`` are registered
    after discovery.
    """
    import importlib

    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
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
    pm.check_pending()
    if _env_flag(TRACE_ENV):
        pm.add_hookcall_monitoring(_trace_before, _trace_after)
    return pm


def _trace_before(hook_name: str, hook_impls: Any, kwargs: Any) -> None:
    logger.debug("hook %s -> %s", hook_name, [impl.plugin_name for impl in hook_impls])


def _trace_after(outcome: Any, hook_name: str, hook_impls: Any, kwargs: Any) -> None:
    logger.debug("hook %s returned %r", hook_name, outcome.get_result())


async def await_me_maybe(value: T | Awaitable[T]) -> T:
    """Await ``value`` if it is awaitable, else return it."""
    if inspect.isawaitable(value):
        return await value
    return value


async def call_each(
    pm: pluggy.PluginManager,
    hook_name: str,
    *,
    isolate: bool,
    propagate: tuple[type[BaseException], ...] = (),
    **kwargs: Any,
) -> None:
    """Call every implementation of ``hook_name`` in pluggy's order, awaiting each.

    With ``isolate``, an implementation that raises is logged at ERROR with
    its plugin name and the remaining implementations still run, except for
    the exception types in ``propagate``; without it, the first exception
    propagates.
    """
    caller = getattr(pm.hook, hook_name)
    for impl in reversed(caller.get_hookimpls()):
        args = {name: kwargs[name] for name in impl.argnames}
        try:
            await await_me_maybe(impl.function(**args))
        except Exception as exc:
            if not isolate or isinstance(exc, propagate):
                raise
            ctx = kwargs.get("ctx")
            logger.exception(
                "plugin %r failed in %s (session=%s, turn=%s)",
                impl.plugin_name,
                hook_name,
                getattr(ctx, "session_id", None),
                getattr(ctx, "turn_index", None),
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
    distributions: dict[int, Any] = {
        id(plugin): dist for plugin, dist in pm.list_plugin_distributions()
    }
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
