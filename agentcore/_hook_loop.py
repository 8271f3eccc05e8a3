"""The one loop that calls an awaited hook: pluggy's ``_multicall``, awaiting what it gets.

Every hook agentcore awaits goes through :func:`call_hook`, given pluggy's
``HookCaller`` (``pm.hook.NAME``); the hook's policy (isolated or
propagating) is read from its spec (:mod:`agentcore._hook_policy`), never
given by the call site.
"""

from __future__ import annotations

import inspect
import logging
import types
from collections.abc import Awaitable, Generator, Mapping
from typing import Any, NoReturn, TypeVar, cast

import pluggy
from pluggy import HookCallError, HookImpl

from agentcore._hook_policy import HookPolicy, caller_policy

T = TypeVar("T")

logger = logging.getLogger("agentcore.plugins")


async def await_me_maybe(value: T | Awaitable[T]) -> T:
    """Await ``value`` if it is awaitable, else return it."""
    if inspect.isawaitable(value):
        return await value
    return value


def trace_before(hook_name: str, hook_impls: Any, kwargs: Any) -> None:
    """Log a hook call about to run (``AGENTCORE_TRACE_PLUGINS``)."""
    logger.debug("hook %s -> %s", hook_name, [impl.plugin_name for impl in hook_impls])


def trace_after(outcome: Any, hook_name: str, hook_impls: Any, kwargs: Any) -> None:
    """Log what a synchronous hook call returned (``AGENTCORE_TRACE_PLUGINS``)."""
    logger.debug("hook %s returned %r", hook_name, outcome.get_result())


def _traced(caller: pluggy.HookCaller) -> bool:
    """Whether the manager of ``caller`` was created with tracing on.

    pluggy gives a ``HookCaller`` only its manager's bound ``_hookexec``; the
    manager's ``trace_calls`` flag is read through it, and is False for a
    manager that is not agentcore's.
    """
    manager = getattr(getattr(caller, "_hookexec", None), "__self__", None)
    return bool(getattr(manager, "trace_calls", False))


_CallerFacts = tuple[pluggy.HookCaller, Any, HookPolicy, bool, bool, Mapping[str, Any]]
_FACTS: dict[pluggy.HookCaller, _CallerFacts] = {}
_MAX_FACTS = 4096
"""How many hook callers' facts :func:`_facts` keeps (several per plugin manager)."""


def _facts(caller: pluggy.HookCaller) -> _CallerFacts:
    """``(caller, spec, policy, firstresult, traced, defaults)``: read once per caller and spec.

    A hook's spec, and so its policy, ``firstresult`` and the defaults of its
    arguments, is kept with it; a spec set later (``add_hookspecs`` after the
    plugin) is read afresh. Tracing is the manager's, fixed when it was created.
    """
    spec = caller.spec
    kept = _FACTS.get(caller)  # a caller hashes by its identity
    if kept is not None and kept[1] is spec:
        return kept
    firstresult = bool(spec is not None and spec.opts.get("firstresult"))
    defaults: Mapping[str, Any] = {}
    if spec is not None:
        defaults = getattr(spec, "kwargdefaults", None) or {}
    facts = (caller, spec, caller_policy(caller), firstresult, _traced(caller), defaults)
    if len(_FACTS) >= _MAX_FACTS:
        _FACTS.clear()
    _FACTS[caller] = facts
    return facts


def hook_is_idle(caller: pluggy.HookCaller) -> bool:
    """Whether calling the hook of ``caller`` would do nothing: no implementation, no trace.

    A caller that would build an argument only for the hook (a model call's
    record) skips building it then.
    """
    return not caller.get_hookimpls() and not _facts(caller)[4]


async def call_hook(caller: pluggy.HookCaller, /, **kwargs: Any) -> Any:
    """Call the hook of ``caller`` as pluggy would, awaiting async implementations.

    pluggy's own call loop (``_multicall``) with one difference: what an
    implementation returns is awaited when it is awaitable. So the order is
    pluggy's (``tryfirst``/``trylast``, wrappers outermost), new-style
    wrappers (``wrapper=True``) and old-style ones (``hookwrapper=True``)
    run around the implementations and see their awaited results or their
    exception, and a ``firstresult`` hook stops at the first non-None result
    and returns it. Without ``firstresult`` the result is the list of
    non-None results. An implementation asking for an argument the call does
    not give raises pluggy's ``HookCallError``, through the wrappers.

    The hook's :class:`~agentcore.hookspecs.HookPolicy` (declared on its
    spec with :func:`~agentcore.hookspecs.hook_policy`) decides what an
    exception does: on an isolated hook, an implementation or wrapper that
    raises an ``Exception`` is logged at ERROR on ``agentcore.plugins`` with
    its plugin name and the session and turn of ``kwargs["ctx"]``, and the
    others still run, except for the policy's ``propagate`` types;
    otherwise it propagates through the wrappers as in pluggy.
    ``BaseException`` such as cancellation always propagates. Calls are
    logged when the manager was created with ``AGENTCORE_TRACE_PLUGINS`` set.

    :raises TypeError: The hook is declared ``sync=True``: call it as pluggy does.
    """
    _, _, policy, firstresult, trace, defaults = _facts(caller)
    name = caller.name
    if policy.sync:
        raise TypeError(f"the hook {name!r} is synchronous: call it as pm.hook.{name}(...)")
    impls = caller.get_hookimpls()
    if not impls and not trace:  # the common case of a hook no plugin implements
        return None if firstresult else []
    if defaults:
        kwargs = {**defaults, **kwargs}
    if trace:
        trace_before(name, impls, kwargs)
    elif len(impls) == 1 and not (impls[0].wrapper or impls[0].hookwrapper):
        # One implementation, no wrapper (most hooks): the loop below, without the
        # wrappers' bookkeeping.
        impl = impls[0]
        args, extra = _arguments(impl, kwargs)
        try:
            value = impl.function(*args, **extra) if extra else impl.function(*args)
            if type(value) is _COROUTINE or (value is not None and inspect.isawaitable(value)):
                value = await value
        except Exception as exc:
            if not policy.isolate or isinstance(exc, policy.propagate):
                raise
            _log_failure(impl, name, kwargs)
            value = None
        if firstresult:
            return value
        return [] if value is None else [value]
    isolate, propagate = policy.isolate, policy.propagate
    results: list[Any] = []
    exception: BaseException | None = None
    teardowns: list[tuple[HookImpl, Generator[Any, Any, Any]]] = []
    try:
        for impl in reversed(impls):
            args, extra = _arguments(impl, kwargs)
            try:
                if impl.wrapper or impl.hookwrapper:
                    teardowns.append((impl, _start_wrapper(impl, args, extra)))
                    continue
                value = impl.function(*args, **extra) if extra else impl.function(*args)
                # An async implementation's coroutine, told at once; anything else that
                # is awaitable (a future, an object with __await__) too, as pluggy's
                # results would be awaited by await_me_maybe.
                if type(value) is _COROUTINE or (value is not None and inspect.isawaitable(value)):
                    value = await value
            except Exception as exc:
                if not isolate or isinstance(exc, propagate):
                    raise
                _log_failure(impl, name, kwargs)
                continue
            if value is not None:
                results.append(value)
                if firstresult:
                    break
    except BaseException as exc:
        exception = exc
    result: Any = (results[0] if results else None) if firstresult else results
    if teardowns:
        for impl, teardown in reversed(teardowns):
            try:
                result = _finish_wrapper(impl, teardown, result, exception)
                exception = None
            except Exception as exc:
                if not isolate or exc is exception or isinstance(exc, propagate):
                    exception = exc
                else:
                    _log_failure(impl, name, kwargs)
            except BaseException as exc:
                exception = exc
    if exception is not None:
        raise exception
    if trace:
        logger.debug("hook %s returned %r", name, result)
    return result


_COROUTINE = types.CoroutineType
"""What an ``async def`` implementation returns: awaited without :func:`inspect.isawaitable`."""


def _arguments(impl: HookImpl, kwargs: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The positional and keyword arguments of ``impl`` from the call's ``kwargs``."""
    try:
        args = list(map(kwargs.__getitem__, impl.argnames))
    except KeyError as missing:
        raise HookCallError(f"hook call must provide argument {missing.args[0]!r}") from missing
    # A parameter with a default gets the call's value when the call gives one.
    names: tuple[str, ...] = getattr(impl, "kwargnames", ())
    if not names:
        return args, _NO_EXTRA
    return args, {name: kwargs[name] for name in names if name in kwargs}


_NO_EXTRA: dict[str, Any] = {}
"""The keyword arguments of an implementation without defaulted parameters (never changed)."""


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


def _log_failure(impl: HookImpl, hook_name: str, kwargs: Mapping[str, Any]) -> None:
    ctx = kwargs.get("ctx")
    logger.exception(
        "plugin %r failed in %s (session=%s, turn=%s)",
        impl.plugin_name,
        hook_name,
        getattr(ctx, "session_id", None),
        getattr(ctx, "turn_index", None),
    )
