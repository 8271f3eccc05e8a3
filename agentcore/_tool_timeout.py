"""A tool call bounded in time: the call goes on in the background, its answer is dropped."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class ToolTimedOutError(Exception):
    """The tool call did not finish within the registry's timeout."""


async def run_within(work: Coroutine[Any, Any, T], seconds: float | None) -> T:
    """The result of ``work``, awaited for at most ``seconds`` (None: no limit).

    Past the limit ``work`` is cancelled (a synchronous tool's thread keeps running,
    its result dropped, its exception never logged as unretrieved) and
    :class:`ToolTimedOutError` is raised.
    """
    if seconds is None:
        return await work
    task = asyncio.ensure_future(work)
    try:
        done, _ = await asyncio.wait({task}, timeout=seconds)
    finally:
        if not task.done():
            task.cancel()
            task.add_done_callback(_discard_outcome)
    if not done:
        raise ToolTimedOutError
    return task.result()


def _discard_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
