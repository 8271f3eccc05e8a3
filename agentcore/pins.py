"""Pinned messages: raw messages a Focused slot always sends verbatim."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agentcore.errors import ConfigError
from agentcore.messages import Message
from agentcore.validators import NON_NEGATIVE_INT, is_int


def pins_converter(value: Any) -> tuple[int, ...]:
    """``value`` as sorted, distinct raw indices; anything else is a :class:`ConfigError`."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ConfigError(f"pinned must be a sequence of message indices, got {value!r}")
    indices = list(value)
    for index in indices:
        if not NON_NEGATIVE_INT.accepts(index):
            raise ConfigError(f"pinned holds raw message indices >= 0, got {index!r}")
    return tuple(sorted(set(indices)))


def pin_group(messages: Sequence[Message], index: int) -> range:
    """The indices pinned together with ``index``: a tool call and all of its results.

    Pinning an assistant message with tool calls, or one of its tool
    results, pins the call and every result that follows it, so a request
    never carries a result without its call.
    """
    start = index
    while start > 0 and messages[start].role == "tool":
        start -= 1
    stop = index + 1
    while stop < len(messages) and messages[stop].role == "tool":
        stop += 1
    if messages[start].role == "tool":  # a result whose call is not stored: pin it alone
        return range(index, index + 1)
    return range(start, stop)


def resolve_index(messages: Sequence[Message], index: Any) -> int:
    """``index`` as a raw index of ``messages`` (negative counts from the end)."""
    if not is_int(index):
        raise ConfigError(f"a message index must be an int, got {index!r}")
    resolved = index + len(messages) if index < 0 else index
    if not 0 <= resolved < len(messages):
        raise ConfigError(
            f"message index {index} is out of range: the slot holds {len(messages)} messages"
        )
    return resolved


def pinned_before(messages: Sequence[Message], pinned: Sequence[int], start: int) -> list[Message]:
    """The pinned messages before raw index ``start``, in order."""
    return [messages[index] for index in pinned if index < start and index < len(messages)]
