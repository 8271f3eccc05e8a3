"""Cancellation helpers: a store write that finishes before a cancel propagates, and deadlines.

Cancellation belongs to the caller: the library finishes what must finish
(shielded), then lets the cancel propagate, and never takes back
(``Task.uncancel()``) a cancel it did not make. Only a turn deadline's own
cancel is consumed, by the deadline that made it.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


async def complete_despite_cancel(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to its end, then let a cancellation of the caller propagate.

    ``work`` runs as its own task that the caller's cancellation never
    reaches, so what it started (a store write and the bookkeeping right
    after it) is done whole. A caller cancelled meanwhile then gets its
    ``CancelledError``, whether ``work`` succeeded or failed: the cancel is
    never consumed, so ``asyncio.timeout``, ``TaskGroup`` and anyio's cancel
    scopes see it. A caller that was not cancelled gets the result or the
    error of ``work``. The same on every supported Python.
    """
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            # The caller's cancel, even when ``work`` finished just before it landed.
            cancelled = exc
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # retrieved: the caller's cancellation wins
        raise cancelled
    return task.result()


def check_timeout(name: str, seconds: object) -> float | None:
    """``seconds`` as a positive finite float, or None; anything else is refused."""
    from agentcore.errors import ConfigError

    if seconds is None:
        return None
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        raise ConfigError(
            f"{name} must be a positive finite number of seconds or None, got {seconds!r}"
        )
    return float(seconds)


class Deadline:
    """A point in time after which the awaits run under :meth:`guard` are cancelled.

    ``seconds`` None means no deadline. ``error`` builds the exception raised
    in place of the deadline's own ``CancelledError``. On Python 3.11+ the
    deadline is an :func:`asyncio.timeout_at`, so a cancel of the caller that
    lands together with the deadline still reaches the caller. Python 3.10
    has no :func:`asyncio.timeout` and no count of pending cancels: there the
    deadline cancels the task itself and takes the ``CancelledError`` that
    follows as its own, so a caller's cancel landing in the same instant as
    the deadline is reported as the deadline's (as with 3.10's ``wait_for``).
    """

    def __init__(self, seconds: float | None, error: Callable[[], BaseException]) -> None:
        self._when = None if seconds is None else asyncio.get_running_loop().time() + seconds
        self._error = error

    def remaining(self) -> float | None:
        """Seconds left before the deadline (at least a millisecond), None without one."""
        if self._when is None:
            return None
        return max(0.001, self._when - asyncio.get_running_loop().time())

    @contextlib.asynccontextmanager
    async def guard(self, *, consume: bool = False) -> AsyncIterator[None]:
        """Cancel the current task at the deadline while the body runs.

        The deadline's cancel raises ``error()``; with ``consume`` it ends
        the body quietly instead (for work after the turn was stored, whose
        caller is owed the stored turn). Any other cancel propagates.
        """
        if self._when is None:
            yield
        elif sys.version_info >= (3, 11):
            timeout = asyncio.timeout_at(self._when)
            try:
                async with timeout:
                    yield
            except TimeoutError:
                if not timeout.expired():
                    raise
                if not consume:
                    raise self._error() from None
        else:  # pragma: no cover - Python 3.10
            async with self._fallback_guard(consume=consume):
                yield

    @contextlib.asynccontextmanager
    async def _fallback_guard(self, *, consume: bool) -> AsyncIterator[None]:
        """:meth:`guard` for Python 3.10: a timer that cancels the task."""
        assert self._when is not None
        task = asyncio.current_task()
        assert task is not None
        fired = False

        def fire() -> None:
            nonlocal fired
            fired = True
            task.cancel()

        handle = asyncio.get_running_loop().call_at(self._when, fire)
        try:
            yield
        except asyncio.CancelledError:
            if not fired:
                raise
            if not consume:
                raise self._error() from None
        finally:
            handle.cancel()
