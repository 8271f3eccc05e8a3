"""Replies as OpenAI's and Anthropic's API references document them.

Field names and event order follow the public references: OpenAI's Chat
Completions object and chunk object (``stream_options.include_usage`` adds a
last chunk with empty ``choices`` and the usage), Anthropic's Messages object
and its streaming events (``message_start``, ``content_block_start``,
``ping``, ``content_block_delta``, ``content_block_stop``, ``message_delta``,
``message_stop``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .loopback import DONE, SseItem

# -- OpenAI ------------------------------------------------------------------


def openai_usage(prompt: int = 10, completion: int = 5, cached: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def openai_tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def openai_completion(
    text: str | None = "Hello!",
    *,
    tool_calls: Sequence[dict[str, Any]] = (),
    finish_reason: str | None = None,
    model: str = "gpt-4o-mini-2024-07-18",
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": text,
        "refusal": None,
        "annotations": [],
    }
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": usage if usage is not None else openai_usage(),
        "service_tier": "default",
        "system_fingerprint": "fp_06737a9306",
    }


def openai_chunk(
    delta: dict[str, Any],
    *,
    finish_reason: str | None = None,
    model: str = "gpt-4o-mini-2024-07-18",
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion.chunk",
        "created": 1694268190,
        "model": model,
        "system_fingerprint": "fp_44709d6fcb",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        "usage": None,
    }


def openai_usage_chunk(
    usage: dict[str, Any], model: str = "gpt-4o-mini-2024-07-18"
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion.chunk",
        "created": 1694268190,
        "model": model,
        "system_fingerprint": "fp_44709d6fcb",
        "choices": [],
        "usage": usage,
    }


def openai_stream(
    texts: Sequence[str] = ("Hel", "lo", "!"),
    *,
    tool_calls: Sequence[tuple[str, str, Sequence[str]]] = (),
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    model: str = "gpt-4o-mini-2024-07-18",
    done: bool = True,
) -> list[SseItem]:
    """Chunks for ``texts`` then ``tool_calls`` (id, name, argument fragments), by index."""
    events: list[SseItem] = [
        openai_chunk({"role": "assistant", "content": "", "refusal": None}, model=model)
    ]
    events += [openai_chunk({"content": text}, model=model) for text in texts]
    for index, (call_id, name, fragments) in enumerate(tool_calls):
        first = {
            "index": index,
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        events.append(openai_chunk({"tool_calls": [first]}, model=model))
        events += [
            openai_chunk(
                {"tool_calls": [{"index": index, "function": {"arguments": fragment}}]},
                model=model,
            )
            for fragment in fragments
        ]
    finish = finish_reason or ("tool_calls" if tool_calls else "stop")
    events.append(openai_chunk({}, finish_reason=finish, model=model))
    events.append(openai_usage_chunk(usage if usage is not None else openai_usage(), model))
    if done:
        events.append(DONE)
    return events


# -- Anthropic ---------------------------------------------------------------


def anthropic_usage(
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read: int = 0,
    cache_creation: int = 0,
) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_creation,
        "cache_read_input_tokens": cache_read,
        "output_tokens": output_tokens,
    }


def anthropic_message(
    content: Sequence[dict[str, Any]] | str = "Hello!",
    *,
    stop_reason: str | None = None,
    model: str = "claude-sonnet-4-5-20250929",
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    has_tool = any(block["type"] == "tool_use" for block in blocks)
    return {
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason or ("tool_use" if has_tool else "end_turn"),
        "stop_sequence": None,
        "usage": usage if usage is not None else anthropic_usage(),
    }


def anthropic_stream(
    blocks: Sequence[tuple[str, Any]] = (("text", ["Hel", "lo", "!"]),),
    *,
    stop_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    model: str = "claude-sonnet-4-5-20250929",
    stop: bool = True,
) -> list[SseItem]:
    """Events for ``blocks``: ``("text", [pieces])`` or ``("tool_use", (id, name, [json]))``."""
    full_usage = usage if usage is not None else anthropic_usage()
    start_usage = {**full_usage, "output_tokens": 1}
    events: list[SseItem] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": model,
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": start_usage,
                },
            },
        )
    ]
    has_tool = False
    for index, (kind, value) in enumerate(blocks):
        start: dict[str, Any]
        if kind == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in value]
        else:
            has_tool = True
            call_id, name, fragments = value
            start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": part} for part in fragments]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        if index == 0:
            events.append(("ping", {"type": "ping"}))
        events += [
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
            for delta in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": stop_reason or ("tool_use" if has_tool else "end_turn"),
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": full_usage["output_tokens"]},
            },
        )
    )
    if stop:
        events.append(("message_stop", {"type": "message_stop"}))
    return events


def anthropic_error(error_type: str, message: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
    }


def openai_error(message: str, error_type: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}
