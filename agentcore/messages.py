"""Chat messages and their content blocks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import attrs
from attrs import field, frozen

Role = Literal["system", "user", "assistant", "tool"]
"""The author of a message."""

ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


def _non_empty(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not value:
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must not be empty")


@frozen
class TextBlock:
    """Plain text."""

    text: str = field(validator=attrs.validators.instance_of(str))

    @property
    def kind(self) -> str:
        """The block's kind as it appears in stored JSON: ``"text"``."""
        return "text"


@frozen
class ToolUseBlock:
    """A request by the assistant to call the tool ``name`` with ``arguments``.

    ``id`` links the call to the tool result message that answers it.
    """

    id: str = field(validator=[attrs.validators.instance_of(str), _non_empty])
    name: str = field(validator=[attrs.validators.instance_of(str), _non_empty])
    arguments: Mapping[str, Any] = field(factory=dict)

    @property
    def kind(self) -> str:
        """The block's kind as it appears in stored JSON: ``"tool_use"``."""
        return "tool_use"


@frozen
class ImageBlock:
    """An image, given inline as base64 ``data`` or by ``url``."""

    media_type: str = "image/png"
    data: str | None = None
    url: str | None = None

    def __attrs_post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise ValueError("ImageBlock needs exactly one of data= (base64) or url=")

    @property
    def kind(self) -> str:
        """The block's kind as it appears in stored JSON: ``"image"``."""
        return "image"


@frozen
class AudioBlock:
    """Audio given inline as base64 ``data``."""

    data: str
    media_type: str = "audio/wav"

    @property
    def kind(self) -> str:
        """The block's kind as it appears in stored JSON: ``"audio"``."""
        return "audio"


@frozen
class FileBlock:
    """A file attached to a message, inline as base64 ``data`` or by ``url``."""

    name: str
    media_type: str = "application/octet-stream"
    data: str | None = None
    url: str | None = None

    @property
    def kind(self) -> str:
        """The block's kind as it appears in stored JSON: ``"file"``."""
        return "file"


ContentBlock = TextBlock | ToolUseBlock | ImageBlock | AudioBlock | FileBlock
"""Any block a message's content may hold."""

BLOCK_TYPES: tuple[type[ContentBlock], ...] = (
    TextBlock,
    ToolUseBlock,
    ImageBlock,
    AudioBlock,
    FileBlock,
)


def _to_blocks(value: str | Iterable[ContentBlock]) -> tuple[ContentBlock, ...]:
    if isinstance(value, str):
        return (TextBlock(value),)
    blocks = tuple(value)
    for block in blocks:
        if not isinstance(block, BLOCK_TYPES):
            raise TypeError(f"message content must hold content blocks, not {block!r}")
    return blocks


@frozen
class Message:
    """One message of a conversation.

    A message has a ``role`` and a tuple of content blocks. A tool result is a
    message with role ``"tool"`` whose ``tool_call_id`` names the
    :class:`ToolUseBlock` it answers; ``is_error`` marks a failed call.
    Build messages with the class methods: :meth:`system`, :meth:`user`,
    :meth:`assistant`, :meth:`tool_result` and :meth:`user_image`.
    """

    role: Role = field(validator=attrs.validators.in_(ROLES))
    content: tuple[ContentBlock, ...] = field(converter=_to_blocks, factory=tuple)
    tool_call_id: str | None = None
    is_error: bool = False

    def __attrs_post_init__(self) -> None:
        if self.role == "tool" and not self.tool_call_id:
            raise ValueError("a tool result message needs a tool_call_id")
        if self.role != "tool" and self.tool_call_id is not None:
            raise ValueError(f"a {self.role} message cannot carry a tool_call_id")

    @classmethod
    def system(cls, text: str) -> Message:
        """A system message holding ``text``."""
        return cls("system", text)

    @classmethod
    def user(cls, content: str | Iterable[ContentBlock]) -> Message:
        """A user message holding ``content`` (text or blocks)."""
        return cls("user", content)

    @classmethod
    def assistant(cls, text: str = "", tool_calls: Iterable[ToolUseBlock] = ()) -> Message:
        """An assistant message: optional ``text`` followed by ``tool_calls``."""
        blocks: list[ContentBlock] = [TextBlock(text)] if text else []
        blocks.extend(tool_calls)
        return cls("assistant", blocks)

    @classmethod
    def tool_result(cls, tool_call_id: str, content: str, *, is_error: bool = False) -> Message:
        """The result of the tool call ``tool_call_id``."""
        return cls("tool", content, tool_call_id=tool_call_id, is_error=is_error)

    @classmethod
    def user_image(
        cls,
        *,
        data: str | None = None,
        url: str | None = None,
        media_type: str = "image/png",
        text: str = "",
    ) -> Message:
        """A user message carrying an image and, optionally, text about it."""
        blocks: list[ContentBlock] = [ImageBlock(media_type=media_type, data=data, url=url)]
        if text:
            blocks.append(TextBlock(text))
        return cls("user", blocks)

    @property
    def text(self) -> str:
        """The text blocks of the message joined together."""
        return "".join(block.text for block in self.content if isinstance(block, TextBlock))

    @property
    def tool_calls(self) -> tuple[ToolUseBlock, ...]:
        """The tool calls this (assistant) message asks for, in order."""
        return tuple(block for block in self.content if isinstance(block, ToolUseBlock))
