"""The Anthropic Messages API's streamed replies, assembled into stream events.

Text, tool calls and reasoning (``thinking`` blocks with their signature,
``redacted_thinking`` blocks) are assembled as in
:mod:`agentcore.providers._anthropic_codec`, whose helpers this module uses.
The output tool of a request with an output schema (see
:mod:`agentcore.output`) streams as text: its input JSON is the reply.
"""

from __future__ import annotations

import json
from typing import Any

from attrs import define, field

from agentcore._bounded_json import NestedTooDeeplyError, loads_bounded
from agentcore.errors import LlmError, MalformedResponseError
from agentcore.llm import LlmResponse, ResponseComplete, StreamEvent, TextDelta, ToolCallDelta
from agentcore.messages import ContentBlock, Message, ReasoningBlock, TextBlock, ToolUseBlock
from agentcore.providers._anthropic_codec import reply_stop_reason, usage_fields, usage_from
from agentcore.providers._http import ApiClient
from agentcore.providers._sse import SseEvent
from agentcore.providers._text import TextJoiner, valid_json, valid_text
from agentcore.providers._wire import expect_dict, expect_str, optional_str, tool_arguments
from agentcore.validators import is_int


@define
class _Block:
    kind: str
    texts: list[str] = field(factory=list)
    call_id: str = ""
    name: str = ""
    start_input: dict[str, Any] = field(factory=dict)
    joiner: TextJoiner = field(factory=TextJoiner)
    call: ToolUseBlock | None = None
    signature: str | None = None
    finished: bool = False


class AnthropicStreamDecoder:
    """Assembles Messages API stream events into stream events.

    Text is yielded with each ``text_delta``; a tool call is yielded whole at
    the ``content_block_stop`` that ends its ``input_json_delta`` fragments;
    reasoning (``thinking_delta`` and ``signature_delta``) is kept for the
    reply's message; the input of ``output_tool`` (the output schema's tool)
    is yielded as text as its fragments arrive. The reply is complete at
    ``message_stop``. ``ping`` and unknown events are skipped; an ``error``
    event raises.
    """

    def __init__(
        self, api: ApiClient, requested_model: str, output_tool: str | None = None
    ) -> None:
        self._api = api
        self._model = requested_model
        self._output_tool = output_tool
        self._blocks: dict[int, _Block] = {}
        self._usage: dict[str, int] = {}
        self._has_usage = False
        self._stop: str | None = None
        self._done = False
        self._progress = 0

    @property
    def done(self) -> bool:
        """Whether ``message_stop`` has arrived."""
        return self._done

    @property
    def progress(self) -> int:
        """Events so far with content.

        ``message_start``, a tool call's start, non-empty text or argument
        fragments, a ``message_delta`` with a stop reason or usage, and
        ``message_stop``; not ``ping``, not an empty delta, not a text
        block's start or stop.
        """
        return self._progress

    def feed(self, event: SseEvent) -> list[StreamEvent]:
        """Take one event; return the stream events it completes."""
        try:
            data = loads_bounded(event.data)
        except NestedTooDeeplyError as exc:
            raise MalformedResponseError(
                f"a streamed event from the {self._api.label} is {exc}"
            ) from None
        except ValueError as exc:
            raise MalformedResponseError(
                f"a streamed event from the {self._api.label} is not valid JSON ({exc}): "
                f"{self._api.redact(event.data)[:200]!r}"
            ) from None
        payload = expect_dict(data, f"the data of a {event.event} event")
        kind = payload.get("type", event.event)
        if self._has_content(kind, payload):
            self._progress += 1
        if kind == "message_start":
            self._message_start(expect_dict(payload.get("message"), "message_start.message"))
        elif kind == "content_block_start":
            return self._block_start(payload)
        elif kind == "content_block_delta":
            return self._block_delta(payload)
        elif kind == "content_block_stop":
            return self._block_stop(self._index(payload))
        elif kind == "message_delta":
            delta = expect_dict(payload.get("delta") or {}, "message_delta.delta")
            stop = optional_str(delta.get("stop_reason"), "message_delta.delta.stop_reason")
            if stop:
                self._stop = stop
            if payload.get("usage") is not None:
                self._add_usage(payload["usage"])
        elif kind == "message_stop":
            return self._message_stop()
        elif kind == "error":
            raise self._error(payload.get("error"), event.data)
        return []

    @staticmethod
    def _has_content(kind: Any, payload: dict[str, Any]) -> bool:
        if kind in ("message_start", "message_stop"):
            return True
        if kind == "content_block_start":
            block = payload.get("content_block")
            return isinstance(block, dict) and (
                block.get("type") != "text" or bool(block.get("text"))
            )
        if kind == "content_block_delta":
            delta = payload.get("delta")
            return isinstance(delta, dict) and any(
                bool(delta.get(key)) for key in ("text", "partial_json", "thinking", "signature")
            )
        if kind == "message_delta":
            delta = payload.get("delta")
            stop = isinstance(delta, dict) and bool(delta.get("stop_reason"))
            return stop or payload.get("usage") is not None
        return False

    def end_of_stream(self) -> None:
        """The body ended before ``message_stop``: raise."""
        raise self._api.stream_cut("message_stop")

    def _message_start(self, message: dict[str, Any]) -> None:
        model = message.get("model")
        if isinstance(model, str) and model:
            self._model = valid_text(model)
        if message.get("usage") is not None:
            self._add_usage(message["usage"])

    def _add_usage(self, raw: Any) -> None:
        self._usage.update(usage_fields(raw))
        self._has_usage = True

    def _index(self, payload: dict[str, Any]) -> int:
        index = payload.get("index")
        if not is_int(index):
            raise MalformedResponseError(f"a {payload.get('type')} event has index {index!r}")
        return index

    def _block(self, payload: dict[str, Any]) -> _Block:
        index = self._index(payload)
        if index not in self._blocks:
            raise MalformedResponseError(
                f"a {payload.get('type')} event names block {index}, which was never started"
            )
        return self._blocks[index]

    def _block_start(self, payload: dict[str, Any]) -> list[StreamEvent]:
        index = self._index(payload)
        start = expect_dict(payload.get("content_block"), "content_block_start.content_block")
        kind = str(start.get("type"))
        block = _Block(kind)
        self._blocks[index] = block
        if kind == "text":
            text = block.joiner.feed(optional_str(start.get("text"), "content_block.text") or "")
            if text:
                block.texts.append(text)
                return [TextDelta(text)]
        elif kind == "tool_use":
            block.call_id = valid_text(expect_str(start.get("id"), "content_block.id"))
            block.name = valid_text(expect_str(start.get("name"), "content_block.name"))
            block.start_input = valid_json(
                expect_dict(start.get("input") or {}, "content_block.input")
            )
            if block.name == self._output_tool:
                block.kind = "output"
        elif kind == "thinking":
            block.texts.append(optional_str(start.get("thinking"), "content_block.thinking") or "")
            block.signature = optional_str(start.get("signature"), "content_block.signature")
        elif kind == "redacted_thinking":
            block.texts.append(expect_str(start.get("data"), "content_block.data"))
        return []

    def _block_delta(self, payload: dict[str, Any]) -> list[StreamEvent]:
        block = self._block(payload)
        delta = expect_dict(payload.get("delta"), "content_block_delta.delta")
        kind = delta.get("type")
        if kind == "text_delta" and block.kind == "text":
            text = block.joiner.feed(expect_str(delta.get("text"), "text_delta.text"))
            if text:
                block.texts.append(text)
                return [TextDelta(text)]
        elif kind == "input_json_delta" and block.kind in ("tool_use", "output"):
            piece = expect_str(delta.get("partial_json"), "input_json_delta.partial_json")
            block.texts.append(piece)
            if block.kind == "output" and piece:
                return [TextDelta(piece)]
        elif kind == "thinking_delta" and block.kind == "thinking":
            block.texts.append(valid_text(expect_str(delta.get("thinking"), "thinking_delta")))
        elif kind == "signature_delta" and block.kind == "thinking":
            block.signature = expect_str(delta.get("signature"), "signature_delta.signature")
        return []

    def _block_stop(self, index: int) -> list[StreamEvent]:
        block = self._blocks.get(index)
        if block is None:
            raise MalformedResponseError(f"content_block_stop names block {index}, never started")
        if block.kind == "text":
            rest = block.joiner.flush()
            if rest:
                block.texts.append(rest)
                return [TextDelta(rest)]
            return []
        if block.kind == "output" and not block.finished:
            block.finished = True
            if not "".join(block.texts).strip():
                block.texts = [json.dumps(block.start_input, ensure_ascii=False)]
                return [TextDelta(block.texts[0])]
            return []
        if block.kind != "tool_use" or block.call is not None:
            return []
        raw = "".join(block.texts)
        arguments = tool_arguments(raw, block.name) if raw.strip() else block.start_input
        block.call = ToolUseBlock(id=block.call_id, name=block.name, arguments=arguments)
        return [ToolCallDelta(block.call)]

    def _message_stop(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for index in sorted(self._blocks):
            events.extend(self._block_stop(index))
        content: list[ContentBlock] = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if block.kind in ("text", "output") and "".join(block.texts):
                content.append(TextBlock("".join(block.texts)))
            elif block.kind == "thinking":
                content.append(ReasoningBlock("".join(block.texts), signature=block.signature))
            elif block.kind == "redacted_thinking":
                content.append(ReasoningBlock("", data="".join(block.texts)))
            elif block.call is not None:
                content.append(block.call)
        self._done = True
        events.append(
            ResponseComplete(
                LlmResponse(
                    message=Message("assistant", content),
                    usage=usage_from(self._usage) if self._has_usage else None,
                    stop_reason=reply_stop_reason(self._stop, content, self._output_tool),
                    model=self._model,
                )
            )
        )
        return events

    def _error(self, raw: Any, data: str) -> LlmError:
        if isinstance(raw, dict):
            error_type = raw.get("type") if isinstance(raw.get("type"), str) else None
            return self._api.stream_error(
                error_type, None, str(raw.get("message") or raw), body=data, error=raw
            )
        return self._api.stream_error(None, None, str(raw), body=data)
