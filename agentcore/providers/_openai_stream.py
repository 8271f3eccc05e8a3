"""The OpenAI Chat Completions API's streamed replies, assembled into stream events.

``chat.completion.chunk`` events ending with ``[DONE]``: text is yielded as it
comes, tool calls whole once their reply finishes; the helpers that read a
whole reply are :mod:`agentcore.providers._openai_codec`'s.
"""

from __future__ import annotations

import json
from typing import Any

from attrs import define, field

from agentcore._bounded_json import NestedTooDeeplyError, loads_bounded
from agentcore.errors import LlmError, MalformedResponseError
from agentcore.llm import LlmResponse, ResponseComplete, StreamEvent, TextDelta, ToolCallDelta
from agentcore.messages import ToolUseBlock
from agentcore.providers._http import ApiClient
from agentcore.providers._openai_codec import (
    REASONING_KEYS,
    assistant_message,
    decode_usage,
    stop_reason_of,
)
from agentcore.providers._sse import SseEvent
from agentcore.providers._text import TextJoiner, valid_text
from agentcore.providers._wire import (
    expect_dict,
    expect_list,
    expect_str,
    optional_str,
    tool_arguments,
)
from agentcore.usage import Usage
from agentcore.validators import is_int


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
        self._reasoning = {key: TextJoiner() for key in REASONING_KEYS}
        self._reasoning_texts: dict[str, list[str]] = {key: [] for key in REASONING_KEYS}
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
            for key in REASONING_KEYS
        ]
        return LlmResponse(
            message=assistant_message("".join(self._texts), calls, reasoning[0] or reasoning[1]),
            usage=self._usage,
            stop_reason=stop_reason_of(self._finish, has_calls=bool(calls)),
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
