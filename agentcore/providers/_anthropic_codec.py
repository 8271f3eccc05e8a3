"""agentcore messages to and from the JSON of Anthropic's Messages API.

Requests: system messages, wherever they stand in the list, become the
top-level ``system`` field in their order (a string for one, a list of text
blocks for several, so no text is changed); tool results become
``tool_result`` blocks of a user message (``is_error`` kept); consecutive
messages of one role are merged, as the API wants user and assistant to
alternate; empty and blank text blocks are left out, as the API rejects them. Every
request begins as the API requires, whatever part of a conversation it
holds: a result is moved to directly after its call, a result without its
call becomes user text and a call without its result assistant text (see
:mod:`agentcore.providers._order`); a list that would begin with an
assistant turn gets a user turn of :data:`LEADING_USER_TEXT` first; in a
user turn the ``tool_result`` blocks come before any other block; a final
assistant turn (a prefill) loses its trailing whitespace. Nothing else is
left out or changed, except opaque items of another API
(:class:`~agentcore.messages.OpaqueBlock`), which only that API reads. Images
become ``image`` blocks, files ``document`` blocks (``text/*`` data as a
plain-text source). Audio is refused: the API takes none.

Replies: ``text`` and ``tool_use`` blocks, ``thinking`` and
``redacted_thinking`` blocks as reasoning (sent back with their signature;
reasoning without one is left out of requests), ``stop_reason`` and
``usage``; streamed replies are assembled by
:mod:`agentcore.providers._anthropic_stream`. The tool choice and the
output schema are encoded by :mod:`agentcore.providers._choice`. Anthropic counts cached prompt
tokens apart from ``input_tokens``, so :class:`~agentcore.usage.Usage` gets
``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` as
its input, ``cache_read_input_tokens`` as its cached part and
``cache_creation_input_tokens`` as its cache writes.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentcore.errors import BadRequestError
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
from agentcore.providers._choice import anthropic_fields
from agentcore.providers._order import pair_tool_results
from agentcore.providers._wire import (
    expect_dict,
    expect_list,
    expect_str,
    optional_str,
    token_count,
)
from agentcore.usage import Usage

STOP_REASONS: Mapping[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
}


LEADING_USER_TEXT = "(The conversation so far follows.)"
"""The user turn put first when a request would otherwise begin with an assistant turn."""


MAX_BREAKPOINTS = 4
"""The most ``cache_control`` breakpoints one request may carry (Anthropic's limit)."""


def encode_request(
    request: LlmRequest,
    *,
    model: str,
    stream: bool,
    default_max_tokens: int,
    cache_ttl: str | None = None,
) -> dict[str, Any]:
    """The Messages API body for ``request``, with a message list the API accepts.

    With ``cache_ttl`` (``"5m"`` or ``"1h"``) the body carries prompt-cache
    breakpoints (see :func:`mark_breakpoints`); None sends none.
    """
    systems, turns = encode_turns(pair_tool_results(request.messages))
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens or default_max_tokens,
        "messages": _valid_turns(turns),
    }
    if len(systems) == 1:
        body["system"] = systems[0]
    elif systems:
        body["system"] = [{"type": "text", "text": text} for text in systems]
    tools = [encode_tool(tool) for tool in request.tools]
    body.update(anthropic_fields(request, tools))
    if tools:
        body["tools"] = tools
    if request.temperature is not None:
        body["temperature"] = min(request.temperature, 1.0)
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    if stream:
        body["stream"] = True
    if cache_ttl is not None:
        mark_breakpoints(body, cache_ttl, newest=request.cache_newest)
    return body


def encode_turns(messages: Sequence[Message]) -> tuple[list[str], list[dict[str, Any]]]:
    """The system texts and the user/assistant turns of ``messages``, in their order.

    System messages give the system texts (empty ones left out); tool
    results become ``tool_result`` blocks of a user turn; consecutive
    messages of one role merge into one turn; blank text blocks are left
    out, and a message left with no block adds none. Nothing is moved or
    added: :func:`encode_request` makes the list one the API accepts.
    """
    systems: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            text = _system_text(message)
            if text:
                systems.append(text)
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _encode_blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return systems, turns


def mark_breakpoints(body: dict[str, Any], ttl: str, *, newest: bool = True) -> None:
    """Put ``cache_control`` on the blocks that end each stable part of ``body``, at most four.

    In the order the API caches them: the last tool definition (the tools),
    the last system block (tools and system prompt; a system string becomes
    one text block), the end of the turn before the newest user turn (what
    the previous request of a conversation ended with, so this one reads it
    from the cache), and the end of the newest turn (so the next request
    reads this one), unless ``newest`` is False: no later request starts
    with this one's newest turn (:attr:`~agentcore.llm.LlmRequest.cache_newest`),
    and an entry written there, at more than the input price, would never
    be read. ``ttl`` is ``"5m"`` (the API's default) or ``"1h"``.
    """
    control: dict[str, Any] = {"type": "ephemeral"}
    if ttl != "5m":
        control["ttl"] = ttl
    marks: list[dict[str, Any]] = []
    if body.get("tools"):
        marks.append(body["tools"][-1])
    if isinstance(body.get("system"), str):
        body["system"] = [{"type": "text", "text": body["system"]}]
    if body.get("system"):
        marks.append(body["system"][-1])
    turns = body["messages"]
    last_user = max((i for i, turn in enumerate(turns) if turn["role"] == "user"), default=None)
    if last_user is not None and last_user > 0:
        marks.append(turns[last_user - 1]["content"][-1])
    if turns and newest:
        marks.append(turns[-1]["content"][-1])
    seen: set[int] = set()
    for block in marks[-MAX_BREAKPOINTS:]:
        if id(block) not in seen:
            seen.add(id(block))
            block["cache_control"] = dict(control)


def _valid_turns(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``turns`` as the API takes them: first a user turn, tool results first in their turn.

    A list that is empty or begins with an assistant turn gets a user turn
    of :data:`LEADING_USER_TEXT` in front; in a user turn, ``tool_result``
    blocks move before the other blocks; trailing whitespace is taken off
    the text that ends a final assistant turn (a prefill), which the API
    refuses.
    """
    for turn in turns:
        if turn["role"] == "user":
            content = turn["content"]
            results = [block for block in content if block["type"] == "tool_result"]
            if results and len(results) < len(content):
                others = [block for block in content if block["type"] != "tool_result"]
                turn["content"] = results + others
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": LEADING_USER_TEXT}]})
    last = turns[-1]
    if last["role"] == "assistant" and last["content"][-1]["type"] == "text":
        text = last["content"][-1]["text"].rstrip()
        if text:
            last["content"][-1] = {"type": "text", "text": text}
        elif len(last["content"]) > 1:
            last["content"].pop()
        else:
            turns.pop()
    return turns


def encode_tool(tool: ToolSpec) -> dict[str, Any]:
    """A tool definition (``name``, ``description``, ``input_schema``)."""
    schema = dict(tool.parameters) or {"type": "object", "properties": {}}
    return {"name": tool.name, "description": tool.description, "input_schema": schema}


def _system_text(message: Message) -> str:
    for block in message.content:
        if not isinstance(block, TextBlock):
            raise BadRequestError(
                f"the Anthropic Messages API takes only text in a system message, "
                f"not a {block.kind} block"
            )
    return message.text


def _encode_blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
        if all(isinstance(block, TextBlock) for block in message.content):
            if message.text.strip():
                result["content"] = message.text
        else:
            result["content"] = [
                _encode_block(block, "a tool result")
                for block in message.content
                if not (isinstance(block, TextBlock) and not block.text.strip())
            ]
        if message.is_error:
            result["is_error"] = True
        return [result]
    where = f"a {message.role} message"
    return [
        _encode_block(block, where, tool_calls=message.role == "assistant")
        for block in message.content
        if not (isinstance(block, TextBlock) and not block.text.strip())
        and not (isinstance(block, ReasoningBlock) and _unsendable(block, message))
        and not isinstance(block, OpaqueBlock)  # another API's item: only it reads it
    ]


def _unsendable(block: ReasoningBlock, message: Message) -> bool:
    """Reasoning the API would refuse: another provider's, or not the assistant's.

    Another provider's is unsigned, or an OpenAI Responses reasoning item (it has an id).
    """
    theirs = block.id is not None or (block.signature is None and block.data is None)
    return message.role != "assistant" or theirs


def _encode_block(block: ContentBlock, where: str, *, tool_calls: bool = False) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        if not tool_calls:
            raise BadRequestError(
                f"a tool call can only be part of an assistant message, not {where}"
            )
        return {
            "type": "tool_use",
            "id": block.id,
            "name": block.name,
            "input": dict(block.arguments),
        }
    if isinstance(block, ImageBlock):
        if block.url is not None:
            return {"type": "image", "source": {"type": "url", "url": block.url}}
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": block.media_type, "data": block.data},
        }
    if isinstance(block, FileBlock):
        return {"type": "document", "title": block.name, "source": _document_source(block)}
    if isinstance(block, ReasoningBlock):
        if block.data is not None:
            return {"type": "redacted_thinking", "data": block.data}
        return {"type": "thinking", "thinking": block.text, "signature": block.signature}
    if isinstance(block, AudioBlock):
        raise BadRequestError(
            f"the Anthropic Messages API takes no audio ({block.media_type} in {where})"
        )
    raise BadRequestError(f"cannot send a {type(block).__name__} to the Anthropic Messages API")


def _document_source(block: FileBlock) -> dict[str, Any]:
    if block.url is not None:
        return {"type": "url", "url": block.url}
    if block.data is None:
        raise BadRequestError(f"file {block.name!r} has neither data= nor url=")
    if block.media_type.startswith("text/"):
        try:
            text = base64.b64decode(block.data, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise BadRequestError(
                f"file {block.name!r} is {block.media_type} but its data is not "
                f"base64 of UTF-8 text ({exc})"
            ) from None
        return {"type": "text", "media_type": "text/plain", "data": text}
    return {"type": "base64", "media_type": block.media_type, "data": block.data}


def decode_response(
    data: Any, *, requested_model: str, output_tool: str | None = None
) -> LlmResponse:
    """The reply in a ``message`` object.

    ``thinking`` and ``redacted_thinking`` blocks become
    :class:`~agentcore.messages.ReasoningBlock` blocks; a call of
    ``output_tool`` (the output schema's tool) becomes the text of its input.
    """
    body = expect_dict(data, "the response")
    blocks: list[ContentBlock] = []
    for position, raw in enumerate(expect_list(body.get("content"), "the response's content")):
        decoded = decode_content_block(raw, f"content[{position}]", output_tool)
        if decoded is not None and not (isinstance(decoded, TextBlock) and not decoded.text):
            blocks.append(decoded)
    stop = optional_str(body.get("stop_reason"), "stop_reason")
    model = body.get("model")
    return LlmResponse(
        message=Message("assistant", blocks),
        usage=decode_usage(body.get("usage")),
        stop_reason=reply_stop_reason(stop, blocks, output_tool),
        model=model if isinstance(model, str) and model else requested_model,
    )


def reply_stop_reason(
    stop: str | None, blocks: Sequence[ContentBlock], output_tool: str | None
) -> StopReason:
    """The stop reason of a reply; with an output tool, ``tool_use`` and no other call ends it."""
    reason = STOP_REASONS.get(stop or "end_turn", "other")
    if (
        output_tool is not None
        and reason == "tool_use"
        and not any(isinstance(block, ToolUseBlock) for block in blocks)
    ):
        return "end_turn"
    return reason


def decode_content_block(
    raw: Any, where: str, output_tool: str | None = None
) -> TextBlock | ToolUseBlock | ReasoningBlock | None:
    """A block of a reply: text, a tool call, reasoning, or the output tool's input as text."""
    block = expect_dict(raw, where)
    kind = block.get("type")
    if kind == "thinking":
        return ReasoningBlock(
            expect_str(block.get("thinking", ""), f"{where}.thinking"),
            signature=optional_str(block.get("signature"), f"{where}.signature"),
        )
    if kind == "redacted_thinking":
        return ReasoningBlock("", data=expect_str(block.get("data"), f"{where}.data"))
    decoded = decode_reply_block(block, where)
    if isinstance(decoded, ToolUseBlock) and decoded.name == output_tool:
        return TextBlock(json.dumps(dict(decoded.arguments), ensure_ascii=False))
    return decoded


def decode_reply_block(raw: Any, where: str) -> TextBlock | ToolUseBlock | None:
    """A ``text`` or ``tool_use`` block of an assistant turn; None for any other kind."""
    block = expect_dict(raw, where)
    kind = block.get("type")
    if kind == "text":
        return TextBlock(expect_str(block.get("text"), f"{where}.text"))
    if kind == "tool_use":
        return ToolUseBlock(
            id=expect_str(block.get("id"), f"{where}.id"),
            name=expect_str(block.get("name"), f"{where}.name"),
            arguments=expect_dict(block.get("input", {}), f"{where}.input"),
        )
    return None


def decode_usage(raw: Any) -> Usage | None:
    """``usage`` with cache reads and writes counted as input, or None when absent."""
    if raw is None:
        return None
    return usage_from(usage_fields(raw))


def usage_fields(raw: Any) -> dict[str, int]:
    usage = expect_dict(raw, "usage")
    fields = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    return {name: token_count(usage[name], f"usage.{name}") for name in fields if name in usage}


def usage_from(fields: Mapping[str, int]) -> Usage:
    cache_read = fields.get("cache_read_input_tokens", 0)
    return Usage(
        input_tokens=fields.get("input_tokens", 0)
        + fields.get("cache_creation_input_tokens", 0)
        + cache_read,
        output_tokens=fields.get("output_tokens", 0),
        cached_input_tokens=cache_read,
        cache_write_tokens=fields.get("cache_creation_input_tokens", 0),
    )
