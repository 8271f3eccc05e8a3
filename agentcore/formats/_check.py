"""Checks every converter and the history import share: what makes a list a history."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from agentcore.errors import BadRequestError, ConfigError, MalformedResponseError
from agentcore.messages import Message, ToolUseBlock, invalid_text


def check_history(messages: Sequence[Message]) -> None:
    """Refuse ``messages`` unless they form a history a session can hold.

    Every item is a :class:`~agentcore.messages.Message` whose text is valid
    Unicode; tool calls stand only in assistant messages, each call id once;
    every tool result answers a call of an earlier assistant message, and
    no call is answered twice. A call without its result is allowed (an
    interrupted turn): providers send it as text.

    :raises ConfigError: naming the index of the first message at fault and
        what is wrong with it.
    """
    check_messages(messages, lambda index: f"messages[{index}]")


def check_messages(messages: Sequence[Message], name: Callable[[int], str]) -> None:
    """:func:`check_history`, naming message ``index`` as ``name(index)`` in errors."""
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise ConfigError(f"a history must be a list of Message, got {type(messages).__name__}")
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            raise ConfigError(f"{name(index)} is not a Message: {message!r}")
        problem = invalid_text(message)
        if problem is not None:
            raise ConfigError(f"{name(index)} is not valid Unicode: {problem}")
        for block in message.content:
            if not isinstance(block, ToolUseBlock):
                continue
            if message.role != "assistant":
                raise ConfigError(
                    f"{name(index)} is a {message.role} message holding a tool call "
                    f"({block.name!r}); tool calls belong in assistant messages"
                )
            if block.id in calls:
                raise ConfigError(
                    f"{name(index)}: tool call id {block.id!r} was already used by "
                    f"{name(calls[block.id])}; each call needs its own id"
                )
            calls[block.id] = index
        if message.role == "tool":
            call_id = message.tool_call_id or ""
            if call_id not in calls:
                raise ConfigError(
                    f"{name(index)} is the result of tool call {call_id!r}, but no "
                    "earlier assistant message makes that call"
                )
            if call_id in answered:
                raise ConfigError(f"{name(index)} answers tool call {call_id!r} a second time")
            answered.add(call_id)


@contextmanager
def at(index: int, what: str = "messages") -> Iterator[None]:
    """Turn an error raised while converting item ``index`` into a ConfigError naming it."""
    try:
        yield
    except ConfigError as exc:
        if str(exc).startswith(f"{what}["):
            raise
        raise ConfigError(f"{what}[{index}]: {exc}") from exc
    except (BadRequestError, MalformedResponseError, ValueError, TypeError) as exc:
        raise ConfigError(f"{what}[{index}]: {exc}") from exc


def expect_mapping(value: Any, what: str) -> dict[str, Any]:
    """``value`` if it is a dict, else ConfigError naming ``what``."""
    if not isinstance(value, dict):
        raise ConfigError(f"{what} should be a dict, got {type(value).__name__}: {value!r:.80}")
    return value


def expect_text(value: Any, what: str) -> str:
    """``value`` if it is a str, else ConfigError naming ``what``."""
    if not isinstance(value, str):
        raise ConfigError(f"{what} should be a str, got {type(value).__name__}: {value!r:.80}")
    return value


def expect_items(value: Any, what: str) -> Sequence[Any]:
    """``value`` if it is a list or tuple, else ConfigError naming ``what``."""
    if not isinstance(value, list | tuple):
        raise ConfigError(f"{what} should be a list, got {type(value).__name__}: {value!r:.80}")
    return value


def split_data_url(url: str) -> tuple[str, str] | None:
    """``(media type, base64 data)`` of a ``data:<type>;base64,<data>`` URL, else None."""
    if not url.startswith("data:"):
        return None
    head, comma, data = url[5:].partition(",")
    if not comma or not head.endswith(";base64"):
        return None
    return head[: -len(";base64")] or "application/octet-stream", data
