"""The attachments of a conversation: message parts that are not text, and their records.

An attachment is an image, a file or audio (:class:`~agentcore.ImageBlock`,
:class:`~agentcore.FileBlock`, :class:`~agentcore.AudioBlock`). A summary turns
text into text; an attachment it covers is either still sent (a kept image, see
``SummaryConfig.keep_images``) or named by an :class:`AttachmentRecord` in the
summary's record (``agentcore_autosummary.applying.record``), never dropped
without a word.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from attrs import frozen

from agentcore import AudioBlock, FileBlock, ImageBlock, Message

Attachment = ImageBlock | FileBlock | AudioBlock
"""A message part that is not text and that a model reads: an image, a file, audio."""

ATTACHMENT_TYPES = (ImageBlock, FileBlock, AudioBlock)

MAX_NAME_CHARS = 80
"""An attachment's name is cut to this many characters where it is written out."""

_SPACES = re.compile(r"\s+")


@frozen
class AttachmentRecord:
    """What an attachment a summary replaced was: written into the summary's record.

    :param kind: ``"image"``, ``"file"`` or ``"audio"``.
    :param index: The raw index of the message that held it, in its slot.
    :param turn: The turn that wrote that message (None when the plugin did not see
        it written: an imported history, a turn run without the plugin).
    :param name: The file's name, or the last segment of an image's URL path
        (None for an inline image and for audio).
    :param media_type: Its media type (``"image/png"``).
    :param size: Its size in bytes (the base64 data decoded), or None for one given by URL.
    :param count: How many attachments of ``kind`` it stands for: 1, or more for the
        oldest ones of a long record, counted together (see ``folded``), which
        the messages ``index`` to ``last`` held.
    :param last: The raw index of the last message a counted record covers (None: 1).
    """

    kind: str
    index: int
    turn: int | None = None
    name: str | None = None
    media_type: str = ""
    size: int | None = None
    count: int = 1
    last: int | None = None


MAX_STORED_RECORDS = 64
"""The most records a slot's state keeps one by one; older ones are counted together."""


def folded(records: tuple[AttachmentRecord, ...]) -> tuple[AttachmentRecord, ...]:
    """``records`` (oldest first) with all but the newest :data:`MAX_STORED_RECORDS` counted.

    The older ones become one record per kind (``count``, ``index`` to ``last``),
    so the state a slot stores, and so each of its writes, stays bounded however
    many attachments the conversation had. A record names at most a line per 50
    tokens of the summary's cap one by one (fewer than this), so the text it
    writes is the same.
    """
    if len(records) <= MAX_STORED_RECORDS:
        return records
    older, newest = records[:-MAX_STORED_RECORDS], records[-MAX_STORED_RECORDS:]
    by_kind: dict[str, list[AttachmentRecord]] = {}
    for record in older:
        by_kind.setdefault(record.kind, []).append(record)
    counted = [
        AttachmentRecord(
            kind=kind,
            index=min(record.index for record in group),
            count=sum(record.count for record in group),
            last=max(record.last if record.last is not None else record.index for record in group),
        )
        for kind, group in by_kind.items()
    ]
    return (*sorted(counted, key=lambda record: record.index), *newest)


def attachments(message: Message) -> list[Attachment]:
    """The attachments ``message`` holds, in order."""
    return [block for block in message.content if isinstance(block, ATTACHMENT_TYPES)]


def has_attachments(message: Message) -> bool:
    """Whether ``message`` holds an attachment."""
    return any(isinstance(block, ATTACHMENT_TYPES) for block in message.content)


def image_count(message: Message) -> int:
    """How many images ``message`` holds."""
    return sum(isinstance(block, ImageBlock) for block in message.content)


def decoded_size(data: str) -> int:
    """The bytes the base64 ``data`` encodes (whitespace and padding aside)."""
    length = len("".join(data.split()).rstrip("="))
    return length * 3 // 4


def attachment_name(block: Attachment) -> str | None:
    """A file's name, an image's URL's last path segment, else None; cut for writing out."""
    if isinstance(block, FileBlock):
        name: str | None = block.name
    elif isinstance(block, ImageBlock) and block.url is not None:
        name = _url_name(block.url)
    else:
        name = None
    if not name:
        return None
    name = _SPACES.sub(" ", name).strip().replace('"', "'")
    if len(name) > MAX_NAME_CHARS:
        name = name[: MAX_NAME_CHARS - 1] + "…"
    return name or None


def _url_name(url: str) -> str | None:
    """The last segment of ``url``'s path, decoded; None for a ``data:`` URL or none."""
    if url.startswith("data:"):
        return None
    try:
        path = urlsplit(url).path
    except ValueError:
        return None
    return unquote(path.rstrip("/").rpartition("/")[2]) or None


def record_of(block: Attachment, index: int, turn: int | None) -> AttachmentRecord:
    """The record of ``block``, held by raw message ``index`` that ``turn`` wrote."""
    data = block.data
    return AttachmentRecord(
        kind=block.kind,
        index=index,
        turn=turn,
        name=attachment_name(block),
        media_type=block.media_type,
        size=None if data is None else decoded_size(data),
    )


def records_of(message: Message, index: int, turn: int | None) -> list[AttachmentRecord]:
    """The records of every attachment of ``message`` (raw ``index``, written by ``turn``)."""
    return [record_of(block, index, turn) for block in attachments(message)]


def describe(record: AttachmentRecord) -> str:
    """``record`` in a few words: ``image "cat.png" (image/png, 1,234 bytes)``."""
    name = f' "{record.name}"' if record.name else ""
    size = "by URL" if record.size is None else f"{record.size:,} bytes"
    media = f"{record.media_type}, " if record.media_type else ""
    return f"{record.kind}{name} ({media}{size})"


def place(record: AttachmentRecord) -> str:
    """Where ``record``'s attachment was sent: ``turn 3, message 5`` (``message 5`` alone)."""
    if record.turn is None:
        return f"message {record.index}"
    return f"turn {record.turn}, message {record.index}"
