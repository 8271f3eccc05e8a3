"""OpenAI's Responses API on the fake server (``POST /v1/responses``): replies and streams.

The reply is the one :func:`fake_openai.reply_for` gives a Chat Completions
request with the same last user text; the response object and its events
follow the Responses API reference (``response.created``,
``response.output_item.added``, ``response.output_text.delta``,
``response.output_item.done``, ``response.completed``), with usage in its
``input_tokens``/``output_tokens`` shape.
"""

from __future__ import annotations

import json
from typing import Any


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the request's last input item (a message of ``input_text`` parts)."""
    last = body["input"][-1]
    content = last.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def usage_of(body: dict[str, Any], reply: str) -> dict[str, Any]:
    """Token counts made up as the Chat Completions side makes them (a fourth of the JSON)."""
    prompt = sum(len(json.dumps(item)) for item in body["input"]) // 4
    completion = len(reply) // 4
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


def response_object(
    body: dict[str, Any], reply: str, usage: dict[str, Any] | None
) -> dict[str, Any]:
    """The ``response`` object of a completed reply of ``reply``."""
    item = {
        "id": "msg_fake_1",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": reply, "annotations": []}],
    }
    return {
        "id": "resp_fake_1",
        "object": "response",
        "status": "completed",
        "model": body["model"],
        "output": [item],
        "incomplete_details": None,
        "error": None,
        "store": body.get("store", True),
        "usage": usage,
    }


def stream_events(body: dict[str, Any], reply: str, usage: dict[str, Any] | None) -> bytes:
    """The event stream of a reply of ``reply`` in pieces of 16 characters."""
    final = response_object(body, reply, usage)
    started = {**final, "status": "in_progress", "output": [], "usage": None}
    item = final["output"][0]
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": started},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**item, "status": "in_progress", "content": []},
        },
    ]
    events += [
        {
            "type": "response.output_text.delta",
            "item_id": item["id"],
            "output_index": 0,
            "content_index": 0,
            "delta": reply[i : i + 16],
        }
        for i in range(0, len(reply), 16)
    ]
    events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    events.append({"type": "response.completed", "response": final})
    lines = [
        f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': number})}\n\n"
        for number, event in enumerate(events)
    ]
    return "".join(lines).encode()
