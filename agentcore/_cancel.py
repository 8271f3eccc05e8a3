"""Cancellation helpers: a store commit that outlives a cancelled caller, and turn deadlines."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def consume_cancel() -> None:
    """Mark a cancellation of the current task as handled (Python 3.11+ counts them)."""
    task = asyncio.current_task()
    uncancel = getattr(task, "uncancel", None)
    if uncancel is not None:
        uncancel()


async def complete_despite_cancel(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` to its end, even when the caller is cancelled meanwhile.

    ``work`` runs as its own task that the caller's cancellation never
    reaches. If ``work`` succeeds, its result is returned even to a cancelled
    caller (the cancellation is consumed: what ``work`` did is done). If it
    fails, a cancelled caller gets its ``CancelledError``, any other caller
    the error of ``work``.
    """
    task = asyncio.ensure_future(work)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            if not task.done():
                cancelled = exc
    if cancelled is not None:
        if task.cancelled() or task.exception() is not None:
            if not task.cancelled():
                task.exception()  # retrieved: the caller's cancellation wins
            raise cancelled
        consume_cancel()
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
    in place of the ``CancelledError`` the deadline caused. Works on every
    supported Python (3.10 has no :func:`asyncio.timeout`).
    """

    def __init__(self, seconds: float | None, error: Callable[[], BaseException]) -> None:
        self._when = None if seconds is None else asyncio.get_running_loop().time() + seconds
        self._error = error

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Cancel the current task at the deadline while the body runs; raise ``error``."""
        if self._when is None:
            yield
            return
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
            consume_cancel()
            raise self._error() from None
        finally:
            handle.cancel()
