"""Running agentcore's coroutines from synchronous code: scripts, REPLs, notebooks' threads.

:func:`run_sync` runs a coroutine to its end on a private event loop, one
per thread, kept between calls: a provider's HTTP connections and a store's
pool, which belong to the loop that opened them, are reused by the next
call. Called where an event loop is running (inside ``async def``, or a
Jupyter cell, where top-level ``await`` works), it refuses and names the
coroutine to await instead.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from agentcore.errors import SessionError

__all__ = ["run_sync"]

T = TypeVar("T")

_local = threading.local()


def _close(loop: asyncio.AbstractEventLoop) -> None:
    if not loop.is_closed() and not loop.is_running():
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


def _private_loop() -> asyncio.AbstractEventLoop:
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _local.loop = loop
        atexit.register(_close, loop)
    return loop


def run_sync(work: Coroutine[Any, Any, T], *, instead: str | None = None) -> T:
    """Run ``work`` to its end on this thread's private event loop and return its result.

    A ``KeyboardInterrupt`` (or any exception) while it runs cancels
    ``work`` and waits for the cancel to finish, so a turn keeps its
    cancel semantics (see docs/failure-semantics.md), then propagates.

    :param work: A coroutine, such as ``session.history()``.
    :param instead: How to name the awaitable form in the error (default:
        the coroutine's name).
    :raises SessionError: an event loop is running in this thread (``work``
        is closed without running): ``await`` it instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        name = instead or f"{getattr(work, '__qualname__', 'the coroutine')}(...)"
        work.close()
        raise SessionError(
            f"a synchronous call cannot run inside a running event loop (an async function "
            f"or a Jupyter cell): use `await {name}` there instead"
        )
    loop = _private_loop()
    task = loop.create_task(work)
    try:
        return loop.run_until_complete(task)
    except BaseException:
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                loop.run_until_complete(task)
        raise
