"""Work on a text that may be long: on the event loop when short, in a worker thread if not."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from agentcore import Message, TextBlock
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


def text_chars(messages: Iterable[Message]) -> int:
    """The characters of ``messages``' texts (``Message.text``), their sizes read as they are."""
    total = 0
    for message in messages:
        content = message.content
        if len(content) == 1 and type(content[0]) is TextBlock:  # most messages: one text
            total += len(content[0].text)
        else:
            total += len(message.text)
    return total


async def cut_middle(counter: TokenCounter, text: str, max_tokens: int) -> str:
    """``counter.cut_middle(text, max_tokens)``, off the event loop when ``text`` is long."""
    return await run_by_size(len(text), counter.cut_middle, text, max_tokens)
