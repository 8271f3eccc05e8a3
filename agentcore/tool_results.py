"""Tool results as text, bounded in size: what a tool returned, as the model reads it.

A ``str`` result is sent as is, None as ``""``, anything else as JSON. A text
longer than its limit is cut: its head and its tail are kept and a notice
between them tells the model how much was left out, so the whole, notice
included, is at most the limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentcore.validators import at_least

DEFAULT_MAX_RESULT_CHARS = 100_000
"""Characters a tool result may hold when neither the tool nor its registry sets a limit.

About 25,000 tokens of English or JSON: a long file or web page fits whole,
and a result never takes more than a fifth of a 128,000-token window.
"""

MIN_RESULT_CHARS = 256
"""The smallest limit accepted: room for the notice and some of the head and tail."""

MAX_RESULT_CHARS = (
    at_least(MIN_RESULT_CHARS).named(f"an int >= {MIN_RESULT_CHARS} (characters)").or_none()
)
"""The rule of a result limit: an int >= :data:`MIN_RESULT_CHARS`, or None."""

SMALL_RESULT_NODES = 2_000
"""Values and characters a non-str result may hold to be turned into JSON on the event loop."""


class NotJsonError(Exception):
    """A tool returned a value that cannot be turned into JSON; ``cause`` says why."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


def render(result: Any) -> str:
    """``result`` as the text of a tool result; raises :class:`NotJsonError`."""
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError) as exc:
        raise NotJsonError(exc) from None


def bounded(text: str, limit: int | None) -> str:
    """``text``, or its head and tail around a notice when it is longer than ``limit``.

    The result has at most ``limit`` characters; the notice says how many of
    how many were left out. Costs time in ``limit``, not in ``len(text)``.
    """
    total = len(text)
    if limit is None or total <= limit:
        return text
    omitted = total - limit
    while True:
        notice = _notice(omitted, total, limit)
        room = max(limit - len(notice), 0)
        if total - room == omitted:
            break
        omitted = total - room
    head = (room + 1) // 2
    tail = room - head
    return text[:head] + notice + (text[total - tail :] if tail else "")


def _notice(omitted: int, total: int, limit: int) -> str:
    return (
        f"\n\n[... tool result cut: {omitted:,} of its {total:,} characters were left out "
        f"here (the limit is {limit:,}) ...]\n\n"
    )


def is_small(value: Any, budget: int = SMALL_RESULT_NODES) -> bool:
    """Whether ``value`` is plain JSON data (dicts, lists, str, numbers) of at most ``budget``.

    Each value counts one and each str its length. The walk stops as soon as
    the budget is spent or a value is not plain data, so it costs at most
    ``budget`` steps: a large or unusual result is turned into JSON off the
    event loop.
    """
    stack = [value]
    left = budget
    while stack:
        item = stack.pop()
        left -= 1
        if isinstance(item, str):
            left -= len(item)
        elif isinstance(item, Mapping):
            if type(item) is not dict:
                return False
            left -= len(item)
            if left < 0:
                return False
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            left -= len(item)
            if left < 0:
                return False
            stack.extend(item)
        elif item is not None and not isinstance(item, (bool, int, float)):
            return False
        if left < 0:
            return False
    return True
