"""Messages as the GenAI semantic conventions record them, for content capture.

Used only when content capture is on: ``gen_ai.input.messages`` and
``gen_ai.output.messages`` hold JSON lists of ``{"role", "parts"}`` objects,
each part a ``text``, ``tool_call`` or ``tool_call_response``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from agentcore import Message, TextBlock, ToolUseBlock

FINISH_REASONS = {
    "end_turn": "stop",
    "tool_use": "tool_call",
    "max_tokens": "length",
    "other": "other",
}
"""agentcore's stop reasons as the conventions name finish reasons."""


def finish_reason(stop_reason: str) -> str:
    """The conventions' finish reason for an agentcore stop reason."""
    return FINISH_REASONS.get(stop_reason, stop_reason)


def _parts(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [
            {
                "type": "tool_call_response",
                "id": message.tool_call_id,
                "response": message.text,
            }
        ]
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "content": block.text})
        elif isinstance(block, ToolUseBlock):
            parts.append(
                {
                    "type": "tool_call",
                    "id": block.id,
                    "name": block.name,
                    "arguments": dict(block.arguments),
                }
            )
        else:
            parts.append({"type": block.kind})
    return parts


def message_entry(message: Message, finish: str | None = None) -> dict[str, Any]:
    """One message as a conventions entry; ``finish`` adds its finish reason."""
    entry: dict[str, Any] = {"role": message.role, "parts": _parts(message)}
    if finish is not None:
        entry["finish_reason"] = finish
    return entry


def messages_json(messages: Iterable[Message]) -> str:
    """Messages as the JSON text of a ``gen_ai.*.messages`` attribute."""
    return _dumps([message_entry(message) for message in messages])


def output_json(message: Message, stop_reason: str) -> str:
    """A reply as the JSON text of ``gen_ai.output.messages``."""
    return _dumps([message_entry(message, finish_reason(stop_reason))])


def arguments_json(arguments: Mapping[str, Any]) -> str:
    """Tool arguments as JSON text."""
    return _dumps(dict(arguments))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
