"""What a slot's context costs, without tokenizing a backlog it will summarize later.

A session resumed over a long history stored without its token counts (a
backlog being caught up a few chunks a turn) would otherwise be tokenized
whole on its first turn, to report figures nobody decides on. Here the
context is counted as far as the window reaches, newest first; past that, a
context whose messages carry no count yet is estimated from an even sample of
its messages (a counted one by its count, another from its characters at the
ratio the counted ones show), and each message is tokenized when a summary
reads it.
"""

from __future__ import annotations

import attrs
from attrs import frozen

from agentcore import ContextSlot, FocusedConfig, Message, ToolUseBlock
from agentcore.plugin_api import TokenCounter, render_parts

SAMPLE_SIZE = 256
"""Messages of a context past the window read to estimate it (all of a shorter one)."""

_CHARS_PER_TOKEN = 4.0
"""The estimate's ratio when no sampled message has its count (English prose)."""

_MESSAGE_OVERHEAD_TOKENS = 4
"""What a message costs besides its text, as the counter counts it (framing and role)."""


@frozen
class ContextSize:
    """A slot context's tokens, and whether part of them was estimated."""

    tokens: int
    estimated: bool


async def context_size(slot: ContextSlot, counter: TokenCounter, window: int) -> ContextSize:
    """The tokens of ``slot``'s context, counted by ``counter``.

    Exact when the context fits ``window`` tokens (local) or its messages carry
    their counts. Otherwise it is estimated, and ``estimated`` is True: from
    :data:`SAMPLE_SIZE` messages taken evenly through it, a message with its
    count by that count, one without from its characters. The work is the
    window's and the sample's, whatever the context's length.
    """
    tokens = await slot.count_context(counter, limit=window)
    if tokens <= window:
        return ContextSize(tokens, estimated=False)
    before, start, after = render_parts(slot.system_prompt, slot.messages, slot.config)
    messages = slot.raw_messages(start)
    sample = messages[:: max(1, len(messages) // SAMPLE_SIZE)]
    if all(counter.counted(message) for message in sample):
        return ContextSize(await slot.count_context(counter), estimated=False)
    counted_tokens = counted_chars = uncounted = uncounted_chars = 0
    for message in sample:
        if counter.counted(message):
            count = counter.count_message(message)
            counted_tokens += count
            counted_chars += _chars(message)
        else:
            uncounted += 1
            uncounted_chars += _chars(message)
    counted = len(sample) - uncounted
    text_tokens = counted_tokens - counted * _MESSAGE_OVERHEAD_TOKENS
    per_char = max(0, text_tokens) / counted_chars if counted_chars else 1 / _CHARS_PER_TOKEN
    sampled = counted_tokens + uncounted_chars * per_char + uncounted * _MESSAGE_OVERHEAD_TOKENS
    fixed = await counter.count_messages_async([*before, *after])
    return ContextSize(fixed + round(sampled * len(messages) / len(sample)), estimated=True)


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
