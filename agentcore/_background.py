"""The background work of a session: tracked tasks, drained or cancelled on close.

Work dropped without the session closing it (the event loop closed by
``asyncio.run`` returning, or a task cancelled from outside) is reported
with a :class:`ResourceWarning` and a log line naming the session.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Coroutine
from typing import Any, TypeVar

logger = logging.getLogger("agentcore")

T = TypeVar("T")

DRAIN_HINT = "call `await session.aclose()` (or use `async with session`) before leaving"


class BackgroundWork:
    """The tasks one session runs in the background."""

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._tasks: set[asyncio.Task[Any]] = set()
        self._cancelled_here: set[asyncio.Task[Any]] = set()

    def pending(self) -> list[asyncio.Task[Any]]:
        """The tasks that have not finished yet."""
        return [task for task in self._tasks if not task.done()]

    def run(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work`` as a tracked task."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            if task in self._cancelled_here:
                self._cancelled_here.discard(task)
                return
            message = (
                f"background work of session {self._session_id!r} (such as a plugin's work being "
                "made) was cancelled before it finished, most likely because its event loop "
                f"closed; nothing of it was stored: {DRAIN_HINT} `asyncio.run`"
            )
            logger.warning("%s", message)
            warnings.warn(message, ResourceWarning, stacklevel=1)
        elif task.exception() is not None:
            logger.error(
                "background work of session %r failed",
                self._session_id,
                exc_info=task.exception(),
            )

    async def drain(self, *, cancel: bool) -> None:
        """Wait until every task has finished; with ``cancel``, cancel them first.

        Only the tasks not done yet are awaited: a task that has just finished
        stays in the set until its done callback runs on a later turn of the
        loop, and awaiting it again would never yield on Python 3.12+ (where
        ``gather`` of finished tasks completes at once), so the loop would spin
        without ever running that callback.
        """
        while pending := self.pending():
            if cancel:
                for task in pending:
                    if not task.done():
                        self._cancelled_here.add(task)
                        task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
