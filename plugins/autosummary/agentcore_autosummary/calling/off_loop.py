"""Work on a text that may be long: on the event loop when short, in a worker thread if not."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from agentcore.plugin_api import INLINE_COUNT_CHARS, TokenCounter

T = TypeVar("T")


async def run_by_size(chars: int, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)``, for an input of ``chars`` characters.

    Called here when ``chars`` is at most ``INLINE_COUNT_CHARS`` (a worker thread's round
    trip would cost more than the work); in a worker thread otherwise, so a long input
    never holds the event loop.
    """
    if chars <= INLINE_COUNT_CHARS:
        return function(*args)
    return await asyncio.to_thread(function, *args)


async def cut_middle(counter: TokenCounter, text: str, max_tokens: int) -> str:
    """``counter.cut_middle(text, max_tokens)``, off the event loop when ``text`` is long."""
    return await run_by_size(len(text), counter.cut_middle, text, max_tokens)
