"""OpenAI Responses input items (the OpenAI Agents SDK's history) as agentcore messages.

Only what a compaction needs: each item is read into the agentcore message
it stands for (consecutive ``function_call`` items join the assistant
message before them, as one message with several calls), and each message
keeps the indices of the items it came from, so the messages a compaction
sends verbatim go back out as the very items they were.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentcore import ConfigError, Message, TextBlock, ToolUseBlock

_TEXT_PARTS = ("input_text", "output_text", "text")

_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


def items_to_messages(items: Sequence[Any]) -> tuple[list[Message], list[list[int]]]:
    """The agentcore messages of ``items``, and for each the indices of its items.

    Items with no message of their own (``reasoning``, and item types that
    carry no text, such as a hosted tool's call) go with the next message (the
    last one for trailing items), so they are sent when it is.

    :raises ConfigError: an item that is not a dict, or a malformed message or
        call; the message names the index.
    """
    messages: list[Message] = []
    groups: list[list[int]] = []
    waiting: list[int] = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ConfigError(f"items[{index}] is a {type(item).__name__}, not a Responses item")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "function_call":
            call = _call(index, item)
            last = messages[-1] if messages else None
            if last is not None and last.role == "assistant" and not waiting:
                messages[-1] = Message("assistant", (*last.content, call))
                groups[-1].append(index)
                continue
            message = Message("assistant", (call,))
        elif kind == "function_call_output":
            message = Message.tool_result(
                _text(index, item, "call_id"), _output(item.get("output"))
            )
        elif kind == "message":
            role = _ROLES.get(str(item.get("role")))
            if role is None:
                raise ConfigError(
                    f"items[{index}]: unknown role {item.get('role')!r}; expected one of "
                    f"{', '.join(_ROLES)}"
                )
            message = Message(role, _content_text(item.get("content")))  # type: ignore[arg-type]
        else:
            waiting.append(index)
            continue
        messages.append(message)
        groups.append([*waiting, index])
        waiting = []
    if waiting and groups:
        groups[-1].extend(waiting)
    return messages, groups


def message_to_item(message: Message) -> dict[str, Any]:
    """An input item for a message a compaction made (the summary, its acknowledgement, a note).

    A tool result becomes a ``function_call_output``; any other message an
    easy input message of its role and text.
    """
    if message.role == "tool":
        assert message.tool_call_id is not None
        return {
            "type": "function_call_output",
            "call_id": message.tool_call_id,
            "output": message.text,
        }
    return {"role": message.role, "content": message.text}


def _call(index: int, item: Mapping[str, Any]) -> ToolUseBlock:
    raw = item.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = {"arguments": raw}
    if not isinstance(arguments, Mapping):
        arguments = {"arguments": arguments}
    return ToolUseBlock(_text(index, item, "call_id"), _text(index, item, "name"), arguments)


def _text(index: int, item: Mapping[str, Any], key: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"items[{index}]: {key} must be a non-empty str, got {value!r}")
    return value


def _content_text(content: Any) -> tuple[TextBlock, ...]:
    if isinstance(content, str):
        return (TextBlock(content),) if content else ()
    texts = []
    for part in content or ():
        if isinstance(part, Mapping):
            if part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                texts.append(part["refusal"])
            else:
                texts.append(f"[{part.get('type', 'part')}]")
    return tuple(TextBlock(text) for text in texts if text)


def _output(output: Any) -> str:
    if isinstance(output, str):
        return output
    return "".join(block.text for block in _content_text(output))
