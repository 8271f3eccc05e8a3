"""Tool results as text, bounded in size: what a tool returned, as the model reads it.

A ``str`` result is sent as is, None as ``""``, anything else as JSON. A text
longer than its limit is cut: its head and its tail are kept and a notice
between them tells the model how much was left out, so the whole, notice
included, is at most the limit.
"""

from __future__ import annotations

import collections
import inspect
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from attrs import frozen

from agentcore.validators import at_least

MIN_RESULT_CHARS = 256
"""The smallest limit accepted: room for the notice and some of the head and tail."""

MAX_RESULT_CHARS = (
    at_least(MIN_RESULT_CHARS).named(f"an int >= {MIN_RESULT_CHARS} (characters)").or_none()
)
"""The rule of a result limit: an int >= :data:`MIN_RESULT_CHARS`, or None."""

SMALL_RESULT_NODES = 2_000
"""Values and characters a non-str result may hold to be turned into JSON on the event loop."""

PIECE_COST = 50_000
"""Values and characters the C encoder gets at once when a large result is encoded in pieces."""


class NotJsonError(Exception):
    """A tool returned a value that cannot be turned into JSON; ``cause`` says why."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


def render_bounded(result: Any, limit: int | None) -> str:
    """``result`` as the text of a tool result, cut to ``limit`` (see :func:`bounded`).

    A large value is encoded piece by piece (each small piece by the C
    encoder, the same text ``json.dumps`` gives), keeping only the head and
    the tail that the cut keeps: in a worker thread, this never holds the
    interpreter lock for long, so the event loop goes on meanwhile. Raises
    :class:`NotJsonError`.
    """
    if result is None:
        return ""
    if isinstance(result, str):
        return bounded(result, limit)
    if is_small(result):
        return bounded(_dumps(result), limit)
    try:
        return _join_bounded(_json_chunks(result), limit)
    except RecursionError as exc:
        raise NotJsonError(exc) from None


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError) as exc:
        raise NotJsonError(exc) from None


def _json_chunks(value: Any) -> Iterator[str]:
    """The JSON text of ``value`` in pieces, as ``json.dumps(..., default=str)`` writes it.

    Runs of members that together cost at most :data:`PIECE_COST` (see
    :func:`_cost`) are encoded at once by the C encoder, so no piece holds the
    interpreter lock for long; a larger member is walked into.
    """
    active: set[int] = set()

    def pieces(item: Any) -> Iterator[str]:
        if not isinstance(item, (list, tuple, dict)) or _cost(item, PIECE_COST) <= PIECE_COST:
            yield _dumps(item)
            return
        key = id(item)
        if key in active:
            raise NotJsonError(ValueError("Circular reference detected"))
        active.add(key)
        is_dict = isinstance(item, dict)
        members: Iterator[Any] = iter(item.items()) if isinstance(item, dict) else iter(item)
        yield "{" if is_dict else "["
        batch: list[Any] = []
        spent = 0
        first = True
        for member in members:
            cost = _cost(member, PIECE_COST - spent)
            if cost <= PIECE_COST - spent:
                batch.append(member)
                spent += cost
                continue
            if batch:
                yield ("" if first else ", ") + _batch(batch, is_dict)
                first = False
                batch, spent = [], 0
            cost = _cost(member, PIECE_COST)
            if cost <= PIECE_COST:
                batch, spent = [member], cost
                continue
            inner = member
            if is_dict:
                name, inner = member
                # The C encoder's own text for the key ('"k": '), non-str keys included.
                yield ("" if first else ", ") + _dumps({name: None})[1:-5]
            elif not first:
                yield ", "
            first = False
            yield from pieces(inner)
        if batch:
            yield ("" if first else ", ") + _batch(batch, is_dict)
        yield "}" if is_dict else "]"
        active.discard(key)

    return pieces(value)


def _batch(members: list[Any], is_dict: bool) -> str:
    """The JSON of a run of members (items of a dict, or values), without the brackets."""
    return _dumps(dict(members) if is_dict else members)[1:-1]


def _join_bounded(chunks: Iterator[str], limit: int | None) -> str:
    """The text of ``chunks`` cut as :func:`bounded` cuts, holding at most its head and tail."""
    if limit is None:
        return "".join(chunks)
    head: list[str] = []
    head_chars = 0
    tail: collections.deque[str] = collections.deque()
    tail_chars = 0
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if head_chars < limit:
            piece = chunk[: limit - head_chars]
            head.append(piece)
            head_chars += len(piece)
        tail.append(chunk)
        tail_chars += len(chunk)
        while tail_chars - len(tail[0]) >= limit:
            tail_chars -= len(tail.popleft())
    if total <= limit:
        return "".join(head)
    head_size, tail_size, notice = _layout(total, limit)
    ending = "".join(tail)
    return (
        "".join(head)[:head_size]
        + notice
        + (ending[len(ending) - tail_size :] if tail_size else "")
    )


def bounded(text: str, limit: int | None) -> str:
    """``text``, or its head and tail around a notice when it is longer than ``limit``.

    The result has at most ``limit`` characters; the notice says how many of
    how many were left out. Costs time in ``limit``, not in ``len(text)``.
    """
    total = len(text)
    if limit is None or total <= limit:
        return text
    head_size, tail_size, notice = _layout(total, limit)
    return text[:head_size] + notice + (text[total - tail_size :] if tail_size else "")


def _layout(total: int, limit: int) -> tuple[int, int, str]:
    """(head characters, tail characters, notice) of a text of ``total`` cut to ``limit``."""
    omitted = total - limit
    while True:
        notice = _notice(omitted, total, limit)
        room = max(limit - len(notice), 0)
        if total - room == omitted:
            break
        omitted = total - room
    head = (room + 1) // 2
    return head, room - head, notice


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
    return _cost(value, budget, plain=True) <= budget


def _cost(value: Any, budget: int, *, plain: bool = False) -> int:
    """What encoding ``value`` costs (one a value, a str its length), or ``budget + 1`` if more.

    Stops as soon as the budget is spent. With ``plain``, a value that is not
    plain JSON data (an object ``str()`` would encode) costs more than any budget.
    """
    stack = [value]
    left = budget
    while stack:
        item = stack.pop()
        left -= 1
        if isinstance(item, str):
            left -= len(item)
        elif isinstance(item, dict):
            left -= len(item)
            if left < 0:
                break
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            left -= len(item)
            if left < 0:
                break
            stack.extend(item)
        elif plain and item is not None and not isinstance(item, (bool, int, float)):
            return budget + 1
        if left < 0:
            break
    return budget + 1 if left < 0 else budget - left


@frozen
class Rendered:
    """A sync tool's result, rendered and cut in the tool's own thread."""

    text: str


def call_rendered(
    func: Callable[..., Any], kwargs: Mapping[str, Any], limit: int | None
) -> Rendered | Awaitable[Any]:
    """``func(**kwargs)`` rendered and cut, or the awaitable it returned (awaited on the loop)."""
    result = func(**kwargs)
    if inspect.isawaitable(result):
        return result
    return Rendered(render_bounded(result, limit))
