"""Which plugin's implementation of a hook is running: for callbacks a hook hands out.

A registration hook (``register_providers``, ``register_commands``) is called
once through pluggy, wrappers included, with one callback or object for every
plugin; what the callback records is credited to the plugin whose
implementation (or wrapper) is on the call stack.
"""

from __future__ import annotations

import inspect
import sys
from types import CodeType, FrameType

import pluggy

_MAX_DEPTH = 64
"""How many frames up the stack a callback looks for the implementation calling it."""


def running_plugin(caller: pluggy.HookCaller) -> str | None:
    """The name of the plugin whose implementation of ``caller``'s hook called the caller of this.

    Looks up the stack of the current call (at most 64 frames) for the frame
    of one of the hook's implementations; None when there is none (the
    callback was kept and called later, outside the hook).
    """
    impls: dict[CodeType, list[tuple[object, str]]] = {}
    for impl in caller.get_hookimpls():
        function = impl.function
        owner = getattr(function, "__self__", None)
        code = getattr(inspect.unwrap(getattr(function, "__func__", function)), "__code__", None)
        if isinstance(code, CodeType):
            impls.setdefault(code, []).append((owner, impl.plugin_name))
    frame: FrameType | None = sys._getframe(1)
    for _ in range(_MAX_DEPTH):
        if frame is None:
            return None
        candidates = impls.get(frame.f_code)
        if candidates:
            return _pick(frame, candidates)
        frame = frame.f_back
    return None


def _pick(frame: FrameType, candidates: list[tuple[object, str]]) -> str:
    """The plugin of ``frame`` among implementations sharing its code (one class, two objects)."""
    if len(candidates) > 1:
        code = frame.f_code
        first = code.co_varnames[0] if code.co_argcount else None
        bound = frame.f_locals.get(first) if first is not None else None
        for owner, name in candidates:
            if owner is not None and owner is bound:
                return name
    return candidates[0][1]
