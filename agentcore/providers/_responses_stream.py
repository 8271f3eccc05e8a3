"""The OpenAI Responses API's streamed replies, assembled into stream events.

The API streams typed events, each naming the output item it belongs to by
``output_index``: ``response.created``, ``response.output_item.added``,
``response.output_text.delta`` (and ``response.refusal.delta``, kept as
text), ``response.function_call_arguments.delta`` and ``.done``,
``response.output_item.done``, and one terminal event:
``response.completed``, ``response.incomplete`` (the reply stopped early,
at ``max_output_tokens`` say) or ``response.failed``; an ``error`` event
ends a stream too. Other events (content parts, reasoning text as it
comes, built-in tools) carry nothing agentcore keeps. The helpers that read
whole items are :mod:`agentcore.providers._responses_codec`'s.
"""

from __future__ import annotations

from typing import Any

from attrs import define, field

from agentcore._bounded_json import NestedTooDeeplyError, loads_bounded
from agentcore.errors import LlmError, MalformedResponseError
from agentcore.llm import LlmResponse, ResponseComplete, StreamEvent, TextDelta, ToolCallDelta
from agentcore.messages import (
    ContentBlock,
    Message,
    OpaqueBlock,
    ReasoningBlock,
    TextBlock,
    ToolUseBlock,
)
from agentcore.providers._http import ApiClient
from agentcore.providers._responses_codec import (
    decode_call,
    decode_usage,
    merge_text,
    message_text,
    opaque_item,
    stop_reason_of,
)
from agentcore.providers._responses_reasoning import decode_reasoning
from agentcore.providers._sse import SseEvent
from agentcore.providers._text import TextJoiner, valid_json, valid_text
from agentcore.providers._wire import expect_dict, expect_str, optional_str
from agentcore.validators import is_int

TERMINAL_EVENTS = ("response.completed", "response.incomplete")
"""The events that end a reply that did not fail."""

_CONTENT_EVENTS = frozenset(
    {
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.function_call_arguments.done",
        *TERMINAL_EVENTS,
    }
)


@define
class _Item:
    """One output item as its events arrive."""

    raw: dict[str, Any]
    texts: list[str] = field(factory=list)
    joiner: TextJoiner = field(factory=TextJoiner)
    arguments: list[str] = field(factory=list)
    done_arguments: str | None = None
    call: ToolUseBlock | None = None
    reasoning: ReasoningBlock | None = None
    opaque: OpaqueBlock | None = None
    finished: bool = False

    @property
    def kind(self) -> Any:
        """The item's ``type``: ``"message"``, ``"function_call"``, ``"reasoning"``..."""
        return self.raw.get("type")


class ResponsesStreamDecoder:
    """Assembles Responses API stream events into stream events.

    Text is yielded as it comes; a tool call is yielded whole once its
    arguments are done (``response.function_call_arguments.done``, or its
    item's ``response.output_item.done``); a reasoning item is kept, whole
    with its encrypted content, from its ``response.output_item.done``. The
    reply is complete at ``response.completed`` or ``response.incomplete``,
    whose response gives the usage and the stop reason; an output item it
    holds that no event announced is taken from it. ``response.failed`` and
    ``error`` events raise.
    """

    def __init__(self, api: ApiClient, requested_model: str) -> None:
        self._api = api
        self._model = requested_model
        self._items: dict[int, _Item] = {}
        self._done = False
        self._progress = 0

    @property
    def done(self) -> bool:
        """Whether the terminal event has arrived."""
        return self._done

    @property
    def progress(self) -> int:
        """Events so far with content.

        The start and the end of the reply and of each output item, the end
        of a call's arguments, and every ``*.delta`` event whose delta is not
        empty (reasoning text included); not the other events, which repeat
        what these say.
        """
        return self._progress

    def feed(self, event: SseEvent) -> list[StreamEvent]:
        """Take one event; return the stream events it completes."""
        payload = self._payload(event)
        kind = payload.get("type", event.event)
        if kind == "error":
            raise self._error(payload.get("error") or payload, event.data)
        if kind == "response.failed":
            response = expect_dict(payload.get("response"), "response.failed.response")
            raise self._error(response.get("error") or {"message": "no error given"}, event.data)
        if kind in _CONTENT_EVENTS or (
            isinstance(kind, str) and kind.endswith(".delta") and bool(payload.get("delta"))
        ):
            self._progress += 1
        if kind in ("response.created", "response.in_progress"):
            self._read_model(payload.get("response"))
        elif kind == "response.output_item.added":
            self._items[self._index(payload)] = _Item(self._raw_item(payload))
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            return self._text(self._item(payload, "message"), payload)
        elif kind == "response.function_call_arguments.delta":
            delta = expect_str(payload.get("delta"), f"the delta of a {kind} event")
            self._item(payload, "function_call").arguments.append(delta)
        elif kind == "response.function_call_arguments.done":
            call = self._item(payload, "function_call")
            call.done_arguments = expect_str(payload.get("arguments"), f"a {kind} event")
            return self._emit_call(call)
        elif kind == "response.output_item.done":
            return self._item_done(self._index(payload), self._raw_item(payload))
        elif kind in TERMINAL_EVENTS:
            response = expect_dict(payload.get("response"), f"{kind}.response")
            if kind == "response.incomplete":
                response.setdefault("status", "incomplete")
            return self._complete(response)
        return []

    def end_of_stream(self) -> None:
        """The body ended before ``response.completed``: raise."""
        raise self._api.stream_cut("response.completed")

    def _payload(self, event: SseEvent) -> dict[str, Any]:
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
        return expect_dict(data, f"the data of a {event.event} event")

    def _raw_item(self, payload: dict[str, Any]) -> dict[str, Any]:
        return expect_dict(valid_json(payload.get("item")), f"a {payload.get('type')} event's item")

    def _read_model(self, raw: Any) -> None:
        if raw is None:
            return
        model = expect_dict(raw, "the response of an event").get("model")
        if isinstance(model, str) and model:
            self._model = valid_text(model)

    def _index(self, payload: dict[str, Any]) -> int:
        index = payload.get("output_index")
        if not is_int(index) or index < 0:
            raise MalformedResponseError(
                f"a {payload.get('type')} event has output_index {index!r}"
            )
        return index

    def _item(self, payload: dict[str, Any], kind: str) -> _Item:
        index = self._index(payload)
        item = self._items.get(index)
        if item is None or item.kind != kind:
            found = "was never added" if item is None else f"is a {item.kind!r} item"
            raise MalformedResponseError(
                f"a {payload.get('type')} event names output item {index}, which {found}"
            )
        return item

    def _text(self, item: _Item, payload: dict[str, Any]) -> list[StreamEvent]:
        delta = expect_str(payload.get("delta"), f"the delta of a {payload.get('type')} event")
        piece = item.joiner.feed(delta)
        if not piece:
            return []
        item.texts.append(piece)
        return [TextDelta(piece)]

    def _emit_call(self, item: _Item) -> list[StreamEvent]:
        if item.call is not None:
            return []
        arguments = item.done_arguments
        if arguments is None:
            given = optional_str(item.raw.get("arguments"), "a function_call item's arguments")
            arguments = given if given else "".join(item.arguments)
        item.call = decode_call(item.raw, "a streamed function_call item", arguments)
        return [ToolCallDelta(item.call)]

    def _item_done(self, index: int, raw: dict[str, Any]) -> list[StreamEvent]:
        item = self._items.setdefault(index, _Item(raw))
        item.raw = raw
        item.finished = True
        if item.kind == "message":
            if item.texts:
                return self._flush(item)
            text = valid_text(message_text(raw, "a streamed message item"))
            item.texts.append(text)
            return [TextDelta(text)] if text else []
        if item.kind == "function_call":
            return self._emit_call(item)
        if item.kind == "reasoning":
            item.reasoning = decode_reasoning(raw, "a streamed reasoning item")
        else:
            item.opaque = opaque_item(raw)
        return []

    def _flush(self, item: _Item) -> list[StreamEvent]:
        rest = item.joiner.flush()
        if not rest:
            return []
        item.texts.append(rest)
        return [TextDelta(rest)]

    def _complete(self, response: dict[str, Any]) -> list[StreamEvent]:
        self._read_model(response)
        events: list[StreamEvent] = []
        output = response.get("output")
        if isinstance(output, list):
            for index, raw in enumerate(output):
                if index not in self._items and isinstance(raw, dict):
                    events.extend(self._item_done(index, expect_dict(valid_json(raw), "output")))
        blocks: list[ContentBlock] = []
        for index in sorted(self._items):
            item = self._items[index]
            if item.kind == "message":
                events.extend(self._flush(item))
                blocks.append(TextBlock("".join(item.texts)))
            elif item.kind == "function_call":
                events.extend(self._emit_call(item))
                if item.call is not None:
                    blocks.append(item.call)
            elif item.reasoning is not None:
                blocks.append(item.reasoning)
            elif item.opaque is not None:
                blocks.append(item.opaque)
        merged = merge_text(blocks)
        self._done = True
        events.append(
            ResponseComplete(
                LlmResponse(
                    message=Message("assistant", merged),
                    usage=decode_usage(response.get("usage")),
                    stop_reason=stop_reason_of(response, merged),
                    model=self._model,
                )
            )
        )
        return events

    def _error(self, raw: Any, data: str) -> LlmError:
        if not isinstance(raw, dict):
            return self._api.stream_error(None, None, str(raw), body=data)
        code = raw.get("code") if isinstance(raw.get("code"), str) else None
        error_type = raw.get("type") if isinstance(raw.get("type"), str) else None
        if error_type in (None, "error", "response.failed"):
            error_type = code
        message = raw.get("message")
        return self._api.stream_error(
            error_type,
            None,
            message if isinstance(message, str) and message else str(raw),
            code=code or error_type,
            body=data,
            error=raw,
        )
