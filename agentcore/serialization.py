"""The one cattrs converter that defines agentcore's stored JSON format."""

from __future__ import annotations

import json
from typing import Any, TypeVar

import cattrs
from cattrs.preconf.json import make_converter
from cattrs.strategies import configure_tagged_union

from agentcore._plain_messages import plain_message as plain_message
from agentcore.errors import CorruptDataError
from agentcore.messages import (
    AudioBlock,
    ContentBlock,
    FileBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    ReasoningBlock,
    TextBlock,
    ToolUseBlock,
)

T = TypeVar("T")

_BLOCK_TAGS: dict[type[Any], str] = {
    TextBlock: "text",
    ToolUseBlock: "tool_use",
    ImageBlock: "image",
    AudioBlock: "audio",
    FileBlock: "file",
    ReasoningBlock: "reasoning",
    OpaqueBlock: "opaque",
}

converter = make_converter(omit_if_default=True, forbid_extra_keys=True)
"""The converter every stored record goes through."""

configure_tagged_union(
    ContentBlock,
    converter,
    tag_generator=lambda cls: _BLOCK_TAGS[cls],
    tag_name="type",
)


def message_to_dict(message: Message) -> dict[str, Any]:
    """``message`` as a JSON-ready dict."""
    result: dict[str, Any] = converter.unstructure(message, Message)
    return result


def message_from_dict(data: Any) -> Message:
    """The message that :func:`message_to_dict` turned into ``data``."""
    message = plain_message(data)
    return converter.structure(data, Message) if message is None else message


def message_to_json(message: Message) -> str:
    """``message`` as JSON text without spaces between items."""
    return json.dumps(message_to_dict(message), ensure_ascii=False, separators=(",", ":"))


def message_from_json(text: str, *, where: str = "message") -> Message:
    """Parse a message stored as JSON; errors name ``where``."""
    return structure_json(text, Message, where=where)


def structure_json(text: str, cls: type[T], *, where: str) -> T:
    """Parse ``text`` as JSON into ``cls``.

    A failure raises :class:`CorruptDataError` naming ``where``.
    """
    return structure_value(parse_json(text, where=where), cls, where=where)


def parse_json(text: str, *, where: str) -> Any:
    """The JSON value stored as ``text``; invalid JSON raises :class:`CorruptDataError`."""
    try:
        return json.loads(text)
    except (TypeError, ValueError) as exc:
        raise CorruptDataError(f"stored {where} is not valid JSON: {exc}") from exc


def structure_value(data: Any, cls: type[T], *, where: str) -> T:
    """Parsed JSON ``data`` as ``cls``; a mismatch raises :class:`CorruptDataError`."""
    if cls is Message:
        message = plain_message(data)
        if message is not None:
            return message  # type: ignore[return-value]
    try:
        return converter.structure(data, cls)
    except (cattrs.BaseValidationError, AttributeError, TypeError, ValueError, KeyError) as exc:
        detail = (
            "; ".join(cattrs.transform_error(exc))
            if isinstance(exc, cattrs.BaseValidationError)
            else str(exc)
        )
        raise CorruptDataError(f"stored {where} does not match its format: {detail}") from exc
