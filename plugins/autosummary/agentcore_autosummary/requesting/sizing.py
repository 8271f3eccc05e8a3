"""Sizes of summary-input entries, from the token counts stored with the messages.

A summary request carries each message as a transcript entry
(:func:`~agentcore_autosummary.requesting.formatting.format_message`), not as the
message a turn sends. The two differ only in their wrapping: the entry has a
label (``User:``, ``Tool Result [id]:``) where the message has its role and
:data:`~agentcore.tokens.TOKENS_PER_MESSAGE`, a blank line between entries,
two spaces after each newline, ``[image]`` for a block the message counts
by its size, and, where the entry leaves much out, a tool result cut to
``max_tool_result_chars`` and ``[Tool: name]`` for a tool call the message
counts with its arguments. So an entry is estimated from its message's count
(stored with the message: reading it tokenizes nothing) plus
:data:`ENTRY_OVERHEAD_TOKENS`, one or two tokens per newline and
:data:`BLOCK_OVERHEAD_TOKENS` per block that is not text; only the two that
leave much out are counted as text: a tool result longer than its cut (the
cut text), a message with tool calls (its entry, short without arguments).

The estimate is not a bound: a tokenizer may merge or split tokens where
the label meets the text. It plans chunks and skips counting a conversation
that clearly fits; the prompt a request sends is always counted whole, and
that count decides (:func:`~agentcore_autosummary.calling.summarizer.request_summary`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agentcore import Message, TextBlock, ToolUseBlock
from agentcore.plugin_api import TokenCounter
from agentcore_autosummary.requesting.formatting import format_message
from agentcore_autosummary.requesting.tool_excerpts import tool_result_excerpt

ENTRY_OVERHEAD_TOKENS = 2
"""Tokens an entry may cost beyond its message's count: the blank line after it, and a space.

The label (``User:``: 2 tokens in cl100k and o200k, ``Tool Result [id]:``:
4 plus the id) costs no more than the message's own overhead (3 tokens, its
role and, for a tool result, its id), which the message's count includes.
"""

_STANDS_ALONE = re.compile(r"\n(?![^\W\d_]|\s|$)")
"""A newline before a digit or punctuation: the indent after it is two tokens, not one."""

BLOCK_OVERHEAD_TOKENS = 4
"""Tokens a block other than text may cost beyond its count: ``[image]`` and a space.

Images, audio and files are counted at their size, mostly far more than
``[image]``; a block of a kind the counter does not know counts 0.
"""


MAX_TEXT_ENTRIES = 4096
"""Entries counted as text (cut tool results, tool calls) whose estimates are kept."""

_TEXT_ENTRIES: dict[tuple[TokenCounter, str | None, str], int] = {}
"""Estimates of entries counted as text, by counter, tool call id and text, oldest first:
a backlog's cut tool results are sized again by every summary that plans over them."""


def _newline_tokens(text: str) -> int:
    """Tokens the indents after the newlines of ``text`` may add.

    One a newline, two before a digit or punctuation (:data:`_STANDS_ALONE`).
    """
    if "\n" not in text:
        return 0
    return text.count("\n") + len(_STANDS_ALONE.findall(text))


def _extra_tokens(message: Message) -> int:
    """Tokens the entry of ``message`` (not a cut tool result) adds to its count."""
    extra = ENTRY_OVERHEAD_TOKENS - 1  # the first part needs no space before it
    for block in message.content:
        if isinstance(block, TextBlock):
            extra += _newline_tokens(block.text) + 1
        else:
            extra += BLOCK_OVERHEAD_TOKENS
    return extra


def _counted_text(message: Message, max_tool_result_chars: int) -> str | None:
    """The text to count for ``message``'s entry; None when its stored count sizes it.

    A tool result longer than its cut: its excerpt. A message with tool
    calls: its whole entry, which leaves out the arguments its count holds
    (they would make it several times the entry's size).
    """
    if message.role == "tool":
        if len(message.text) <= max_tool_result_chars:
            return None
        return tool_result_excerpt(message.text, max_tool_result_chars)
    if any(isinstance(block, ToolUseBlock) for block in message.content):
        return format_message(message, max_tool_result_chars)
    return None


def _text_entry_tokens(message: Message, text: str, tokens: int, id_tokens: int) -> int:
    """Estimated tokens of an entry from the count of :func:`_counted_text` (``tokens``)."""
    if message.role != "tool":
        return tokens + ENTRY_OVERHEAD_TOKENS
    label = 4 + id_tokens  # "Tool Result [", "]:" and the id
    return tokens + label + ENTRY_OVERHEAD_TOKENS + _newline_tokens(text)


async def entry_tokens_async(
    counter: TokenCounter, message: Message, max_tool_result_chars: int
) -> int:
    """Estimated tokens of ``message``'s summary-input entry, separator included.

    Reads the message's count (counting it once, a long one off the event
    loop, when none is stored); counts text only for a tool result longer
    than ``max_tool_result_chars`` and for a message with tool calls, once
    for the last :data:`MAX_TEXT_ENTRIES` such entries.
    """
    text = _counted_text(message, max_tool_result_chars)
    if text is not None:
        key = (counter, message.tool_call_id, text)
        known = _TEXT_ENTRIES.get(key)
        if known is None:
            id_tokens = counter.count_text(message.tool_call_id or "")
            tokens = await counter.count_text_async(text)
            known = _TEXT_ENTRIES[key] = _text_entry_tokens(message, text, tokens, id_tokens)
            if len(_TEXT_ENTRIES) > MAX_TEXT_ENTRIES:
                del _TEXT_ENTRIES[next(iter(_TEXT_ENTRIES))]
        return known
    return await counter.count_message_async(message) + _extra_tokens(message)


async def transcript_tokens(
    counter: TokenCounter, messages: Iterable[Message], max_tool_result_chars: int
) -> int:
    """Estimated tokens of ``messages`` as one summary input: the sum of their entries."""
    total = 0
    for message in messages:
        total += await entry_tokens_async(counter, message, max_tool_result_chars)
    return total
