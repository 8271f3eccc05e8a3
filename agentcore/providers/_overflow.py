"""Recognising a server's "the request does not fit the context window" and its figures.

Each server words it its own way; the patterns below follow their sources:

- OpenAI: error code ``context_length_exceeded``; "This model's maximum
  context length is 128000 tokens. However, your messages resulted in 130000
  tokens..." or "...you requested N tokens (X in the messages, Y in the
  completion)..."; "Input tokens exceed the configured limit of L tokens.
  Your messages resulted in N tokens...".
- Anthropic: "prompt is too long: 250000 tokens > 200000 maximum" and
  "input length and `max_tokens` exceed context limit: X + Y > L, ...".
- vLLM: "This model's maximum context length is L tokens. However, you
  requested Y output tokens and your prompt contains [at least] X input
  tokens, for a total of [at least] N tokens...", "...However, your request
  has X input tokens...", "'max_tokens' or 'max_completion_tokens' is too
  large: Y. This model's maximum context length is L tokens and your
  request has X input tokens (Y > L - X)", and the older "...you requested
  N tokens (X in the messages, Y in the completion)...".
- llama.cpp's server: error type ``exceed_context_size_error`` with
  ``n_prompt_tokens`` and ``n_ctx`` fields; "request (X tokens) exceeds the
  available context size (L tokens), try increasing it".
- llama-cpp-python's server: code ``context_length_exceeded`` with the
  vLLM-style "...you requested N tokens (X in the messages, Y in the
  completion)..." (Y may be ``None``), or the raw "Requested tokens (X)
  exceed context window of L".
- Ollama: "the input length exceeds the context length" (no figures).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from agentcore.validators import is_int

OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
"""Error codes and types that mean the request does not fit the window."""

_TRIGGERS = re.compile(
    r"maximum context length is"
    r"|prompt is too long"
    r"|exceed context window of"
    r"|exceeds? (?:the )?available context size"
    r"|input length exceeds the context length"
    r"|exceed context limit"
    r"|larger than (?:the )?max context size"
    r"|input tokens exceed the configured limit",
    re.IGNORECASE,
)

_N = r"(\d[\d,]*)"


_FIGURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (_N + r" tokens? \(" + _N + r" in the messages, (\d+|None) in", ("requested", "prompt", "")),
    (
        r"requested "
        + _N
        + r" output tokens and your prompt contains (?:at least )?"
        + _N
        + r" input tokens?, for a total of (?:at least )?"
        + _N,
        ("", "prompt", "requested"),
    ),
    (r"is too large: " + _N + r"\..*?request has " + _N, ("output", "prompt")),
    (r"(?:request has|prompt contains(?: at least)?) " + _N, ("prompt",)),
    (r"messages resulted in " + _N, ("prompt",)),
    (r"you requested " + _N + r" tokens in the messages", ("prompt",)),
    (r"prompt is too long: " + _N + r" tokens > " + _N, ("prompt", "limit")),
    (r"exceed context limit: " + _N + r" \+ " + _N + r" > " + _N, ("prompt", "output", "limit")),
    (
        r"request \(" + _N + r" tokens\) exceeds (?:the available )?context size \(" + _N,
        ("prompt", "limit"),
    ),
    (r"Requested tokens \(" + _N + r"\) exceed context window of " + _N, ("prompt", "limit")),
)
"""Where each wording puts its figures: a pattern and the role of each of its groups."""


@frozen
class Overflow:
    """The figures a server gave with an overflow error, each None when it gave none."""

    prompt_tokens: int | None = None
    limit_tokens: int | None = None
    requested_tokens: int | None = None


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.replace(",", ""))
    except ValueError:
        return None


def _search(pattern: str, message: str) -> re.Match[str] | None:
    return re.search(pattern, message, re.IGNORECASE)


def find_overflow(
    message: str, code: str | None, error: Mapping[str, Any] | None = None
) -> Overflow | None:
    """The figures of an overflow error, or None when the error is not one.

    ``message`` is the server's message, ``code`` its error code or type and
    ``error`` the error object of the body (llama.cpp puts the figures there).
    """
    if (code or "").lower() not in OVERFLOW_CODES and not _TRIGGERS.search(message):
        return None
    prompt = limit = requested = None
    if error is not None:
        prompt = _field_int(error.get("n_prompt_tokens"))
        limit = _field_int(error.get("n_ctx"))
    if found := _search(r"maximum context length is " + _N, message):
        limit = _int(found[1])
    for pattern, roles in _FIGURES:
        if found := _search(pattern, message):
            figures = dict(zip(roles, (_int(group) for group in found.groups()), strict=True))
            prompt = figures.get("prompt", prompt)
            limit = figures.get("limit", limit)
            requested = figures.get("requested")
            if "output" in roles:
                requested = _sum(prompt, figures["output"])
            if found.group(found.lastindex or 0) == "None":  # llama-cpp-python, no max_tokens.
                requested = prompt
            break
    if found := _search(r"configured limit of " + _N + r" tokens", message):
        limit = _int(found[1])
    return Overflow(prompt_tokens=prompt, limit_tokens=limit, requested_tokens=requested)


def _field_int(value: Any) -> int | None:
    if not is_int(value) or value < 0:
        return None
    return value


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b
