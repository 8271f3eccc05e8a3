"""Chat messages and their content blocks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
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


@frozen
class ReasoningBlock:
    """The model's reasoning before its answer, as the provider's wire carries it.

    ``text`` is the reasoning (OpenAI-compatible servers' ``reasoning_content``,
    Anthropic's ``thinking``, the text of an OpenAI Responses reasoning item).
    ``signature`` is Anthropic's signature of a thinking block and ``data``
    the encrypted content of a redacted one (``text`` then empty); the
    Anthropic provider sends such blocks back, as its API wants them in a
    tool loop, and leaves out blocks with neither. ``id`` is the id of an
    OpenAI Responses reasoning item (``rs_...``), whose ``data`` is then the
    item's ``encrypted_content``; the Responses provider sends such blocks
    back as reasoning items, and the Anthropic provider leaves them out
    (another provider's). The Chat Completions provider never sends
    reasoning back. Not part of :attr:`Message.text`.
    """

    text: str = field(default="", validator=attrs.validators.instance_of(str))
    signature: str | None = None
    data: str | None = None
    id: str | None = None

    @property
    def kind(self) -> str:
        """The block's kind as it appears in stored JSON: ``"reasoning"``."""
        return "reasoning"


def _json_object(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise ValueError(f"{type(instance).__name__}.{attribute.name} must be a JSON object")


@frozen
class OpaqueBlock:
    """An item of a provider's API that only that API reads, kept to be sent back as it came.

    ``api`` names the wire format that made it (``"openai-responses"``) and
    ``item`` is the item's JSON, unchanged: an encrypted item a server
    returns and expects back in later requests, which agentcore cannot read.
    The provider of ``api`` sends it back in its place; the other providers
    leave it out of their requests. ``tokens`` is what it costs in a request
    when the server said so (None: estimated from its JSON's length). Not
    part of :attr:`Message.text`.
    """

    api: str = field(validator=[attrs.validators.instance_of(str), _non_empty])
    item: Mapping[str, Any] = field(validator=_json_object)
    tokens: int | None = field(
        default=None,
        validator=attrs.validators.optional(
            [attrs.validators.instance_of(int), attrs.validators.ge(0)]
        ),
    )

    @property
    def kind(self) -> str:
        """The block's kind as it appears in stored JSON: ``"opaque"``."""
        return "opaque"

    @property
    def item_type(self) -> str | None:
        """The item's own ``"type"`` field, when it has a string one."""
        value = self.item.get("type")
        return value if isinstance(value, str) else None


ContentBlock = (
    TextBlock | ToolUseBlock | ImageBlock | AudioBlock | FileBlock | ReasoningBlock | OpaqueBlock
)
"""Any block a message's content may hold."""

BLOCK_TYPES: tuple[type[ContentBlock], ...] = (
    TextBlock,
    ToolUseBlock,
    ImageBlock,
    AudioBlock,
    FileBlock,
    ReasoningBlock,
    OpaqueBlock,
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
    _token_counts: tuple[tuple[str, int], ...] = field(
        default=(), init=False, eq=False, hash=False, repr=False
    )

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
    def reasoning(self) -> str:
        """The text of the message's reasoning blocks joined together (``""`` when none)."""
        return "".join(block.text for block in self.content if isinstance(block, ReasoningBlock))

    @property
    def tool_calls(self) -> tuple[ToolUseBlock, ...]:
        """The tool calls this (assistant) message asks for, in order."""
        return tuple(block for block in self.content if isinstance(block, ToolUseBlock))


# -- token counts a message carries ---------------------------------------------

MAX_KEPT_COUNTS = 2
"""How many counters' counts one message keeps (the turn model's and a plugin's model's)."""


def token_counts(message: Message) -> tuple[tuple[str, int], ...]:
    """The token counts ``message`` carries: ``(counter key, count)`` pairs, newest first.

    A :class:`~agentcore.tokens.TokenCounter` keeps its count of a message on
    the message, under its :attr:`~agentcore.tokens.TokenCounter.key`; stores
    save the counts with the message and give them back when it is loaded, so
    a resumed session does not count its history again.
    """
    return message._token_counts


def set_token_count(message: Message, key: str, count: int) -> None:
    """Keep ``count`` on ``message`` as the count of the counter ``key``.

    At most :data:`MAX_KEPT_COUNTS` counters' counts are kept; the oldest
    other one is dropped. A message's fields never change: the count is a
    cache beside them (not part of equality, hashing or ``repr``).
    """
    kept = tuple(pair for pair in message._token_counts if pair[0] != key)
    object.__setattr__(message, "_token_counts", ((key, count), *kept)[:MAX_KEPT_COUNTS])


# -- text validity ------------------------------------------------------------


def valid_text(text: str) -> str:
    r"""``text`` as valid Unicode: surrogate pairs joined, lone surrogates made U+FFFD.

    A provider may hand over an emoji as two surrogates (a pair split across
    stream chunks, or JSON ``\ud83d\ude00`` escapes decoded one by one);
    they are joined into the one character they encode. A surrogate without
    its partner becomes the replacement character. Valid text comes back
    unchanged (the same object).
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _valid_value(value: Any) -> Any:
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, Mapping):
        return {_valid_value(key): _valid_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_valid_value(item) for item in value)
    return value


def _invalid_text(value: Any, where: str) -> str | None:
    """Where in ``value`` text that cannot be encoded as UTF-8 sits, or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return (
                f"{where} holds the surrogate code point {value[exc.start]!r} at index "
                f"{exc.start}, which UTF-8 cannot encode"
            )
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            problem = _invalid_text(key, f"a key of {where}") or _invalid_text(
                item, f"{where}[{key!r}]"
            )
            if problem:
                return problem
    elif isinstance(value, Sequence) and not isinstance(value, str):
        for index, item in enumerate(value):
            problem = _invalid_text(item, f"{where}[{index}]")
            if problem:
                return problem
    return None


def invalid_text(message: Message) -> str | None:
    """Describe the first text of ``message`` that is not valid Unicode, or None when all is."""
    if message.tool_call_id is None and _plain_valid(message.content):
        return None
    problem = _invalid_text(message.tool_call_id, "tool_call_id")
    for index, block in enumerate(message.content):
        if problem:
            break
        for attribute in attrs.fields(type(block)):
            where = f"content[{index}].{attribute.name}"
            problem = _invalid_text(getattr(block, attribute.name), where)
            if problem:
                break
    return problem


def _plain_valid(content: Sequence[ContentBlock]) -> bool:
    """Whether ``content`` is text blocks only, all valid: the common case, checked fast."""
    for block in content:
        if type(block) is not TextBlock:
            return False
        try:
            block.text.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True


def make_valid(message: Message) -> Message:
    """``message`` with every text made valid by :func:`valid_text`.

    Text blocks, tool call ids, names and arguments (keys and values) and
    every other string field are covered. A valid message comes back
    unchanged (the same object).
    """
    if invalid_text(message) is None:
        return message
    blocks = [
        attrs.evolve(
            block,
            **{
                attribute.name: _valid_value(getattr(block, attribute.name))
                for attribute in attrs.fields(type(block))
            },
        )
        for block in message.content
    ]
    return attrs.evolve(
        message, content=tuple(blocks), tool_call_id=_valid_value(message.tool_call_id)
    )
