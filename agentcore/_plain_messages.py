"""Messages of the plain kinds stored and read without cattrs: the fast path of a turn and a resume.

Text and tool-call messages are most of any history. :func:`plain_message` builds them
from their parsed JSON directly, checking exactly what the classes' validators check, and
hands everything else (other blocks, any field of another JSON type, anything malformed)
back as None, for :mod:`agentcore.serialization`'s converter: cattrs then gives the value
or the error it always gave. :func:`plain_message_dict` does the same the other way for
text-only messages (a turn's user message and reply), and :func:`plain_message_json`
writes their stored JSON directly.
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any

import attrs

from agentcore.messages import (
    MAX_KEPT_COUNTS,
    ROLES,
    ContentBlock,
    Message,
    Role,
    TextBlock,
    ToolUseBlock,
)

_MESSAGE_KEYS = frozenset(("role", "content", "tool_call_id", "is_error"))
_TOOL_USE_KEYS = frozenset(("type", "id", "name", "arguments"))

# The fields the builders below set, in the classes' order. A class that gains a field
# turns the fast path off (every message then goes through cattrs) rather than build
# objects that miss it.
_FIELDS_KNOWN = (
    tuple(f.name for f in attrs.fields(Message))
    == ("role", "content", "tool_call_id", "is_error", "_token_counts")
    and tuple(f.name for f in attrs.fields(TextBlock)) == ("text",)
    and tuple(f.name for f in attrs.fields(ToolUseBlock)) == ("id", "name", "arguments")
)

_new = object.__new__
_set = object.__setattr__


def _text_block(text: str) -> TextBlock:
    block: TextBlock = _new(TextBlock)
    _set(block, "text", text)
    return block


def _tool_use_block(item: dict[str, Any]) -> ToolUseBlock | None:
    if not _TOOL_USE_KEYS.issuperset(item):
        return None
    block_id, name = item.get("id"), item.get("name")
    arguments = item.get("arguments", {})
    if type(block_id) is not str or type(name) is not str or type(arguments) is not dict:
        return None
    if not block_id or not name:
        return None  # ToolUseBlock refuses an empty id or name: cattrs says so
    block: ToolUseBlock = _new(ToolUseBlock)
    _set(block, "id", block_id)
    _set(block, "name", name)
    _set(block, "arguments", dict(arguments))
    return block


def text_message(role: Role, text: str) -> Message:
    """``Message(role, text)``, built without running validators that hold for a str text.

    Equal to what the constructor builds (a turn's user message is made this way); a
    tool result, or text of another type, goes through the constructor.
    """
    if not _FIELDS_KNOWN or type(text) is not str or role not in ROLES or role == "tool":
        return Message(role, text)
    message: Message = _new(Message)
    _set(message, "role", role)
    _set(message, "content", (_text_block(text),))
    _set(message, "tool_call_id", None)
    _set(message, "is_error", False)
    _set(message, "_token_counts", ())
    return message


def plain_message(data: Any, counts: tuple[tuple[str, int], ...] = ()) -> Message | None:
    """``data`` (parsed JSON) as a :class:`Message` when it is a plain one; else None.

    Plain: text and tool-call blocks only, every field of exactly the JSON type it is
    stored as, no key the format does not have, and a message :class:`Message` itself
    would accept. The result equals what the converter builds from ``data``, carrying
    ``counts`` as its token counts (see :func:`~agentcore.messages.token_counts`; at most
    :data:`~agentcore.messages.MAX_KEPT_COUNTS` of them, newest first).
    """
    if not _FIELDS_KNOWN or type(data) is not dict or not _MESSAGE_KEYS.issuperset(data):
        return None
    role = data.get("role")
    tool_call_id = data.get("tool_call_id")
    is_error = data.get("is_error", False)
    content = data.get("content", ())
    if type(role) is not str or role not in ROLES or type(is_error) is not bool:
        return None
    if role == "tool":
        if type(tool_call_id) is not str or not tool_call_id:
            return None
    elif tool_call_id is not None:
        return None
    if type(content) is not list and content != ():
        return None
    blocks: list[ContentBlock] = []
    for item in content:
        if type(item) is not dict:
            return None
        kind = item.get("type")
        block: ContentBlock | None
        if kind == "text":
            text = item.get("text")
            if len(item) != 2 or type(text) is not str:
                return None
            block = _text_block(text)
        elif kind == "tool_use":
            block = _tool_use_block(item)
            if block is None:
                return None
        else:
            return None
        blocks.append(block)
    message: Message = _new(Message)
    _set(message, "role", role)
    _set(message, "content", tuple(blocks))
    _set(message, "tool_call_id", tool_call_id)
    _set(message, "is_error", is_error)
    _set(message, "_token_counts", counts[:MAX_KEPT_COUNTS])
    return message


def plain_message_dict(message: Message) -> dict[str, Any] | None:
    """``message`` as the converter unstructures it, when it holds text blocks only; else None.

    The dict equals the converter's (the same keys, in the same order, defaults
    left out); a message with any other block goes through cattrs.
    """
    if not _FIELDS_KNOWN:
        return None
    content = []
    for block in message.content:
        if type(block) is not TextBlock:
            return None
        content.append({"text": block.text, "type": "text"})
    data: dict[str, Any] = {"role": message.role}
    if content:
        data["content"] = content
    if message.tool_call_id is not None:
        data["tool_call_id"] = message.tool_call_id
    if message.is_error:
        data["is_error"] = True
    return data


def plain_message_json(
    message: Message, counts: tuple[tuple[str, int], ...], counts_key: str
) -> str | None:
    """The stored JSON of a text-only ``message`` with ``counts``; None for any other message.

    The text is the one ``json.dumps(data, ensure_ascii=False, separators=(",", ":"))``
    makes of :func:`plain_message_dict`'s dict with the counts under ``counts_key``
    (a stored message's body), written without building that dict: a turn stores two
    such messages. ``json.encoder.encode_basestring`` quotes each string as the encoder does.
    """
    if not _FIELDS_KNOWN or message.tool_call_id is not None or message.is_error:
        return None
    parts = ['{"role":', encode_basestring(message.role)]
    content = message.content
    if content:
        separator = ',"content":[{"text":'
        for block in content:
            if type(block) is not TextBlock:
                return None
            parts += (separator, encode_basestring(block.text), ',"type":"text"}')
            separator = ',{"text":'
        parts.append("]")
    if counts:
        separator = "{"
        parts += (",", encode_basestring(counts_key), ":")
        for key, count in counts:
            parts += (separator, encode_basestring(key), ":", str(int(count)))
            separator = ","
        parts.append("}")
    parts.append("}")
    return "".join(parts)
