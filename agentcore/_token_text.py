"""Text helpers of token counting: the estimate, slices of long texts, what blocks count as.

:func:`estimate_text_tokens` is re-exported by :mod:`agentcore.tokens`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from agentcore.messages import Message, TextBlock, ToolUseBlock

if TYPE_CHECKING:
    from agentcore.llm import ToolSpec

ESTIMATE_BYTES_PER_TOKEN = 4
"""UTF-8 bytes per token assumed by the estimate (``agentcore.tokens.ESTIMATE_BYTES_PER_TOKEN``)."""

SLICE_CHARS = 16_384  # inline work between two yields; slice size of long counts

_SEARCH_CHARS = 4_096  # how far a slice end may move to reach a safe boundary


def estimate_text_tokens(text: str) -> int:
    """Estimate the tokens in ``text``; used when no encoding can be loaded.

    Each CJK character (Han, kana, Hangul) counts one token; all other
    characters count one token per :data:`ESTIMATE_BYTES_PER_TOKEN` bytes of
    UTF-8, rounded up. Appending text never lowers the estimate.
    """
    wide = 0
    other_bytes = 0
    for char in text:
        if _is_cjk(char):
            wide += 1
        else:
            other_bytes += len(char.encode("utf-8", "surrogatepass"))
    return wide + math.ceil(other_bytes / ESTIMATE_BYTES_PER_TOKEN)


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x2E80 <= code <= 0x9FFF  # radicals, CJK punctuation, kana, Han
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
        or 0xF900 <= code <= 0xFAFF  # compatibility ideographs
        or 0xFF00 <= code <= 0xFFEF  # full-width forms
        or 0x20000 <= code <= 0x3FFFF  # Han extensions
    )


def slices(text: str) -> Iterable[str]:
    """``text`` in pieces of about :data:`SLICE_CHARS`, cut at pre-tokenizer boundaries.

    A piece ends after a newline that a non-space follows, else before a space
    that a letter follows and a non-space precedes: no token of cl100k or o200k
    spans those points. Without one nearby the cut is made anyway (an error
    of at most a token or two).
    """
    start = 0
    size = len(text)
    while size - start > SLICE_CHARS:
        end = boundary(text, start + SLICE_CHARS)
        yield text[start:end]
        start = end
    yield text[start:]


def boundary(text: str, near: int) -> int:
    """A safe place to cut ``text`` near ``near`` (see :func:`slices`), else ``near``."""
    stop = min(len(text) - 1, near + _SEARCH_CHARS)
    newline = text.find("\n", near, stop)
    while newline != -1:
        if not text[newline + 1].isspace():
            return newline + 1
        newline = text.find("\n", newline + 1, stop)
    space = text.find(" ", near, stop)
    while space != -1:
        if space > 0 and not text[space - 1].isspace() and text[space + 1].isalpha():
            return space
        space = text.find(" ", space + 1, stop)
    return near


def text_size(message: Message) -> int:
    """Characters of text a message holds (text blocks, tool arguments, tool results)."""
    size = 0
    for block in message.content:
        if isinstance(block, TextBlock):
            size += len(block.text)
        elif isinstance(block, ToolUseBlock):
            size += 64 + len(str(block.arguments))
    return size


def tool_json(tool: ToolSpec) -> str:
    """A tool definition as the OpenAI-compatible provider sends it, as JSON."""
    parameters = dict(tool.parameters) or {"type": "object", "properties": {}}
    definition = {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": parameters},
    }
    return json.dumps(definition, ensure_ascii=False, default=str)


def arguments_json(arguments: object) -> str:
    """Tool-call arguments as the OpenAI-compatible provider sends them."""
    try:
        return json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(arguments)


def base64_size(data: str) -> int:
    """Return the size in bytes of the data that base64 ``data`` encodes."""
    return len(data.rstrip("=")) * 3 // 4
