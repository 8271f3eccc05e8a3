"""The plugin manager factory, plugin discovery and listing."""

from __future__ import annotations

import inspect
import logging
import os
import types
from collections.abc import Awaitable, Generator, Iterable
from typing import Any, NoReturn, TypeVar, cast

import pluggy
from attrs import frozen
from pluggy import HookImpl

from agentcore import hookspecs
from agentcore.errors import ConfigError

T = TypeVar("T")

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
    after discovery. :data:`TRACE_ENV` is read here, once per manager.
    """
    import importlib

    pm = _PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    # Each plugin, as it registers, may add hooks of its own (checked below, after all).
    pm.hook.register_hookspecs.call_historic(kwargs={"pluginmanager": pm})
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
        pm.add_hookcall_monitoring(_trace_before, _trace_after)
    return pm


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, refusing at registration what agentcore cannot run as declared."""

    trace_calls = False
    """Whether :func:`call_each` logs the calls (:data:`TRACE_ENV`, read at creation)."""

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
                _check_impl(plugin_name, hook, getattr(plugin, attr), opts)
        return super().register(plugin, name)


def _label(plugin: object) -> str:
    """How errors name a plugin registered without a name."""
    if isinstance(plugin, types.ModuleType):
        return plugin.__name__
    kind = plugin if isinstance(plugin, type) else type(plugin)
    return f"{kind.__module__}.{kind.__qualname__}"


def _check_impl(plugin_name: str, hook: str, function: Any, opts: Any) -> None:
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
    if hook in hookspecs.SYNC_HOOKS:
        raise ConfigError(
            f"plugin {plugin_name!r}: {hook!r} is called synchronously, so an async "
            "implementation would never be awaited; write it as a plain `def`."
        )


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
) -> Any:
    """Call the hook ``hook_name`` as pluggy would, awaiting async implementations.

    pluggy's own call loop (``_multicall``) with one difference: what an
    implementation returns is awaited when it is awaitable. So the order is
    pluggy's (``tryfirst``/``trylast``, wrappers outermost), new-style
    wrappers (``wrapper=True``) and old-style ones (``hookwrapper=True``)
    run around the implementations and see their awaited results or their
    exception, and a ``firstresult`` hook stops at the first non-None
    result and returns it. Without ``firstresult`` the result is the list of
    non-None results.

    With ``isolate``, an implementation or wrapper that raises an
    ``Exception`` is logged at ERROR with its plugin name and the session
    and turn of ``kwargs["ctx"]``, and the others still run; without it,
    the exception propagates through the wrappers as in pluggy. Exceptions
    of the types in ``propagate`` always propagate, isolated or not.
    ``BaseException`` such as cancellation always propagates. Calls are
    logged when the manager was created with :data:`TRACE_ENV` set.
    """
    caller = getattr(pm.hook, hook_name)
    impls = caller.get_hookimpls()
    firstresult = bool(caller.spec is not None and caller.spec.opts.get("firstresult"))
    trace: bool = getattr(pm, "trace_calls", False)
    if not impls and not trace:
        return None if firstresult else []
    if trace:
        _trace_before(hook_name, impls, kwargs)
    results: list[Any] = []
    exception: BaseException | None = None
    teardowns: list[tuple[HookImpl, Generator[Any, Any, Any]]] = []
    try:
        for impl in reversed(impls):
            args = [kwargs[name] for name in impl.argnames]
            # Parameters with defaults get the hook's value, as pluggy >= 1.6 passes them.
            extra = {name: kwargs[name] for name in _kwargnames(impl) if name in kwargs}
            try:
                if impl.wrapper or impl.hookwrapper:
                    teardowns.append((impl, _start_wrapper(impl, args, extra)))
                    continue
                value = await await_me_maybe(impl.function(*args, **extra))
            except Exception as exc:
                if not isolate or isinstance(exc, propagate):
                    raise
                _log_failure(impl, hook_name, kwargs)
                continue
            if value is not None:
                results.append(value)
                if firstresult:
                    break
    except BaseException as exc:
        exception = exc
    result: Any = (results[0] if results else None) if firstresult else results
    for impl, teardown in reversed(teardowns):
        try:
            result = _finish_wrapper(impl, teardown, result, exception)
            exception = None
        except Exception as exc:
            if not isolate or exc is exception or isinstance(exc, propagate):
                exception = exc
            else:
                _log_failure(impl, hook_name, kwargs)
        except BaseException as exc:
            exception = exc
    if exception is not None:
        raise exception
    if trace:
        logger.debug("hook %s returned %r", hook_name, result)
    return result


def _kwargnames(impl: HookImpl) -> tuple[str, ...]:
    return tuple(getattr(impl, "kwargnames", ()))


def _start_wrapper(
    impl: HookImpl, args: list[Any], extra: dict[str, Any]
) -> Generator[Any, Any, Any]:
    """Run a wrapper up to its ``yield``."""
    teardown = cast("Generator[Any, Any, Any]", impl.function(*args, **extra))
    try:
        next(teardown)
    except StopIteration:
        _wrapfail(teardown, "did not yield")
    return teardown


def _finish_wrapper(
    impl: HookImpl,
    teardown: Generator[Any, Any, Any],
    result: Any,
    exception: BaseException | None,
) -> Any:
    """Resume a wrapper after its ``yield``; return the result it leaves, or raise."""
    if impl.hookwrapper:
        outcome: pluggy.Result[Any] = pluggy.Result(result, exception)
        try:
            teardown.send(outcome)
        except StopIteration:
            return outcome.get_result()
        finally:
            teardown.close()
        _wrapfail(teardown, "has second yield")
    try:
        if exception is not None:
            teardown.throw(exception)
        else:
            teardown.send(result)
    except StopIteration as stop:
        return stop.value
    finally:
        teardown.close()
    _wrapfail(teardown, "has second yield")


def _wrapfail(teardown: Generator[Any, Any, Any], problem: str) -> NoReturn:
    code = cast("types.CodeType", getattr(teardown, "gi_code"))  # noqa: B009
    raise RuntimeError(
        f"hook wrapper {code.co_name!r} ({code.co_filename}:{code.co_firstlineno}) {problem}"
    )


def _log_failure(impl: HookImpl, hook_name: str, kwargs: dict[str, Any]) -> None:
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
