"""agentcore messages to and from the JSON of OpenAI's Responses API.

Requests: the conversation is the ``input`` list, in its order. System
messages stay where they stand, as ``{"type": "message", "role": "system"}``
items (the same place the Chat Completions codec gives them, so one
conversation has one order on both wires; ``instructions`` is not used).
User messages are ``message`` items of ``input_text``, ``input_image``
(``detail: "auto"``, base64 data as a ``data:`` URL), ``input_file``
(inline ``file_data`` with its ``filename``, or ``file_url``) and
``input_audio`` parts. An assistant message becomes, block by block in its
order, reasoning items (see below), ``message`` items of ``output_text``
(consecutive text blocks joined) and ``function_call`` items
(``call_id``, ``name``, ``arguments`` as a JSON string). A tool result is a
``function_call_output`` item: its text, or its parts when it holds an image
or a file; a failed one (``is_error``) is prefixed with
:data:`TOOL_ERROR_PREFIX`. Tool results are put directly after their calls
and unmatched calls and results kept as text, as for the other APIs (see
:mod:`agentcore.providers._order`). Tools are flat
``{"type": "function", "name", "description", "parameters"}`` definitions;
the tool choice and the output schema (``text.format``) are
:mod:`agentcore.providers._choice`'s. ``max_tokens`` is sent as
``max_output_tokens``. The API has no stop sequences: a request with
``stop`` is refused with a :class:`~agentcore.errors.ConfigError` rather
than sent without them.

Reasoning: a :class:`~agentcore.messages.ReasoningBlock` with an ``id`` (a
Responses reasoning item) is sent back as that item, where it stands in its
assistant message, when the API can use it: it carries its encrypted
content (or the server keeps responses, ``store``), and a text or a tool
call follows it in the message (the API refuses a reasoning item without
the item it led to). Any other reasoning (another provider's) is left out.
An :class:`~agentcore.messages.OpaqueBlock` of this API (an encrypted item
the server returned, such as a condensed conversation of its own) is sent
back as it came, where it stands in its assistant message; another API's is
left out.

Replies: the ``output`` items in their order: ``message`` items
(``output_text`` and ``refusal`` parts, kept as text), ``function_call``
items and ``reasoning`` items (see :mod:`agentcore.providers._responses_reasoning`);
an item of another kind that carries ``encrypted_content`` is kept whole as an
:class:`~agentcore.messages.OpaqueBlock` (the server wants it back); other
items (built-in tools' calls) are left out. ``status`` and
``incomplete_details.reason`` give the stop reason, ``usage`` the tokens.
Streamed replies are :mod:`agentcore.providers._responses_stream`'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agentcore.errors import BadRequestError, ConfigError
from agentcore.llm import LlmRequest, LlmResponse, StopReason, ToolSpec
from agentcore.messages import (
    AudioBlock,
    ContentBlock,
    FileBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    ReasoningBlock,
    TextBlock,
    ToolUseBlock,
)
from agentcore.providers._choice import responses_fields
from agentcore.providers._order import pair_tool_results
from agentcore.providers._responses_reasoning import (
    ENCRYPTED_REASONING,
    decode_reasoning,
    encode_reasoning,
)
from agentcore.providers._wire import (
    expect_dict,
    expect_list,
    expect_str,
    optional_str,
    token_count,
    tool_arguments,
)
from agentcore.usage import Usage

TOOL_ERROR_PREFIX = "Error: "
"""Put before the output of a ``function_call_output`` whose tool result has ``is_error`` set."""

API = "the OpenAI Responses API"
API_NAME = "openai-responses"
"""The ``api`` of the opaque items this API returns and takes back."""

_AUDIO_FORMATS: Mapping[str, str] = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


def encode_request(
    request: LlmRequest, *, model: str, stream: bool, store: bool, include_reasoning: bool
) -> dict[str, Any]:
    """The Responses API body for ``request``.

    ``store`` is sent as ``store``; with ``include_reasoning`` the body asks
    for the reasoning items' encrypted content.
    """
    if request.stop:
        raise ConfigError(
            f"{API} takes no stop sequences, and this request has stop={tuple(request.stop)!r}; "
            "remove stop (from the agent or the request), or use the 'openai' provider "
            "(Chat Completions), which sends them"
        )
    body: dict[str, Any] = {"model": model, "input": encode_input(request.messages, store=store)}
    if request.tools:
        body["tools"] = [encode_tool(tool) for tool in request.tools]
    body.update(responses_fields(request))
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    body["store"] = store
    if include_reasoning:
        body["include"] = [ENCRYPTED_REASONING]
    if stream:
        body["stream"] = True
    return body


def encode_tool(tool: ToolSpec) -> dict[str, Any]:
    """A tool definition (``{"type": "function", "name", "description", "parameters"}``)."""
    parameters = dict(tool.parameters) or {"type": "object", "properties": {}}
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": parameters,
    }


def encode_input(messages: Sequence[Message], *, store: bool = False) -> list[dict[str, Any]]:
    """The ``input`` items of ``messages``, tool results put after their calls."""
    items: list[dict[str, Any]] = []
    for message in pair_tool_results(messages):
        if message.role == "assistant":
            items.extend(_assistant_items(message, store=store))
        elif message.role == "tool":
            items.append(_tool_output(message))
        elif message.role == "system":
            items.append(_message("system", [_text_part(message, "a system message")]))
        else:
            parts = [_input_part(block, "a user message", audio=True) for block in message.content]
            items.append(_message("user", parts or [{"type": "input_text", "text": ""}]))
    return items


def _message(role: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content}


def _text_part(message: Message, what: str) -> dict[str, Any]:
    for block in message.content:
        if not isinstance(block, TextBlock):
            raise BadRequestError(f"{API} takes only text in {what}, not a {block.kind} block")
    return {"type": "input_text", "text": message.text}


def _assistant_items(message: Message, *, store: bool) -> Iterator[dict[str, Any]]:
    blocks = message.content
    texts: list[str] = []
    for position, block in enumerate(blocks):
        if isinstance(block, TextBlock):
            texts.append(block.text)
            continue
        if texts and "".join(texts):
            yield _message("assistant", [{"type": "output_text", "text": "".join(texts)}])
        texts = []
        if isinstance(block, ToolUseBlock):
            yield {
                "type": "function_call",
                "call_id": block.id,
                "name": block.name,
                "arguments": json.dumps(dict(block.arguments), ensure_ascii=False),
            }
        elif isinstance(block, ReasoningBlock):
            if _sendable(block, blocks[position + 1 :], store=store):
                yield encode_reasoning(block)
        elif isinstance(block, OpaqueBlock):
            if block.api == API_NAME:  # another API's item: only that API reads it
                yield dict(block.item)
        else:
            raise BadRequestError(
                f"{API} takes only text, tool calls and reasoning in an assistant message, "
                f"not a {block.kind} block"
            )
    if texts and "".join(texts):
        yield _message("assistant", [{"type": "output_text", "text": "".join(texts)}])


def _sendable(block: ReasoningBlock, after: Sequence[ContentBlock], *, store: bool) -> bool:
    """Whether the API can take ``block`` back: a Responses item it can read, followed by output."""
    if block.id is None or (block.data is None and not store):
        return False
    return any(
        isinstance(later, ToolUseBlock) or (isinstance(later, TextBlock) and later.text)
        for later in after
    )


def _tool_output(message: Message) -> dict[str, Any]:
    prefix = TOOL_ERROR_PREFIX if message.is_error else ""
    output: str | list[dict[str, Any]]
    if all(isinstance(block, TextBlock) for block in message.content):
        output = prefix + message.text
    else:
        output = [{"type": "input_text", "text": prefix}] if prefix else []
        output += [_input_part(block, "a tool result") for block in message.content]
    return {"type": "function_call_output", "call_id": message.tool_call_id, "output": output}


def _input_part(block: ContentBlock, where: str, *, audio: bool = False) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "input_text", "text": block.text}
    if isinstance(block, ImageBlock):
        url = block.url if block.url is not None else _data_url(block.media_type, block.data)
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    if isinstance(block, FileBlock):
        if block.url is not None:
            return {"type": "input_file", "file_url": block.url}
        if block.data is None:
            raise BadRequestError(f"file {block.name!r} has neither data= nor url=")
        return {
            "type": "input_file",
            "filename": block.name,
            "file_data": _data_url(block.media_type, block.data),
        }
    if isinstance(block, AudioBlock) and audio:
        media_type = block.media_type.lower()
        audio_format = _AUDIO_FORMATS.get(media_type, media_type.rpartition("/")[2])
        return {"type": "input_audio", "input_audio": {"data": block.data, "format": audio_format}}
    if isinstance(block, ReasoningBlock | ToolUseBlock):
        raise BadRequestError(
            f"a {block.kind} block cannot be part of {where}; put it in an assistant message"
        )
    raise BadRequestError(f"{API} takes no {block.kind} block in {where}")


def _data_url(media_type: str, data: str | None) -> str:
    return f"data:{media_type};base64,{data}"


# -- replies -------------------------------------------------------------------


def decode_response(data: Any, *, requested_model: str) -> LlmResponse:
    """The reply in a ``response`` object."""
    body = expect_dict(data, "the response")
    output = expect_list(body.get("output"), "the response's output")
    blocks = [
        block
        for position, raw in enumerate(output)
        if (block := decode_item(raw, f"output[{position}]")) is not None
    ]
    model = body.get("model")
    return LlmResponse(
        message=Message("assistant", merge_text(blocks)),
        usage=decode_usage(body.get("usage")),
        stop_reason=stop_reason_of(body, blocks),
        model=model if isinstance(model, str) and model else requested_model,
    )


def decode_item(
    raw: Any, where: str
) -> TextBlock | ToolUseBlock | ReasoningBlock | OpaqueBlock | None:
    """The block of one output item; None for an item of no kind agentcore keeps.

    An item of another kind that carries ``encrypted_content`` (the server wants
    it back in later requests and only the server reads it) is kept whole as an
    :class:`~agentcore.messages.OpaqueBlock` (see :func:`opaque_item`).
    """
    item = expect_dict(raw, where)
    kind = item.get("type")
    if kind == "message":
        return TextBlock(message_text(item, where))
    if kind == "function_call":
        return decode_call(item, where)
    if kind == "reasoning":
        return decode_reasoning(item, where)
    return opaque_item(item)


def opaque_item(item: dict[str, Any]) -> OpaqueBlock | None:
    """``item`` kept to be sent back, when it is an encrypted item of another kind.

    Its ``type`` must be a string and its ``encrypted_content`` a non-empty
    string; the block's ``tokens`` are left for the token counter to estimate.
    """
    content = item.get("encrypted_content")
    if not isinstance(item.get("type"), str) or not isinstance(content, str) or not content:
        return None
    return OpaqueBlock(API_NAME, item)


def message_text(item: dict[str, Any], where: str) -> str:
    """The text of a ``message`` item: its ``output_text`` and ``refusal`` parts joined."""
    texts = []
    for position, raw in enumerate(expect_list(item.get("content") or [], f"{where}.content")):
        part = expect_dict(raw, f"{where}.content[{position}]")
        kind = part.get("type")
        if kind == "output_text":
            texts.append(expect_str(part.get("text"), f"{where}.content[{position}].text"))
        elif kind == "refusal":
            texts.append(expect_str(part.get("refusal"), f"{where}.content[{position}].refusal"))
    return "".join(texts)


def decode_call(item: dict[str, Any], where: str, arguments: str | None = None) -> ToolUseBlock:
    """The tool call of a ``function_call`` item (``arguments``: the streamed ones, if any)."""
    name = expect_str(item.get("name"), f"{where}.name")
    call_id = expect_str(item.get("call_id"), f"{where}.call_id")
    if arguments is None:
        arguments = optional_str(item.get("arguments"), f"{where}.arguments") or ""
    return ToolUseBlock(
        id=call_id,
        name=name,
        arguments=tool_arguments(arguments, name),
    )


def merge_text(blocks: Sequence[ContentBlock]) -> list[ContentBlock]:
    """``blocks`` with empty text left out and consecutive text blocks joined."""
    merged: list[ContentBlock] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            if not block.text:
                continue
            if merged and isinstance(merged[-1], TextBlock):
                merged[-1] = TextBlock(merged[-1].text + block.text)
                continue
        merged.append(block)
    return merged


def stop_reason_of(body: Mapping[str, Any], blocks: Sequence[ContentBlock]) -> StopReason:
    """The stop reason of a response: its ``status``, its calls, and why it is incomplete."""
    status = optional_str(body.get("status"), "status")
    if status == "incomplete":
        details = expect_dict(body.get("incomplete_details") or {}, "incomplete_details")
        reason = optional_str(details.get("reason"), "incomplete_details.reason")
        return "max_tokens" if reason == "max_output_tokens" else "other"
    if any(isinstance(block, ToolUseBlock) for block in blocks):
        return "tool_use"
    return "end_turn" if status in (None, "completed") else "other"


def decode_usage(raw: Any) -> Usage | None:
    """``usage`` (input, output, cached input, cache write and reasoning tokens), or None."""
    if raw is None:
        return None
    usage = expect_dict(raw, "usage")
    inputs = expect_dict(usage.get("input_tokens_details") or {}, "usage.input_tokens_details")
    outputs = expect_dict(usage.get("output_tokens_details") or {}, "usage.output_tokens_details")
    return Usage(
        input_tokens=token_count(usage.get("input_tokens"), "usage.input_tokens"),
        output_tokens=token_count(usage.get("output_tokens"), "usage.output_tokens"),
        cached_input_tokens=token_count(
            inputs.get("cached_tokens"), "usage.input_tokens_details.cached_tokens"
        ),
        cache_write_tokens=token_count(
            inputs.get("cache_write_tokens"), "usage.input_tokens_details.cache_write_tokens"
        ),
        reasoning_tokens=token_count(
            outputs.get("reasoning_tokens"), "usage.output_tokens_details.reasoning_tokens"
        ),
    )
