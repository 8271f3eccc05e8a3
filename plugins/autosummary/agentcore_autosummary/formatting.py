"""Messages as the plain text a summary request carries."""

from __future__ import annotations

from collections.abc import Sequence

from agentcore import Message, TextBlock, ToolUseBlock

MAX_CONVERSATION_CHARS = 30_000
"""The full strategy keeps at most this many characters, the newest ones."""

_ROLE_NAMES = {"system": "System", "user": "User", "assistant": "Assistant"}


def format_message(message: Message, max_tool_result_chars: int = 500) -> str:
    """One message as one entry of the summary input.

    ``System:``/``User:``/``Assistant:`` followed by the text; a tool call
    becomes ``[Tool: name]`` (arguments are left out); a tool result becomes
    ``Tool Result [id]:`` or ``Tool Error [id]:`` followed by its first
    ``max_tool_result_chars`` characters; any other block becomes
    ``[{kind}]``, so a user's image reads ``User: [image]``.
    """
    if message.role == "tool":
        label = "Tool Error" if message.is_error else "Tool Result"
        return f"{label} [{message.tool_call_id}]: {message.text[:max_tool_result_chars]}"
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            parts.append(f"[Tool: {block.name}]")
        else:
            parts.append(f"[{block.kind}]")
    return f"{_ROLE_NAMES[message.role]}: {' '.join(parts)}"


def format_messages_as_text(
    messages: Sequence[Message],
    max_tool_result_chars: int = 500,
    *,
    max_chars: int | None = MAX_CONVERSATION_CHARS,
) -> str:
    """``messages`` as text, one entry per message, entries separated by a blank line.

    When the text is longer than ``max_chars``, the oldest entries are dropped
    (and, if the newest alone is too long, its beginning), so the newest part
    of the conversation is kept. ``max_chars=None`` keeps everything.
    """
    entries = [format_message(message, max_tool_result_chars) for message in messages]
    if max_chars is None:
        return "\n\n".join(entries)
    kept: list[str] = []
    size = 0
    for entry in reversed(entries):
        added = len(entry) + (2 if kept else 0)
        if size + added > max_chars:
            if not kept:
                kept.append(entry[len(entry) - max_chars :])
            break
        kept.append(entry)
        size += added
    return "\n\n".join(reversed(kept))
