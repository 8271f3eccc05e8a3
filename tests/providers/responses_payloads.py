"""Replies of OpenAI's Responses API as its API reference documents them.

The ``response`` object (``output`` items of type ``message``,
``function_call`` and ``reasoning``; ``status``, ``incomplete_details``,
``usage`` with ``input_tokens_details.cached_tokens`` and
``output_tokens_details.reasoning_tokens``) and its streaming events, each
with its ``type`` and ``sequence_number``: ``response.created``,
``response.in_progress``, ``response.output_item.added``,
``response.content_part.added``, ``response.output_text.delta`` and
``.done``, ``response.content_part.done``,
``response.function_call_arguments.delta`` and ``.done``,
``response.output_item.done``, then ``response.completed`` (or
``response.incomplete``, ``response.failed``, ``error``). No ``[DONE]``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

from .loopback import SseItem

MODEL = "gpt-5-mini-2025-08-07"
ENCRYPTED = "gAAAAABoEncryptedReasoning0123456789=="


def responses_usage(
    input_tokens: int = 10, output_tokens: int = 5, cached: int = 0, reasoning: int = 0
) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output_tokens,
    }


def message_item(
    text: str, item_id: str = "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c"
) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    }


def call_item(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "id": f"fc_{call_id}",
        "type": "function_call",
        "status": "completed",
        "call_id": call_id,
        "name": name,
        "arguments": raw,
    }


def reasoning_item(
    item_id: str = "rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7",
    texts: Sequence[str] = ("**Thinking it over**\n\nThe user wants the weather.",),
    encrypted: str | None = ENCRYPTED,
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": item_id,
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": text} for text in texts],
    }
    if encrypted is not None:
        item["encrypted_content"] = encrypted
    return item


def responses_response(
    output: Sequence[dict[str, Any]],
    *,
    status: str = "completed",
    incomplete: str | None = None,
    model: str = MODEL,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``response`` object; ``incomplete`` (a reason) makes its status ``incomplete``."""
    return {
        "id": "resp_67ccd3a9da748190baa7f1570fe91ac604becb25c45c1d41",
        "object": "response",
        "created_at": 1741476777,
        "status": "incomplete" if incomplete else status,
        "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": None,
        "max_output_tokens": None,
        "model": model,
        "output": list(output),
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "medium", "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage if usage is not None else responses_usage(),
        "user": None,
        "metadata": {},
    }


def responses_reply(
    text: str = "Hello!",
    stop: str | None = None,
    model: str = MODEL,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A text reply; ``stop`` is ``"completed"`` (or None) or the reason it is incomplete."""
    incomplete = stop if stop not in (None, "completed") else None
    return responses_response([message_item(text)], incomplete=incomplete, model=model, usage=usage)


def responses_events(
    texts: Sequence[str] = ("Hel", "lo", "!"),
    *,
    tool_calls: Sequence[tuple[str, str, Sequence[str]]] = (),
    reasoning: dict[str, Any] | None = None,
    usage: dict[str, Any] | None = None,
    model: str = MODEL,
    end: bool = True,
    incomplete: str | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """The events of a reply: ``reasoning`` (an item), ``texts``, then ``tool_calls``."""
    numbers = itertools.count()
    events: list[tuple[str, dict[str, Any]]] = []

    def add(kind: str, **fields: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": next(numbers), **fields}))

    started = responses_response([], status="in_progress", model=model)
    started["usage"] = None
    add("response.created", response=started)
    add("response.in_progress", response=started)
    output: list[dict[str, Any]] = []
    if reasoning is not None:
        index = len(output)
        add(
            "response.output_item.added",
            output_index=index,
            item={"id": reasoning["id"], "type": "reasoning", "summary": []},
        )
        add("response.output_item.done", output_index=index, item=reasoning)
        output.append(reasoning)
    if texts:
        index, item = len(output), message_item("".join(texts))
        empty = {"type": "output_text", "text": "", "annotations": []}
        add(
            "response.output_item.added",
            output_index=index,
            item={**item, "status": "in_progress", "content": []},
        )
        add(
            "response.content_part.added",
            item_id=item["id"],
            output_index=index,
            content_index=0,
            part=empty,
        )
        for text in texts:
            add(
                "response.output_text.delta",
                item_id=item["id"],
                output_index=index,
                content_index=0,
                delta=text,
                logprobs=[],
            )
        add(
            "response.output_text.done",
            item_id=item["id"],
            output_index=index,
            content_index=0,
            text="".join(texts),
            logprobs=[],
        )
        add(
            "response.content_part.done",
            item_id=item["id"],
            output_index=index,
            content_index=0,
            part=item["content"][0],
        )
        add("response.output_item.done", output_index=index, item=item)
        output.append(item)
    for call_id, name, fragments in tool_calls:
        index, item = len(output), call_item(call_id, name, "".join(fragments))
        add(
            "response.output_item.added",
            output_index=index,
            item={**item, "status": "in_progress", "arguments": ""},
        )
        for fragment in fragments:
            add(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=index,
                delta=fragment,
            )
        add(
            "response.function_call_arguments.done",
            item_id=item["id"],
            output_index=index,
            arguments=item["arguments"],
        )
        add("response.output_item.done", output_index=index, item=item)
        output.append(item)
    if end:
        final = responses_response(output, incomplete=incomplete, model=model, usage=usage)
        kind = "response.incomplete" if incomplete else "response.completed"
        add(kind, response=final)
    return events


def responses_stream(
    texts: Sequence[str] = ("Hel", "lo", "!"),
    *,
    tool_calls: Sequence[tuple[str, str, Sequence[str]]] = (),
    reasoning: dict[str, Any] | None = None,
    usage: dict[str, Any] | None = None,
    model: str = MODEL,
    end: bool = True,
    incomplete: str | None = None,
) -> list[SseItem]:
    """:func:`responses_events` as the loopback server takes them."""
    return list(
        responses_events(
            texts,
            tool_calls=tool_calls,
            reasoning=reasoning,
            usage=usage,
            model=model,
            end=end,
            incomplete=incomplete,
        )
    )


def responses_error_event(message: str, code: str | None = "server_error") -> SseItem:
    return (
        "error",
        {"type": "error", "code": code, "message": message, "param": None, "sequence_number": 1},
    )


def responses_failed_event(message: str, code: str = "server_error") -> SseItem:
    failed = responses_response([], status="failed")
    failed["error"] = {"code": code, "message": message}
    failed["usage"] = None
    return (
        "response.failed",
        {"type": "response.failed", "sequence_number": 2, "response": failed},
    )
