"""Run a blocking function on a daemon thread and await its outcome.

:func:`asyncio.to_thread` runs functions on the loop's default executor,
whose threads the interpreter joins at exit: one blocking tool that timed
out keeps the process alive until it returns. A daemon thread does not,
so a tool that never returns cannot hold the process past its exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def start_daemon_thread(func: Callable[..., T], /, *args: Any) -> asyncio.Future[T]:
    """Start ``func(*args)`` on a new daemon thread; its outcome settles the returned future.

    The function runs in a copy of the caller's context (as with
    :func:`asyncio.to_thread`, context variables propagate). Cancelling the
    future does not stop the thread: its outcome is dropped, and so is an
    outcome that arrives after the event loop was closed. The thread keeps
    no reference to the future's loop once it has handed over the outcome,
    and the caller's reference to ``args`` is the only one left on the loop
    side, so a caller that drops its own lets the thread free them.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def run() -> None:
        try:
            result = context.run(func, *args)
        except BaseException as exc:
            _hand_over(loop, _set_exception, future, exc)
        else:
            _hand_over(loop, _set_result, future, result)

    threading.Thread(target=run, name=f"agentcore-{_name(func)}", daemon=True).start()
    return future


def _hand_over(
    loop: asyncio.AbstractEventLoop,
    settle: Callable[[asyncio.Future[Any], Any], None],
    future: asyncio.Future[Any],
    outcome: Any,
) -> None:
    with contextlib.suppress(RuntimeError):  # a closed loop: nobody awaits the outcome
        loop.call_soon_threadsafe(settle, future, outcome)


def _set_result(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():
        future.set_result(result)


def _set_exception(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


def _name(func: Callable[..., Any]) -> str:
    name = getattr(func, "__name__", None)
    return name if isinstance(name, str) else "worker"
