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
in a request). The tool choice and the output schema (``response_format``)
are encoded by :mod:`agentcore.providers._choice`.

Replies: text, refusals (kept as text), reasoning (``reasoning_content``, or
``reasoning`` as OpenRouter and Ollama send it) as a
:class:`~agentcore.messages.ReasoningBlock` before the text, tool calls,
``finish_reason`` and
``usage`` with ``prompt_tokens_details.cached_tokens``; streamed replies as
``chat.completion.chunk`` events ending with ``[DONE]``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from attrs import define, field

from agentcore._bounded_json import NestedTooDeeplyError, loads_bounded
from agentcore.errors import BadRequestError, LlmError, MalformedResponseError
from agentcore.llm import (
    LlmRequest,
    LlmResponse,
    ResponseComplete,
    StopReason,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from agentcore.messages import (
    AudioBlock,
    ContentBlock,
    FileBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolUseBlock,
)
from agentcore.providers._choice import openai_fields
from agentcore.providers._http import ApiClient
from agentcore.providers._order import pair_tool_results
from agentcore.providers._sse import SseEvent
from agentcore.providers._text import TextJoiner, valid_text
from agentcore.providers._wire import (
    expect_dict,
    expect_list,
    expect_str,
    optional_str,
    token_count,
    tool_arguments,
)
from agentcore.usage import Usage
from agentcore.validators import is_int

logger = logging.getLogger(__name__)

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
        return _encode_assistant(message)
    return {"role": "user", "content": _encode_user_content(message.content)}


def _text_only(message: Message, what: str) -> str:
    for block in message.content:
        if not isinstance(block, TextBlock):
            raise BadRequestError(
                f"the OpenAI Chat Completions API takes only text in {what}, "
                f"not a {block.kind} block"
            )
    return message.text


def _encode_assistant(message: Message) -> dict[str, Any]:
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
        elif not isinstance(block, ReasoningBlock):  # Reasoning is never sent back.
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
    content = tuple(block for block in content if not isinstance(block, ReasoningBlock))
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
            for key in _REASONING_KEYS
            if (found := optional_str(message.get(key), f"choices[0].message.{key}"))
        ),
        "",
    )
    return LlmResponse(
        message=_assistant(text, calls, reasoning),
        usage=decode_usage(body.get("usage")),
        stop_reason=_stop_reason(finish, has_calls=bool(calls)),
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


def _stop_reason(finish: str | None, *, has_calls: bool) -> StopReason:
    # Some compatible servers say "stop" when the reply calls tools.
    if has_calls and finish != "length":
        return "tool_use"
    if finish is None:
        return "end_turn"
    return _FINISH_REASONS.get(finish, "other")


_REASONING_KEYS = ("reasoning_content", "reasoning")
"""Where compatible servers put the reasoning: DeepSeek, vLLM and llama.cpp the first,
OpenRouter and Ollama the second."""


def _assistant(text: str, calls: list[ToolUseBlock], reasoning: str = "") -> Message:
    blocks: list[ContentBlock] = [ReasoningBlock(reasoning)] if reasoning else []
    if text:
        blocks.append(TextBlock(text))
    blocks.extend(calls)
    return Message("assistant", blocks)


@define
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(factory=list)


class OpenAIStreamDecoder:
    """Assembles ``chat.completion.chunk`` events into stream events.

    Text is yielded as it comes; tool calls, whose argument fragments arrive
    by ``index``, are yielded whole once ``finish_reason`` arrives; the reply
    is complete at ``[DONE]``.
    """

    def __init__(self, api: ApiClient, requested_model: str) -> None:
        self._api = api
        self._model = requested_model
        self._texts: list[str] = []
        self._joiners = {"content": TextJoiner(), "refusal": TextJoiner()}
        self._reasoning = {key: TextJoiner() for key in _REASONING_KEYS}
        self._reasoning_texts: dict[str, list[str]] = {key: [] for key in _REASONING_KEYS}
        self._calls: dict[int, _PartialCall] = {}
        self._assembled: list[ToolUseBlock] | None = None
        self._finish: str | None = None
        self._usage: Usage | None = None
        self._done = False
        self._progress = 0

    @property
    def done(self) -> bool:
        """Whether ``[DONE]`` has arrived."""
        return self._done

    @property
    def progress(self) -> int:
        """Events so far with content: text, a tool call piece, a finish reason, usage, ``[DONE]``.

        A chunk whose delta is empty (or holds only the role) is not content.
        """
        return self._progress

    def feed(self, event: SseEvent) -> list[StreamEvent]:
        """Take one event; return the stream events it completes."""
        if event.data.strip() == "[DONE]":
            self._done = True
            self._progress += 1
            events: list[StreamEvent] = []
            for joiner in self._joiners.values():
                rest = joiner.flush()
                if rest:
                    self._texts.append(rest)
                    events.append(TextDelta(rest))
            events.extend(self._emit_calls())
            events.append(ResponseComplete(self._response()))
            return events
        try:
            chunk = loads_bounded(event.data)
        except NestedTooDeeplyError as exc:
            raise MalformedResponseError(
                f"a streamed chunk from the {self._api.label} is {exc}"
            ) from None
        except ValueError as exc:
            raise MalformedResponseError(
                f"a streamed chunk from the {self._api.label} is not valid JSON ({exc}): "
                f"{self._api.redact(event.data)[:200]!r}"
            ) from None
        chunk = expect_dict(chunk, "a streamed chunk")
        if chunk.get("error") is not None:
            raise self._error(chunk["error"], event.data)
        model = chunk.get("model")
        if isinstance(model, str) and model:
            self._model = valid_text(model)
        content = False
        if chunk.get("usage") is not None:
            self._usage = decode_usage(chunk["usage"])
            content = True
        out: list[StreamEvent] = []
        for raw_choice in expect_list(chunk.get("choices") or [], "a chunk's choices"):
            choice = expect_dict(raw_choice, "a chunk's choice")
            if choice.get("index", 0) != 0:
                continue
            delta = expect_dict(choice.get("delta") or {}, "a choice's delta")
            for key in ("content", "refusal"):
                raw = optional_str(delta.get(key), f"delta.{key}") or ""
                content = content or bool(raw)
                piece = self._joiners[key].feed(raw)
                if piece:
                    self._texts.append(piece)
                    out.append(TextDelta(piece))
            for key, joiner in self._reasoning.items():
                raw = optional_str(delta.get(key), f"delta.{key}") or ""
                content = content or bool(raw)
                self._reasoning_texts[key].append(joiner.feed(raw))
            for position, raw_call in enumerate(delta.get("tool_calls") or []):
                fragment = expect_dict(raw_call, "delta.tool_calls[]")
                content = self._add_call_fragment(position, fragment) or content
            finish = optional_str(choice.get("finish_reason"), "finish_reason")
            if finish:
                content = True
                self._finish = finish
                out.extend(self._emit_calls())
        if content:
            self._progress += 1
        return out

    def end_of_stream(self) -> None:
        """The body ended before ``[DONE]``: raise."""
        raise self._api.stream_cut("[DONE]")

    def _add_call_fragment(self, position: int, fragment: dict[str, Any]) -> bool:
        """Add a piece of a streamed call; whether it held anything (an id, a name, arguments)."""
        index = fragment.get("index", position)
        if not is_int(index):
            raise MalformedResponseError(f"a tool call delta has index {index!r}")
        if self._assembled is not None:
            raise MalformedResponseError("a tool call fragment arrived after finish_reason")
        call = self._calls.setdefault(index, _PartialCall())
        call_id = optional_str(fragment.get("id"), "delta.tool_calls[].id")
        if call_id:
            call.id = valid_text(call_id)
        function = expect_dict(fragment.get("function") or {}, "delta.tool_calls[].function")
        name = optional_str(function.get("name"), "delta.tool_calls[].function.name")
        if name and not call.name:
            call.name = valid_text(name)
        arguments = function.get("arguments")
        if isinstance(arguments, dict):
            call.arguments = [json.dumps(arguments)]
        elif arguments is not None:
            call.arguments.append(expect_str(arguments, "delta.tool_calls[].function.arguments"))
        return bool(call_id or name or arguments)

    def _emit_calls(self) -> list[ToolCallDelta]:
        if self._assembled is not None:
            return []
        self._assembled = []
        for index in sorted(self._calls):
            partial = self._calls[index]
            if not partial.name:
                raise MalformedResponseError(f"streamed tool call {index} has no function name")
            call = ToolUseBlock(
                id=partial.id or f"call_{index}",
                name=partial.name,
                arguments=tool_arguments("".join(partial.arguments), partial.name),
            )
            self._assembled.append(call)
        return [ToolCallDelta(call) for call in self._assembled]

    def _response(self) -> LlmResponse:
        calls = self._assembled or []
        reasoning = [
            "".join(self._reasoning_texts[key]) + self._reasoning[key].flush()
            for key in _REASONING_KEYS
        ]
        return LlmResponse(
            message=_assistant("".join(self._texts), calls, reasoning[0] or reasoning[1]),
            usage=self._usage,
            stop_reason=_stop_reason(self._finish, has_calls=bool(calls)),
            model=self._model,
        )

    def _error(self, raw: Any, data: str) -> LlmError:
        if isinstance(raw, dict):
            message = str(raw.get("message") or raw)
            error_type = raw.get("type") if isinstance(raw.get("type"), str) else None
            code = raw.get("code")
            status = code if is_int(code) else None
            if error_type is None and isinstance(code, str):
                error_type = code
            return self._api.stream_error(
                error_type,
                status,
                message,
                code=code if isinstance(code, str) and code else error_type,
                body=data,
                error=raw,
            )
        return self._api.stream_error(None, None, str(raw), body=data)
