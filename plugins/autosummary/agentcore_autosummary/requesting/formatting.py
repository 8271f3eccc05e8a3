"""Messages as the plain text a summary request carries."""

from __future__ import annotations

from collections.abc import Sequence

from agentcore import Message, TextBlock, ToolUseBlock
from agentcore_autosummary.keeping.attachments import ATTACHMENT_TYPES, attachment_name
from agentcore_autosummary.requesting.tool_excerpts import tool_result_excerpt

MAX_CONVERSATION_CHARS = 30_000
"""The full strategy keeps at most this many characters, the newest ones."""

_ROLE_NAMES = {"system": "System", "user": "User", "assistant": "Assistant"}


_CUT_MARK = "[…] "


def format_message(message: Message, max_tool_result_chars: int = 500) -> str:
    r"""One message as one entry of the summary input.

    ``System:``/``User:``/``Assistant:`` followed by the text; a tool call
    becomes ``[Tool: name]`` (arguments are left out); a tool result becomes
    ``Tool Result [id]:`` or ``Tool Error [id]:`` followed by its text, or
    for a longer one than ``max_tool_result_chars`` characters, its excerpt
    (head, tail and the lines holding values between them:
    ``agentcore_autosummary.requesting.tool_excerpts.tool_result_excerpt``); an
    attachment becomes ``[{kind}: {name}]`` (a file's name, an image URL's last
    segment), or ``[{kind}]`` without a name, so a user's inline image reads
    ``User: [image]`` and a file ``User: [file: report.pdf]``; any other block
    becomes ``[{kind}]``. The entry's
    further lines are indented by two spaces, so only the first line of an
    entry begins with a role: text that holds ``"\nAssistant: ..."`` cannot
    pass for another entry.
    """
    return _entry(message, max_tool_result_chars)


def _entry(message: Message, max_tool_result_chars: int) -> str:
    label, body = _label_and_body(message, max_tool_result_chars)
    return f"{label}: {_indent(body)}"


def _label_and_body(message: Message, max_tool_result_chars: int) -> tuple[str, str]:
    if message.role == "tool":
        label = "Tool Error" if message.is_error else "Tool Result"
        excerpt = tool_result_excerpt(message.text, max_tool_result_chars)
        return f"{label} [{message.tool_call_id}]", excerpt
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            parts.append(f"[Tool: {block.name}]")
        elif isinstance(block, ATTACHMENT_TYPES):
            name = attachment_name(block)
            parts.append(f"[{block.kind}: {name}]" if name else f"[{block.kind}]")
        else:
            parts.append(f"[{block.kind}]")
    return _ROLE_NAMES[message.role], " ".join(parts)


def _indent(body: str) -> str:
    return body.replace("\n", "\n  ") if "\n" in body else body


def format_messages_as_text(
    messages: Sequence[Message],
    max_tool_result_chars: int = 500,
    *,
    max_chars: int | None = MAX_CONVERSATION_CHARS,
) -> str:
    """``messages`` as text, one entry per message, entries separated by a blank line.

    When the text is longer than ``max_chars``, the newest part of the
    conversation is kept: the oldest entries are dropped, and the oldest
    entry kept loses the beginning of its text (marked ``[…]``) but keeps
    its role, so every entry still says who wrote it. ``max_chars=None``
    keeps everything.
    """
    if max_chars is None:
        return "\n\n".join(_entry(message, max_tool_result_chars) for message in messages)
    return "\n\n".join(reversed(_newest_entries(messages, max_tool_result_chars, max_chars)))


def messages_read(
    messages: Sequence[Message],
    max_tool_result_chars: int = 500,
    *,
    max_chars: int | None = MAX_CONVERSATION_CHARS,
) -> Sequence[Message]:
    """The newest of ``messages`` that :func:`format_messages_as_text` holds, whole or cut.

    What a summary request of the ``"full"`` strategy read: the gate judges its
    summary against these, so its cost is bounded by ``max_chars``, not by the
    history's length.
    """
    if max_chars is None:
        return messages
    read = len(_newest_entries(messages, max_tool_result_chars, max_chars))
    return messages[len(messages) - read :]


def _newest_entries(
    messages: Sequence[Message], max_tool_result_chars: int, max_chars: int
) -> list[str]:
    """The entries of the newest ``messages`` that fit ``max_chars``, newest first.

    The oldest of them may be cut at its beginning (marked ``[…]``); entries
    separated by a blank line.
    """
    kept: list[str] = []
    size = 0
    for message in reversed(messages):
        entry = _entry(message, max_tool_result_chars)
        added = len(entry) + (2 if kept else 0)
        if size + added <= max_chars:
            kept.append(entry)
            size += added
            continue
        label, body = _label_and_body(message, max_tool_result_chars)
        room = max_chars - size - (2 if kept else 0) - len(label) - 2 - len(_CUT_MARK)
        if room > 0:
            body = _indent(body)
            kept.append(f"{label}: {_CUT_MARK}{body[len(body) - room :].lstrip(' ')}")
        break
    return kept
