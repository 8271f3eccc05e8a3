"""agentcore messages to and from the JSON of OpenAI's Chat Completions API.

Requests: system, user, assistant and tool messages; text, images
(``image_url`` parts, base64 data as ``data:`` URLs), audio (``input_audio``
parts), files (``file`` parts with inline ``file_data``), tool definitions
(``type: "function"``) and tool calls (``function.arguments`` as a JSON
string). A failed tool result (``is_error``) has its content prefixed with
:data:`TOOL_ERROR_PREFIX`, as the API has no field for it. Every ``tool``
message directly follows the assistant message whose ``tool_calls`` it
answers, and every call is answered, as the API requires: whatever part of
a conversation a request holds, a result is moved to directly after its
call, a result without its call becomes a user message and a call without
its result text of its assistant message, their content kept (see
:mod:`agentcore.providers._order`). Nothing is left out.

Reasoning blocks are never sent (DeepSeek's API refuses ``reasoning_content``
in a request), nor opaque items (:class:`~agentcore.messages.OpaqueBlock`),
which only the API that made them reads. The tool choice and the output schema (``response_format``)
are encoded by :mod:`agentcore.providers._choice`.

Replies: text, refusals (kept as text), reasoning (``reasoning_content``, or
``reasoning`` as OpenRouter and Ollama send it) as a
:class:`~agentcore.messages.ReasoningBlock` before the text, tool calls,
``finish_reason`` and
``usage`` with ``prompt_tokens_details.cached_tokens``. Streamed replies
(``chat.completion.chunk`` events) are :mod:`agentcore.providers._openai_stream`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentcore.errors import BadRequestError, MalformedResponseError
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
from agentcore.providers._choice import openai_fields
from agentcore.providers._order import pair_tool_results
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
"""Put before the content of a tool result message whose ``is_error`` is set."""

_FINISH_REASONS: Mapping[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
}

_AUDIO_FORMATS: Mapping[str, str] = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}


def encode_request(
    request: LlmRequest, *, model: str, stream: bool, max_tokens_field: str
) -> dict[str, Any]:
    """The Chat Completions body for ``request``."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [encode_message(message) for message in pair_tool_results(request.messages)],
    }
    if request.tools:
        body["tools"] = [encode_tool(tool) for tool in request.tools]
    if request.max_tokens is not None:
        body[max_tokens_field] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop:
        body["stop"] = list(request.stop)
    body.update(openai_fields(request))
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def encode_tool(tool: ToolSpec) -> dict[str, Any]:
    """A tool definition (``{"type": "function", "function": {...}}``)."""
    parameters = dict(tool.parameters) or {"type": "object", "properties": {}}
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": parameters,
        },
    }


def encode_message(message: Message) -> dict[str, Any]:
    """One entry of ``messages``."""
    if message.role == "system":
        return {"role": "system", "content": _text_only(message, "a system message")}
    if message.role == "tool":
        text = _text_only(message, "a tool result")
        if message.is_error:
            text = TOOL_ERROR_PREFIX + text
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}
    if message.role == "assistant":
        return _encodeassistant_message(message)
    return {"role": "user", "content": _encode_user_content(message.content)}


def _text_only(message: Message, what: str) -> str:
    for block in message.content:
        if not isinstance(block, TextBlock):
            raise BadRequestError(
                f"the OpenAI Chat Completions API takes only text in {what}, "
                f"not a {block.kind} block"
            )
    return message.text


def _encodeassistant_message(message: Message) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            calls.append(
                {
                    "id": block.id,
                    "type": "function",
                    "function": {
                        "name": block.name,
                        "arguments": json.dumps(dict(block.arguments), ensure_ascii=False),
                    },
                }
            )
        elif not isinstance(block, ReasoningBlock | OpaqueBlock):  # Never sent back here.
            raise BadRequestError(
                "the OpenAI Chat Completions API takes only text and tool calls in an "
                f"assistant message, not a {block.kind} block"
            )
    # An assistant message of tool calls alone is sent with "" rather than null: OpenAI
    # takes either, while llama.cpp's and llama-cpp-python's servers refuse null.
    encoded: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    if calls:
        encoded["tool_calls"] = calls
    return encoded


def _encode_user_content(content: tuple[ContentBlock, ...]) -> str | list[dict[str, Any]]:
    content = tuple(
        block for block in content if not isinstance(block, ReasoningBlock | OpaqueBlock)
    )
    if not content:
        return ""
    if len(content) == 1 and isinstance(content[0], TextBlock):
        return content[0].text
    return [_encode_part(block) for block in content]


def _encode_part(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        url = block.url if block.url is not None else _data_url(block.media_type, block.data)
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(block, AudioBlock):
        media_type = block.media_type.lower()
        audio_format = _AUDIO_FORMATS.get(media_type, media_type.rpartition("/")[2])
        return {"type": "input_audio", "input_audio": {"data": block.data, "format": audio_format}}
    if isinstance(block, FileBlock):
        if block.data is None:
            raise BadRequestError(
                f"the OpenAI Chat Completions API takes files inline only: give file "
                f"{block.name!r} as base64 data= instead of url="
            )
        return {
            "type": "file",
            "file": {"filename": block.name, "file_data": _data_url(block.media_type, block.data)},
        }
    if isinstance(block, ReasoningBlock):
        raise BadRequestError("reasoning can only be part of an assistant message")
    if isinstance(block, OpaqueBlock):
        raise BadRequestError(f"an item only the {block.api} API reads cannot be sent here")
    raise BadRequestError(
        f"a tool call cannot be part of a user message (tool {block.name!r}); "
        "put it in an assistant message"
    )


def _data_url(media_type: str, data: str | None) -> str:
    return f"data:{media_type};base64,{data}"


def decode_response(data: Any, *, requested_model: str) -> LlmResponse:
    """The reply in a ``chat.completion`` object."""
    body = expect_dict(data, "the response")
    choices = expect_list(body.get("choices"), "the response's choices")
    if not choices:
        raise MalformedResponseError("the response has no choices")
    choice = expect_dict(choices[0], "choices[0]")
    message = expect_dict(choice.get("message"), "choices[0].message")
    text = _content_text(message.get("content"))
    if not text:
        text = optional_str(message.get("refusal"), "choices[0].message.refusal") or ""
    calls = decode_tool_calls(message.get("tool_calls"))
    finish = optional_str(choice.get("finish_reason"), "choices[0].finish_reason")
    model = body.get("model")
    reasoning = next(
        (
            found
            for key in REASONING_KEYS
            if (found := optional_str(message.get(key), f"choices[0].message.{key}"))
        ),
        "",
    )
    return LlmResponse(
        message=assistant_message(text, calls, reasoning),
        usage=decode_usage(body.get("usage")),
        stop_reason=stop_reason_of(finish, has_calls=bool(calls)),
        model=model if isinstance(model, str) and model else requested_model,
    )


def decode_tool_calls(raw_calls: Any, where: str = "tool_calls") -> list[ToolUseBlock]:
    """The ``tool_calls`` of an assistant message (null or absent: none).

    A call without an id gets ``call_<position>``; arguments may be a JSON
    string or, as a few compatible servers send them, an object.
    """
    calls = []
    for position, raw in enumerate(expect_list(raw_calls or [], where)):
        call = expect_dict(raw, f"{where}[{position}]")
        function = expect_dict(call.get("function"), f"{where}[{position}].function")
        name = expect_str(function.get("name"), f"{where}[{position}].function.name")
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # A few compatible servers send an object.
            parsed = arguments
        else:
            raw_arguments = optional_str(arguments, f"{where}[{position}].function.arguments")
            parsed = tool_arguments(raw_arguments or "", name)
        call_id = optional_str(call.get("id"), f"{where}[{position}].id")
        calls.append(ToolUseBlock(id=call_id or f"call_{position}", name=name, arguments=parsed))
    return calls


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = expect_list(content, "choices[0].message.content")
    texts = []
    for part in parts:
        part = expect_dict(part, "a content part")
        if part.get("type") == "text":
            texts.append(expect_str(part.get("text"), "a text part's text"))
    return "".join(texts)


def decode_usage(raw: Any) -> Usage | None:
    """``usage`` (prompt, completion and cached prompt tokens), or None when absent."""
    if raw is None:
        return None
    usage = expect_dict(raw, "usage")
    details = usage.get("prompt_tokens_details")
    cached = 0
    if details is not None:
        cached = token_count(
            expect_dict(details, "usage.prompt_tokens_details").get("cached_tokens"),
            "usage.prompt_tokens_details.cached_tokens",
        )
    return Usage(
        input_tokens=token_count(usage.get("prompt_tokens"), "usage.prompt_tokens"),
        output_tokens=token_count(usage.get("completion_tokens"), "usage.completion_tokens"),
        cached_input_tokens=cached,
    )


def stop_reason_of(finish: str | None, *, has_calls: bool) -> StopReason:
    """Agentcore's stop reason for a ``finish_reason`` (a reply with tool calls is ``tool_use``)."""
    # Some compatible servers say "stop" when the reply calls tools.
    if has_calls and finish != "length":
        return "tool_use"
    if finish is None:
        return "end_turn"
    return _FINISH_REASONS.get(finish, "other")


REASONING_KEYS = ("reasoning_content", "reasoning")
"""Where compatible servers put the reasoning: DeepSeek, vLLM and llama.cpp the first,
OpenRouter and Ollama the second."""


def assistant_message(text: str, calls: list[ToolUseBlock], reasoning: str = "") -> Message:
    """The assistant message of a reply: its reasoning, its text, then its tool calls."""
    blocks: list[ContentBlock] = [ReasoningBlock(reasoning)] if reasoning else []
    if text:
        blocks.append(TextBlock(text))
    blocks.extend(calls)
    return Message("assistant", blocks)
