"""The bounds of one call: :class:`Limits`, :class:`Clock`, which keeps them, and :func:`chunks`.

An idle timeout that only content resets, an optional deadline for the whole
call (retries and backoff included) and the cap on the bytes of one reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any, Literal, TypeVar

from attrs import frozen

from agentcore.errors import LlmTimeoutError

T = TypeVar("T")

DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
"""The most bytes read for one reply (8 MiB) unless a provider is given another cap."""

END: Any = object()
"""What :func:`next_item` returns at the end of an iterator."""


@frozen
class Limits:
    """The bounds of one call.

    ``idle_timeout``: seconds without progress (a server-sent event that
    carries content, see :attr:`StreamDecoder.progress`, or for a
    non-streamed call the whole reply) before the call fails; None
    for no bound. ``call_timeout``: seconds the whole call may take, retries
    and backoff included; None for no bound. ``max_reply_bytes``: the most
    bytes read for one reply.
    """

    idle_timeout: float | None = None
    call_timeout: float | None = None
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES


class Clock:
    """The idle and overall deadlines of one call, and waits bounded by them."""

    def __init__(self, label: str, limits: Limits) -> None:
        self._label = label
        self._limits = limits
        self._now = asyncio.get_running_loop().time
        total = limits.call_timeout
        self.deadline = None if total is None else self._now() + total
        self._idle_deadline: float | None = None
        self.streaming = False

    def progress(self) -> None:
        """Something real arrived (or an attempt starts): the idle time starts again."""
        idle = self._limits.idle_timeout
        self._idle_deadline = None if idle is None else self._now() + idle

    def remaining(self) -> float | None:
        """Seconds left before the overall deadline, or None without one."""
        return None if self.deadline is None else self.deadline - self._now()

    async def wait(self, start: Callable[[], Any]) -> Any:
        """Await what ``start()`` returns, within the nearer of the two deadlines."""
        bound: float | None = None
        which: Literal["idle", "call"] = "idle"
        if self._idle_deadline is not None:
            bound = self._idle_deadline
        if self.deadline is not None and (bound is None or self.deadline <= bound):
            bound, which = self.deadline, "call"
        if bound is None:
            return await start()
        remaining = bound - self._now()
        if remaining <= 0:
            raise self.timeout(which)
        try:
            return await asyncio.wait_for(start(), remaining)
        except asyncio.TimeoutError:
            pass
        raise self.timeout(which)

    def timeout(self, which: Literal["idle", "call"]) -> LlmTimeoutError:
        """The error for a passed deadline."""
        if which == "call":
            return LlmTimeoutError(
                f"the call to the {self._label} did not finish within its deadline of "
                f"{self._limits.call_timeout:g} s (call_timeout)"
            )
        if self.streaming:
            return LlmTimeoutError(
                f"the {self._label} sent no event for {self._limits.idle_timeout:g} s "
                "(idle_timeout); keep-alive comments, pings, empty deltas and partial data "
                "do not count"
            )
        return LlmTimeoutError(
            f"the {self._label} sent no complete reply within {self._limits.idle_timeout:g} s "
            "(idle_timeout)"
        )


async def next_item(iterator: AsyncIterator[T]) -> T:
    """The next item of ``iterator``, or :data:`END` when it has none."""
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return END  # type: ignore[no-any-return]


async def chunks(
    body: AsyncIterator[bytes],
    clock: Clock,
    limit: int,
    too_large: Callable[[], Exception] | None,
) -> AsyncGenerator[bytes, None]:
    """The chunks of ``body`` as they arrive (each awaited on ``clock``), up to ``limit`` bytes.

    Past ``limit``: ``too_large()`` is raised when given, else the body is
    cut at ``limit`` and the rest left unread. ``body`` is closed at the end.
    """
    size = 0
    async with aclosing(body):  # type: ignore[type-var]
        while True:
            chunk = await clock.wait(lambda: next_item(body))
            if chunk is END:
                return
            size += len(chunk)
            if size > limit:
                if too_large is not None:
                    raise too_large()
                yield chunk[: len(chunk) - (size - limit)]
                return
            yield chunk
