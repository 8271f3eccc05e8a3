"""The message formats a compactor reads and writes, through :mod:`agentcore.formats`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from agentcore import ConfigError, Message
from agentcore.plugin_api import (
    check_history,
    from_anthropic,
    from_langchain,
    from_openai,
    to_anthropic,
    to_langchain,
    to_openai,
)

MessageFormat = Literal["agentcore", "openai", "anthropic", "langchain"]
"""A format of message lists: agentcore messages, OpenAI Chat Completions dicts,
Anthropic Messages dicts or LangChain messages."""

FORMATS: tuple[str, ...] = ("auto", "agentcore", "openai", "anthropic", "langchain")
"""What a compactor's ``format`` argument takes."""

_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "image", "document", "thinking"})


def detect_format(messages: Sequence[Any], format: str = "auto") -> MessageFormat:
    """The format of ``messages``: ``format`` itself, or what ``"auto"`` reads from them.

    ``"auto"``: agentcore messages, LangChain messages (a class of
    ``langchain_core.messages``), else dicts: Anthropic's when a content
    block is an Anthropic block (``tool_use``, ``tool_result``, ``image``,
    ``document``), OpenAI's otherwise (plain text dicts read the same in
    both; pass ``format="anthropic"`` to get Anthropic turns back).

    :raises ConfigError: an unknown ``format``, a list mixing kinds, or items
        of no known kind; the message names the index.
    """
    if format not in FORMATS:
        raise ConfigError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Sequence):
        raise ConfigError(f"messages must be a list of messages, got {type(messages).__name__}")
    if format != "auto":
        return format  # type: ignore[return-value]
    kinds = [_kind(index, item) for index, item in enumerate(messages)]
    if not kinds:
        return "agentcore"
    first = kinds[0]
    for index, kind in enumerate(kinds):
        if kind != first:
            raise ConfigError(
                f"messages[{index}] is {_KINDS[kind]} but messages[0] is {_KINDS[first]}: "
                "a list holds messages of one kind"
            )
    if first == "dict":
        return "anthropic" if any(_anthropic_blocks(item) for item in messages) else "openai"
    return first  # type: ignore[return-value]


_KINDS = {"agentcore": "an agentcore Message", "dict": "a dict", "langchain": "a LangChain message"}


def _kind(index: int, item: Any) -> str:
    if isinstance(item, Message):
        return "agentcore"
    if isinstance(item, Mapping):
        return "dict"
    if type(item).__module__.startswith("langchain_core.messages"):
        return "langchain"
    raise ConfigError(
        f"messages[{index}] is a {type(item).__name__}: expected an agentcore Message, an "
        "OpenAI or Anthropic message dict, or a LangChain message"
    )


def _anthropic_blocks(item: Mapping[str, Any]) -> bool:
    content = item.get("content")
    if not isinstance(content, list):
        return False
    return any(
        isinstance(part, Mapping) and part.get("type") in _ANTHROPIC_BLOCKS for part in content
    )


def read_messages(messages: Sequence[Any], format: MessageFormat) -> list[Message]:
    """``messages`` of ``format`` as agentcore messages, checked.

    :raises ConfigError: what the converter refuses, naming the index.
    """
    if format == "agentcore":
        history = list(messages)
        check_history(history)
        return history
    if format == "openai":
        return from_openai(messages)
    if format == "anthropic":
        return from_anthropic(messages)
    return from_langchain(messages)


def write_messages(messages: Sequence[Message], format: MessageFormat) -> tuple[Any, list[Any]]:
    """``messages`` in ``format``: ``(system, messages)``.

    ``system`` is Anthropic's system prompt (a string, a list of text blocks,
    or None); for the other formats it is None and system messages stay in
    the list.
    """
    if format == "agentcore":
        return None, list(messages)
    if format == "openai":
        return None, to_openai(messages)
    if format == "anthropic":
        system, turns = to_anthropic(messages)
        return system, turns
    return None, to_langchain(messages)
