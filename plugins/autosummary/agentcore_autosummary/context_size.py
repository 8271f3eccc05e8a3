"""What a slot's context costs, without tokenizing a backlog it will summarize later.

A session resumed over a long history stored without its token counts (a
backlog being caught up a few chunks a turn) would otherwise be tokenized
whole on its first turn, to report figures nobody decides on. Here the
context is counted as far as the window reaches, newest first; the older
messages that carry no count yet are estimated from their characters, at
the ratio the counted ones show, and each is tokenized when a summary reads it.
"""

from __future__ import annotations

import math

import attrs
from attrs import frozen

from agentcore import ContextSlot, FocusedConfig, Message, ToolUseBlock
from agentcore.plugin_api import TokenCounter, render_parts

_CHARS_PER_TOKEN = 4.0
"""The estimate's ratio when no message of the window has its count (English prose)."""

_MESSAGE_OVERHEAD_TOKENS = 4
"""What a message costs besides its text, as the counter counts it (framing and role)."""


@frozen
class ContextSize:
    """A slot context's tokens, and whether part of them was estimated."""

    tokens: int
    estimated: bool


async def context_size(slot: ContextSlot, counter: TokenCounter, window: int) -> ContextSize:
    """The tokens of ``slot``'s context, counted by ``counter``.

    Exact when the context fits ``window`` tokens (local) or every message
    of it carries its count; otherwise the messages past the window that carry
    no count yet are estimated from their characters, and ``estimated`` is True.
    """
    tokens = await slot.count_context(counter, limit=window)
    if tokens <= window:
        return ContextSize(tokens, estimated=False)
    before, start, after = render_parts(slot.system_prompt, slot.messages, slot.config)
    total = await counter.count_messages_async([*before, *after])
    counted = counted_text_tokens = counted_chars = uncounted = uncounted_chars = 0
    for message in slot.raw_messages(start):
        if counter.counted(message):
            count = counter.count_message(message)
            total += count
            counted += 1
            counted_text_tokens += max(0, count - _MESSAGE_OVERHEAD_TOKENS)
            counted_chars += _chars(message)
        else:
            uncounted += 1
            uncounted_chars += _chars(message)
    if not uncounted:
        return ContextSize(total, estimated=False)
    per_char = counted_text_tokens / counted_chars if counted_chars else 1 / _CHARS_PER_TOKEN
    estimate = math.ceil(uncounted_chars * per_char) + uncounted * _MESSAGE_OVERHEAD_TOKENS
    return ContextSize(total + estimate, estimated=True)


def _chars(message: Message) -> int:
    """Characters of what ``message`` says: its text, and its tool calls' names and arguments."""
    size = len(message.text)
    for block in message.content:
        if isinstance(block, ToolUseBlock):
            size += len(block.name) + len(str(block.arguments))
    return size


async def summary_change(
    slot: ContextSlot, counter: TokenCounter, applied: FocusedConfig
) -> tuple[int, int]:
    """Tokens of the part of ``slot``'s context a summary replaces, and of what replaces it.

    ``applied`` is the slot's Focused mode with the summary in place. What the
    two contexts share (the raw messages after both windows' starts) is not
    counted, so a long uncounted backlog after the summary costs nothing; the
    messages the summary now covers were read by it and carry their counts.
    """
    before, start, after = render_parts(slot.system_prompt, slot.messages, slot.config)
    then = attrs.evolve(slot.config, mode=applied)
    new_before, new_start, new_after = render_parts(slot.system_prompt, slot.messages, then)
    old = await counter.count_messages_async([*before, *after])
    new = await counter.count_messages_async([*new_before, *new_after])
    low, high = sorted((start, new_start))
    moved = 0
    for message in slot.raw_messages(low, high):
        moved += await counter.count_message_async(message)
    if new_start >= start:
        return old + moved, new
    return old, new + moved
