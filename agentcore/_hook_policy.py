"""How a hook is called, declared on its specification: isolated or propagating, or synchronous.

A hookspec carries its policy with :func:`hook_policy`, next to pluggy's
``@hookspec``; the one call loop (:func:`agentcore.hook_calls.call_hook`)
reads it from the hook's ``HookCaller.spec``, so no call site restates it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pluggy
from attrs import frozen

F = TypeVar("F", bound=Callable[..., Any])

POLICY_ATTRIBUTE = "agentcore_policy"
"""The attribute of a hookspec function that holds its :class:`HookPolicy`."""

SPEC_ATTRIBUTE = "agentcore_spec"
"""The attribute pluggy's ``HookspecMarker("agentcore")`` sets on a hookspec function."""


@frozen
class HookPolicy:
    """How agentcore calls one hook.

    :param isolate: An implementation or wrapper that raises an ``Exception``
        is logged at ERROR (with its plugin name, and the session and turn of
        the ``ctx`` argument) and the others still run. Otherwise the
        exception propagates through the wrappers to the caller, as in pluggy.
    :param propagate: Exception types that propagate even when ``isolate``.
    :param sync: The hook is called synchronously by pluggy itself: its
        implementations must be plain ``def`` (an ``async def`` one is
        refused when the plugin registers).
    """

    isolate: bool = False
    propagate: tuple[type[BaseException], ...] = ()
    sync: bool = False

    def describe(self) -> str:
        """The policy in words, as the hook tables of the docs show it."""
        if self.sync:
            return "synchronous, propagating"
        if not self.isolate:
            return "awaited, propagating"
        if self.propagate:
            names = ", ".join(kind.__name__ for kind in self.propagate)
            return f"awaited, isolated except {names}"
        return "awaited, isolated"


DEFAULT_POLICY = HookPolicy()
"""The policy of a hook whose spec declares none: awaited, exceptions propagate (pluggy's rule)."""


def hook_policy(
    *,
    isolate: bool = False,
    propagate: tuple[type[BaseException], ...] = (),
    sync: bool = False,
) -> Callable[[F], F]:
    """Declare how the hook specified by the decorated function is called.

    Put it beside ``@hookspec``, in either order::

        @hookspec
        @hook_policy(isolate=True)
        def after_thing(ctx, thing): ...

    A spec without it is awaited and propagating (``HookPolicy()``, pluggy's
    rule). See :class:`HookPolicy`.

    :raises TypeError: ``sync`` with ``isolate`` or ``propagate`` (pluggy calls a
        synchronous hook, and always propagates), or a ``propagate`` entry
        that is not an exception type.
    """
    if sync and (isolate or propagate):
        raise TypeError("a synchronous hook is called by pluggy, which propagates every error")
    if not isinstance(propagate, tuple) or not all(
        isinstance(kind, type) and issubclass(kind, BaseException) for kind in propagate
    ):
        raise TypeError(f"propagate must be a tuple of exception types, got {propagate!r}")
    policy = HookPolicy(isolate=isolate, propagate=propagate, sync=sync)

    def mark(function: F) -> F:
        setattr(function, POLICY_ATTRIBUTE, policy)
        return function

    return mark


def policy_of(spec_function: object) -> HookPolicy:
    """The policy declared on a hookspec function, or ``HookPolicy()`` when it declares none."""
    policy = getattr(spec_function, POLICY_ATTRIBUTE, None)
    return policy if isinstance(policy, HookPolicy) else DEFAULT_POLICY


def caller_policy(caller: pluggy.HookCaller) -> HookPolicy:
    """The policy of the hook ``caller`` calls (``HookPolicy()`` for a hook without spec)."""
    spec = caller.spec
    return DEFAULT_POLICY if spec is None else policy_of(spec.function)


def policy_table(namespace: object) -> list[str]:
    """One Markdown row per hookspec of ``namespace``: hook, policy, pluggy option.

    The rows of the hook tables in ``docs/plugins.md``, in the order the
    specs are written, as ``| `name` | policy | option |`` (the option:
    ``firstresult`` or ``historic``, else empty).
    """
    rows = []
    for name, value in vars(namespace).items():
        opts = getattr(value, SPEC_ATTRIBUTE, None)
        if not isinstance(opts, dict):
            continue
        options = ", ".join(option for option in ("firstresult", "historic") if opts.get(option))
        row = f"| `{name}` | {policy_of(value).describe()} | {options} |"
        rows.append(" ".join(row.split()))
    return rows
