"""Histories to and from OpenAI Chat Completions message dicts.

:func:`from_openai` reads the ``messages`` list of a Chat Completions
request: ``system`` (and ``developer``), ``user``, ``assistant`` (with
``tool_calls``) and ``tool`` messages, content as a string or a list of
parts (``text``, ``image_url``, ``input_audio``, ``file`` with inline
``file_data``). :func:`to_openai` writes that list with the encoder the
OpenAI provider sends requests with, so what it gives is what agentcore
would send.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentcore.errors import ConfigError
from agentcore.formats._check import (
    at,
    check_history,
    expect_items,
    expect_mapping,
    expect_text,
    split_data_url,
)
from agentcore.messages import (
    AudioBlock,
    ContentBlock,
    FileBlock,
    ImageBlock,
    Message,
    TextBlock,
)
from agentcore.providers._openai_codec import TOOL_ERROR_PREFIX, decode_tool_calls, encode_message

__all__ = ["from_openai", "to_openai"]

_ROLES = ("system", "developer", "user", "assistant", "tool")

_AUDIO_TYPES: Mapping[str, str] = {"wav": "audio/wav", "mp3": "audio/mpeg"}


def to_openai(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """``messages`` as Chat Completions message dicts, one per message, in order.

    A failed tool result (``is_error``) has its content prefixed with
    ``"Error: "``, as the API has no field for it. A history that
    :func:`~agentcore.formats.check_history` refuses, or a block the API
    cannot carry where it stands (an image in a system message, a file by
    URL), raises :class:`~agentcore.errors.ConfigError` naming its index.
    """
    check_history(messages)
    encoded = []
    for index, message in enumerate(messages):
        with at(index):
            encoded.append(encode_message(message))
    return encoded


def from_openai(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Chat Completions message dicts as agentcore messages, one per dict, in order.

    ``developer`` messages become system messages; an assistant message's
    ``refusal`` is kept as its text when it has no other; a tool result
    whose content starts with ``"Error: "`` is read as failed
    (``is_error``, the prefix taken off), as :func:`to_openai` writes it.
    Keys agentcore has no place for (``name``, ``audio``) are left out.

    :raises ConfigError: an unknown role, a malformed message or part, a
        part agentcore cannot hold (a ``file_id``), or a tool result whose
        call no earlier message makes; the error names the index.
    """
    items = expect_items(messages, "the OpenAI messages")
    decoded = []
    for index, raw in enumerate(items):
        with at(index):
            decoded.append(_decode_message(expect_mapping(raw, "a message")))
    check_history(decoded)
    return decoded


def _decode_message(raw: Mapping[str, Any]) -> Message:
    role = raw.get("role")
    if role in ("system", "developer"):
        return Message("system", _text_of(raw.get("content"), f"a {role} message"))
    if role == "user":
        return Message("user", _user_content(raw.get("content")))
    if role == "assistant":
        text = _text_of(raw.get("content"), "an assistant message", refusals=True)
        if not text and raw.get("refusal") is not None:
            text = expect_text(raw.get("refusal"), "refusal")
        calls = decode_tool_calls(raw.get("tool_calls"))
        return Message.assistant(text, calls)
    if role == "tool":
        call_id = expect_text(raw.get("tool_call_id"), "a tool message's tool_call_id")
        text = _text_of(raw.get("content"), "a tool message")
        failed = text.startswith(TOOL_ERROR_PREFIX)
        if failed:
            text = text[len(TOOL_ERROR_PREFIX) :]
        return Message.tool_result(call_id, text, is_error=failed)
    if role == "function":
        raise ConfigError(
            "role 'function' (the deprecated function-call API) is not supported; "
            "convert it to an assistant tool_calls entry and a 'tool' message"
        )
    raise ConfigError(f"unknown role {role!r}; expected one of {', '.join(_ROLES)}")


def _text_of(content: Any, what: str, *, refusals: bool = False) -> str:
    """The text of a content that may hold text parts only (null: no text)."""
    if content is None or isinstance(content, str):
        return content or ""
    texts = []
    for position, part in enumerate(expect_items(content, f"the content of {what}")):
        part = expect_mapping(part, f"content[{position}]")
        kind = part.get("type")
        if kind == "text":
            texts.append(expect_text(part.get("text"), f"content[{position}].text"))
        elif kind == "refusal" and refusals:
            texts.append(expect_text(part.get("refusal"), f"content[{position}].refusal"))
        else:
            raise ConfigError(f"content[{position}] of {what} is a {kind!r} part; it takes text")
    return "".join(texts)


def _user_content(content: Any) -> list[ContentBlock]:
    if content is None or isinstance(content, str):
        return [TextBlock(content or "")]
    parts = expect_items(content, "the content of a user message")
    return [
        decode_part(expect_mapping(part, f"content[{position}]"), f"content[{position}]")
        for position, part in enumerate(parts)
    ]


def decode_part(part: Mapping[str, Any], where: str) -> ContentBlock:
    """One content part of a user message (``text``, ``image_url``, ``input_audio``, ``file``)."""
    kind = part.get("type")
    if kind == "text":
        return TextBlock(expect_text(part.get("text"), f"{where}.text"))
    if kind == "image_url":
        image = part.get("image_url")
        url = image if isinstance(image, str) else expect_mapping(image, where).get("url")
        url = expect_text(url, f"{where}.image_url.url")
        inline = split_data_url(url)
        if inline is not None:
            return ImageBlock(media_type=inline[0], data=inline[1])
        return ImageBlock(url=url)
    if kind == "input_audio":
        audio = expect_mapping(part.get("input_audio"), f"{where}.input_audio")
        audio_format = expect_text(audio.get("format"), f"{where}.input_audio.format")
        return AudioBlock(
            data=expect_text(audio.get("data"), f"{where}.input_audio.data"),
            media_type=_AUDIO_TYPES.get(audio_format, f"audio/{audio_format}"),
        )
    if kind == "file":
        file = expect_mapping(part.get("file"), f"{where}.file")
        if "file_data" not in file:
            raise ConfigError(
                f"{where} refers to an uploaded file ({file.get('file_id')!r}) whose content "
                "is not in the message; give it inline as file_data"
            )
        data = expect_text(file.get("file_data"), f"{where}.file.file_data")
        inline = split_data_url(data)
        if inline is None:
            raise ConfigError(f"{where}.file.file_data should be a data: URL of base64 data")
        name = file.get("filename")
        return FileBlock(
            name=expect_text(name, f"{where}.file.filename") if name is not None else "file",
            media_type=inline[0],
            data=inline[1],
        )
    raise ConfigError(
        f"{where} is a part of unknown type {kind!r}; expected text, image_url, input_audio or file"
    )
