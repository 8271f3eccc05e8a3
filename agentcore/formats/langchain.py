"""Histories to and from LangChain messages (``langchain-core``, imported when called).

:func:`from_langchain` reads ``SystemMessage``, ``HumanMessage``,
``AIMessage`` (its ``tool_calls``) and ``ToolMessage``; content as a string
or a list of blocks in LangChain's standard form (``text``, ``image``,
``audio``, ``file`` with ``base64`` or ``url``), its older ``source_type``
form, or the OpenAI and Anthropic part forms it also passes on.
:func:`to_langchain` writes the standard form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentcore.errors import ConfigError
from agentcore.formats import anthropic as _anthropic
from agentcore.formats import openai as _openai
from agentcore.formats._check import (
    at,
    check_history,
    expect_items,
    expect_mapping,
    expect_text,
)
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

__all__ = ["from_langchain", "to_langchain"]

_SKIPPED = ("thinking", "redacted_thinking", "reasoning", "tool_use", "tool_call")
"""AIMessage content blocks left out: reasoning, and calls also given as ``tool_calls``."""


def _langchain() -> Any:
    try:
        from langchain_core import messages
    except ImportError as exc:
        raise ImportError(
            "the LangChain converters need langchain-core: pip install langchain-core"
        ) from exc
    return messages


def to_langchain(messages: Sequence[Message]) -> list[Any]:
    """``messages`` as LangChain messages, one per message, in order.

    System messages become ``SystemMessage``, user ``HumanMessage``,
    assistant ``AIMessage`` (tool calls as its ``tool_calls``), tool results
    ``ToolMessage`` (``status="error"`` when ``is_error``). Content is a
    string when it is one text block, else a list of standard blocks.

    :raises ImportError: langchain-core is not installed.
    :raises ConfigError: a history :func:`~agentcore.formats.check_history`
        refuses, or a system message holding more than text.
    """
    lc = _langchain()
    check_history(messages)
    out = []
    for index, message in enumerate(messages):
        with at(index):
            out.append(_encode(lc, message))
    return out


def _encode(lc: Any, message: Message) -> Any:
    if message.role == "system":
        if any(not isinstance(block, TextBlock) for block in message.content):
            raise ConfigError("a system message takes text only")
        return lc.SystemMessage(content=message.text)
    if message.role == "assistant":
        calls = [
            {"type": "tool_call", "id": call.id, "name": call.name, "args": dict(call.arguments)}
            for call in message.tool_calls
        ]
        return lc.AIMessage(content=message.text, tool_calls=calls)
    content = _content(message.content)
    if message.role == "tool":
        status = "error" if message.is_error else "success"
        return lc.ToolMessage(content=content, tool_call_id=message.tool_call_id, status=status)
    return lc.HumanMessage(content=content)


def _content(blocks: Sequence[ContentBlock]) -> str | list[dict[str, Any]]:
    blocks = [block for block in blocks if not isinstance(block, OpaqueBlock)]  # no LangChain form
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
        return blocks[0].text
    return [_encode_block(block) for block in blocks]


def _encode_block(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock | FileBlock):
        kind = "image" if isinstance(block, ImageBlock) else "file"
        encoded: dict[str, Any] = {"type": kind}
        if block.url is not None:
            encoded["url"] = block.url
        else:
            encoded.update(base64=block.data, mime_type=block.media_type)
        if isinstance(block, FileBlock):
            encoded["extras"] = {"filename": block.name}
        return encoded
    if isinstance(block, AudioBlock):
        return {"type": "audio", "base64": block.data, "mime_type": block.media_type}
    if isinstance(block, ReasoningBlock):
        raise ConfigError("reasoning belongs in an assistant message")
    if isinstance(block, OpaqueBlock):
        raise ConfigError(f"an item only the {block.api} API reads has no LangChain form")
    raise ConfigError(f"a tool call ({block.name!r}) belongs in an assistant message")


def from_langchain(messages: Sequence[Any]) -> list[Message]:
    """LangChain messages as agentcore messages, one per message, in order.

    A ``ChatMessage`` is read by its role (``system``, ``user``/``human``,
    ``assistant``/``ai``). An ``AIMessage``'s calls come from its
    ``tool_calls``; reasoning blocks in its content are left out.

    :raises ImportError: langchain-core is not installed.
    :raises ConfigError: a message of another type (``FunctionMessage``, a
        non-message), a malformed content block, or a tool result whose
        call no earlier message makes; the error names the index.
    """
    lc = _langchain()
    decoded = []
    for index, message in enumerate(expect_items(messages, "the LangChain messages")):
        with at(index):
            decoded.append(_decode(lc, message))
    check_history(decoded)
    return decoded


_CHAT_ROLES: Mapping[str, str] = {
    "system": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
}


def _decode(lc: Any, message: Any) -> Message:
    if isinstance(message, lc.SystemMessage):
        return Message("system", _text(message.content, "a SystemMessage"))
    if isinstance(message, lc.HumanMessage):
        return Message("user", _blocks(message.content))
    if isinstance(message, lc.AIMessage):
        calls = []
        for position, call in enumerate(message.tool_calls):
            where = f"tool_calls[{position}]"
            calls.append(
                ToolUseBlock(
                    id=expect_text(call.get("id"), f"{where}.id"),
                    name=expect_text(call.get("name"), f"{where}.name"),
                    arguments=expect_mapping(call.get("args", {}), f"{where}.args"),
                )
            )
        return Message.assistant(_text(message.content, "an AIMessage", skip=_SKIPPED), calls)
    if isinstance(message, lc.ToolMessage):
        return Message(
            "tool",
            _blocks(message.content),
            tool_call_id=expect_text(message.tool_call_id, "tool_call_id"),
            is_error=message.status == "error",
        )
    if isinstance(message, lc.ChatMessage) and message.role in _CHAT_ROLES:
        role = _CHAT_ROLES[message.role]
        if role == "user":
            return Message("user", _blocks(message.content))
        return Message(role, _text(message.content, f"a {role} ChatMessage"))  # type: ignore[arg-type]
    raise ConfigError(
        f"{type(message).__name__} is not supported; expected SystemMessage, HumanMessage, "
        "AIMessage, ToolMessage or a ChatMessage with role system, user or assistant"
    )


def _text(content: Any, what: str, *, skip: tuple[str, ...] = ()) -> str:
    if isinstance(content, str):
        return content
    texts = []
    for position, block in enumerate(expect_items(content, f"the content of {what}")):
        if isinstance(block, str):
            texts.append(block)
            continue
        block = expect_mapping(block, f"content[{position}]")
        kind = block.get("type")
        if kind == "text":
            texts.append(expect_text(block.get("text"), f"content[{position}].text"))
        elif kind not in skip:
            raise ConfigError(f"content[{position}] of {what} is a {kind!r} block; it takes text")
    return "".join(texts)


def _blocks(content: Any) -> list[ContentBlock]:
    if isinstance(content, str):
        return [TextBlock(content)]
    out: list[ContentBlock] = []
    for position, block in enumerate(expect_items(content, "the content")):
        where = f"content[{position}]"
        if isinstance(block, str):
            out.append(TextBlock(block))
        else:
            out.append(_decode_block(expect_mapping(block, where), where))
    return out


def _decode_block(block: Mapping[str, Any], where: str) -> ContentBlock:
    kind = block.get("type")
    if kind in ("image_url", "input_audio") or (kind == "file" and "file" in block):
        return _openai.decode_part(block, where)
    if kind in ("image", "document") and "source" in block:
        return _anthropic.decode_block(block, where)
    if kind not in ("image", "audio", "file"):
        if kind == "text":
            return TextBlock(expect_text(block.get("text"), f"{where}.text"))
        raise ConfigError(
            f"{where} is a block of unknown type {kind!r}; expected text, image, audio or file"
        )
    url = block.get("url")
    data = block.get("base64", block.get("data"))  # "data": the older source_type form
    if block.get("source_type") == "url":
        url, data = block.get("url"), None
    media_type = block.get("mime_type")
    if url is None and data is None:
        raise ConfigError(f"{where} has neither base64 data nor a url (file_id is not supported)")
    if media_type is not None:
        media_type = expect_text(media_type, f"{where}.mime_type")
    if kind == "image":
        if url is not None:
            return ImageBlock(url=expect_text(url, f"{where}.url"))
        return ImageBlock(media_type=media_type or "image/png", data=expect_text(data, where))
    if kind == "audio":
        if data is None:
            raise ConfigError(f"{where}: audio by url is not supported; give it as base64")
        return AudioBlock(data=expect_text(data, where), media_type=media_type or "audio/wav")
    extras = block.get("extras") or block.get("metadata") or {}
    name = block.get("filename") or (extras.get("filename") if isinstance(extras, dict) else None)
    return FileBlock(
        name=expect_text(name, f"{where}.filename") if name is not None else "file",
        media_type=media_type or "application/octet-stream",
        data=None if url is not None else expect_text(data, where),
        url=None if url is None else expect_text(url, f"{where}.url"),
    )
