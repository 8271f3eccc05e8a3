"""Histories to and from Anthropic Messages dicts, the system prompt kept apart.

:func:`from_anthropic` reads the ``messages`` list of a Messages API request
(and its ``system``): ``text``, ``image``, ``document``, ``tool_use`` and
``tool_result`` blocks. :func:`to_anthropic` writes that list with the
encoder the Anthropic provider sends requests with, without the changes it
makes to have a request accepted (no leading user turn is added, nothing
is moved), so what goes in comes out.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from agentcore.errors import ConfigError
from agentcore.formats._check import (
    at,
    check_history,
    check_messages,
    expect_items,
    expect_mapping,
    expect_text,
)
from agentcore.messages import ContentBlock, FileBlock, ImageBlock, Message, TextBlock
from agentcore.providers._anthropic_codec import decode_reply_block, encode_turns

__all__ = ["from_anthropic", "to_anthropic"]

SystemPrompt = str | list[dict[str, Any]] | None
"""Anthropic's ``system``: a string, a list of text blocks, or None for none."""

_SKIPPED = ("thinking", "redacted_thinking")
"""Assistant blocks agentcore has no place for; they are left out."""


def to_anthropic(messages: Sequence[Message]) -> tuple[SystemPrompt, list[dict[str, Any]]]:
    """``messages`` as ``(system, messages)`` of a Messages API request.

    System messages, wherever they stand, make ``system``: None for none, a
    string for one, a list of text blocks for several (no text is changed).
    Tool results become ``tool_result`` blocks of a user turn (``is_error``
    kept); consecutive messages of one role merge into one turn; blank text
    blocks are left out. Audio raises, as the API takes none.

    :raises ConfigError: a history :func:`~agentcore.formats.check_history`
        refuses, or a block the API cannot carry; the error names the index.
    """
    check_history(messages)
    try:
        systems, turns = encode_turns(messages)
    except Exception:
        for index, message in enumerate(messages):  # find the one at fault
            with at(index):
                encode_turns([message])
        raise
    system: SystemPrompt = None
    if len(systems) == 1:
        system = systems[0]
    elif systems:
        system = [{"type": "text", "text": text} for text in systems]
    return system, turns


def from_anthropic(
    messages: Sequence[Mapping[str, Any]], system: SystemPrompt = None
) -> list[Message]:
    """``system`` and Messages API turns as agentcore messages.

    ``system`` (a string or a list of text blocks) gives one system message
    per text, first. A user turn gives a tool result message per
    ``tool_result`` block and a user message for each run of other blocks,
    in their order; an assistant turn gives one assistant message
    (``thinking`` blocks are left out). A ``document`` becomes a
    :class:`~agentcore.messages.FileBlock` named by its ``title``.

    :raises ConfigError: an unknown role or block, a malformed turn, or a
        tool result whose call no earlier turn makes; the error names the
        index of the turn (and of the block).
    """
    decoded: list[Message] = []
    origins: list[str] = []
    for position, text in enumerate(_system_texts(system)):
        decoded.append(Message.system(text))
        origins.append(f"system[{position}]")
    for index, raw in enumerate(expect_items(messages, "the Anthropic messages")):
        with at(index):
            turn = _decode_turn(expect_mapping(raw, "a message"))
        decoded.extend(turn)
        origins.extend(f"messages[{index}]" for _ in turn)
    check_messages(decoded, origins.__getitem__)
    return decoded


def _system_texts(system: SystemPrompt) -> list[str]:
    if system is None:
        return []
    if isinstance(system, str):
        return [system] if system else []
    texts = []
    for position, block in enumerate(expect_items(system, "system")):
        block = expect_mapping(block, f"system[{position}]")
        if block.get("type") != "text":
            raise ConfigError(f"system[{position}] is a {block.get('type')!r} block; it takes text")
        texts.append(expect_text(block.get("text"), f"system[{position}].text"))
    return texts


def _decode_turn(raw: Mapping[str, Any]) -> list[Message]:
    role = raw.get("role")
    content = raw.get("content")
    if role == "system":
        raise ConfigError(
            "the Messages API keeps the system prompt apart: pass it as system=, not as a message"
        )
    if role not in ("user", "assistant"):
        raise ConfigError(f"unknown role {role!r}; expected 'user' or 'assistant'")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    blocks = expect_items(blocks, f"the content of a {role} turn")
    if role == "assistant":
        kept: list[ContentBlock] = []
        for position, block in enumerate(blocks):
            where = f"content[{position}]"
            if expect_mapping(block, where).get("type") in _SKIPPED:
                continue
            decoded = decode_reply_block(block, where)
            if decoded is None:
                raise ConfigError(
                    f"{where} is a {block.get('type')!r} block; an assistant turn takes "
                    "text, tool_use and thinking blocks"
                )
            if not (isinstance(decoded, TextBlock) and not decoded.text):
                kept.append(decoded)
        return [Message("assistant", kept)]
    out: list[Message] = []
    pending: list[ContentBlock] = []
    for position, block in enumerate(blocks):
        where = f"content[{position}]"
        block = expect_mapping(block, where)
        if block.get("type") != "tool_result":
            pending.append(decode_block(block, where))
            continue
        if pending:
            out.append(Message("user", pending))
            pending = []
        out.append(_tool_result(block, where))
    if pending or not out:
        out.append(Message("user", pending))
    return out


def _tool_result(block: Mapping[str, Any], where: str) -> Message:
    call_id = expect_text(block.get("tool_use_id"), f"{where}.tool_use_id")
    content = block.get("content")
    if content is None:
        parts: list[ContentBlock] = []
    elif isinstance(content, str):
        parts = [TextBlock(content)]
    else:
        parts = [
            decode_block(expect_mapping(part, f"{where}.content[{i}]"), f"{where}.content[{i}]")
            for i, part in enumerate(expect_items(content, f"{where}.content"))
        ]
    failed = block.get("is_error", False)
    if not isinstance(failed, bool):
        raise ConfigError(f"{where}.is_error should be true or false, got {failed!r}")
    return Message("tool", parts, tool_call_id=call_id, is_error=failed)


def decode_block(block: Mapping[str, Any], where: str) -> ContentBlock:
    """A ``text``, ``image`` or ``document`` block of a user turn or a tool result."""
    kind = block.get("type")
    if kind == "text":
        return TextBlock(expect_text(block.get("text"), f"{where}.text"))
    if kind == "image":
        source = expect_mapping(block.get("source"), f"{where}.source")
        if source.get("type") == "url":
            return ImageBlock(url=expect_text(source.get("url"), f"{where}.source.url"))
        if source.get("type") == "base64":
            return ImageBlock(
                media_type=expect_text(source.get("media_type"), f"{where}.source.media_type"),
                data=expect_text(source.get("data"), f"{where}.source.data"),
            )
        raise ConfigError(f"{where}.source has type {source.get('type')!r}; expected base64 or url")
    if kind == "document":
        return _document(block, where)
    if kind == "tool_use":
        raise ConfigError(f"{where} is a tool_use block; tool calls belong in an assistant turn")
    raise ConfigError(
        f"{where} is a block of unknown type {kind!r}; expected text, image, document "
        "or tool_result"
    )


def _document(block: Mapping[str, Any], where: str) -> FileBlock:
    title = block.get("title")
    name = expect_text(title, f"{where}.title") if title is not None else "document"
    source = expect_mapping(block.get("source"), f"{where}.source")
    kind = source.get("type")
    if kind == "url":
        return FileBlock(name=name, url=expect_text(source.get("url"), f"{where}.source.url"))
    media_type = expect_text(source.get("media_type"), f"{where}.source.media_type")
    data = expect_text(source.get("data"), f"{where}.source.data")
    if kind == "text":
        encoded = base64.b64encode(data.encode("utf-8")).decode("ascii")
        return FileBlock(name=name, media_type=media_type, data=encoded)
    if kind == "base64":
        return FileBlock(name=name, media_type=media_type, data=data)
    raise ConfigError(f"{where}.source has type {kind!r}; expected base64, text or url")
