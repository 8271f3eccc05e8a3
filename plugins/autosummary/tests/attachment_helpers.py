"""Helpers of the tests of attachments across a summary (images, files, audio)."""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence

from agentcore import (
    AgentSession,
    AudioBlock,
    FileBlock,
    ImageBlock,
    LlmRequest,
    Message,
    TextBlock,
)
from agentcore.plugin_api import DEFAULT_SUMMARY_LABEL
from agentcore_autosummary import SummaryConfig
from agentcore_autosummary.applying.record import RECORD_HEADING

Attachment = ImageBlock | FileBlock | AudioBlock

RECORD_LINE = re.compile(r"^- (image|file|audio)\b.*?, (?:turn (\d+), )?message (\d+)$")
EARLIER_LINE = re.compile(r"^- \d+ earlier: (.*), messages (\d+) to (\d+)$")


def config(**overrides: object) -> SummaryConfig:
    fields: dict[str, object] = {
        "max_context_tokens": 8000,
        "max_summary_tokens": 200,
        "trigger_messages": 6,
        "keep_recent_messages": 2,
        "debounce_turns": 0,
        "request_shape": "transcript",
    }
    return SummaryConfig(**{**fields, **overrides})  # type: ignore[arg-type]


def picture(number: int, size: int = 120) -> str:
    """Base64 data of an image of ``size`` bytes, distinct per ``number``."""
    return base64.b64encode(bytes([number]) * size).decode()


def photo_turn(number: int) -> Message:
    image = ImageBlock(media_type="image/png", data=picture(number))
    return Message.user([TextBlock(f"Photo {number} of the garden."), image])


def images_of(messages: Sequence[Message]) -> list[str]:
    """The data of the images ``messages`` carry, in order."""
    return [
        block.data
        for message in messages
        for block in message.content
        if isinstance(block, ImageBlock) and block.data is not None
    ]


def summary_of(messages: Sequence[Message]) -> str:
    """The summary a request carries ("" when none)."""
    for message in messages:
        if message.text.startswith(DEFAULT_SUMMARY_LABEL):
            return message.text
    return ""


def recorded(summary: str) -> dict[int, list[str]]:
    """The record a summary ends with: the kinds recorded, by raw message index.

    The line that counts the oldest attachments (``- 3 earlier: 2 images, 1 file,
    messages 0 to 9``) names each kind it counts for every message of its range.
    """
    found: dict[int, list[str]] = {}
    _, heading, record = summary.partition(RECORD_HEADING)
    if not heading:
        return found
    for line in record.strip().removesuffix("</summary>").strip().splitlines():
        earlier = EARLIER_LINE.match(line)
        if earlier:
            kinds = re.findall(r"\d+ (image|file|audio)", earlier.group(1))
            for index in range(int(earlier.group(2)), int(earlier.group(3)) + 1):
                found.setdefault(index, []).extend(kinds)
            continue
        match = RECORD_LINE.match(line)
        assert match, f"not a record line: {line!r}"
        found.setdefault(int(match.group(3)), []).append(match.group(1))
    return found


def attachments_of(messages: Sequence[Message]) -> list[Attachment]:
    """The attachments (images, files, audio) ``messages`` carry, in order."""
    return [
        block
        for message in messages
        for block in message.content
        if isinstance(block, (ImageBlock, FileBlock, AudioBlock))
    ]


async def assert_no_attachment_dropped(
    session: AgentSession, requests: Sequence[LlmRequest]
) -> None:
    """Every attachment a request sent is in each later one, or that one's summary names it.

    Named: the record lists an attachment of its kind for the raw message that held it.
    The attachments of the session must be distinct (their data differ).
    """
    where: dict[Attachment, int] = {}
    for index, message in enumerate(await session.history()):
        for block in attachments_of([message]):
            where[block] = index
    sent: set[Attachment] = set()
    for number, request in enumerate(requests):
        present = set(attachments_of(request.messages))
        named = recorded(summary_of(request.messages))
        for block in sorted(sent - present, key=lambda block: where[block]):
            assert block.kind in named.get(where[block], []), (
                f"request {number} neither sends the {block.kind} of message "
                f"{where[block]} nor names it in its summary"
            )
        sent |= present
