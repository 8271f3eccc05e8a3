"""Which LlmError an HTTP status or an error payload stands for, and the server's message."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentcore.errors import (
    AuthenticationError,
    BadRequestError,
    LlmError,
    LlmTimeoutError,
    MalformedResponseError,
    RateLimitError,
    ServiceUnavailableError,
)

MAX_MESSAGE_CHARS = 500
"""Server text quoted in an error message is cut to this many characters."""


def server_message(body: str | bytes) -> str:
    """The human-readable part of an error body (JSON ``error.message`` and the like)."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    text = text.strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    found = _message_in(data)
    if found:
        text = found
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS] + "…"
    return text or "(empty body)"


def _message_in(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    for key in ("message", "detail"):
        if isinstance(data.get(key), str):
            return str(data[key])
    return None


ERROR_TYPE_STATUS: Mapping[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "rate_limit_exceeded": 429,
    "insufficient_quota": 429,
    "api_error": 500,
    "server_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
"""The HTTP status that goes with an error type named in an error payload."""


def error_for_status(
    label: str, status: int, message: str, *, key_env: str, retry_after: float | None = None
) -> LlmError:
    """The LlmError for an HTTP ``status`` from the API ``label``, quoting ``message``."""
    if status in (401, 403):
        return AuthenticationError(
            f"the {label} refused the credentials (HTTP {status}): {message}; "
            f"check the API key (argument api_key= or {key_env})"
        )
    if status == 429:
        return RateLimitError(
            f"the {label} is rate limiting (HTTP 429): {message}", retry_after=retry_after
        )
    if status == 408:
        return LlmTimeoutError(f"the {label} timed out the request (HTTP 408): {message}")
    if 400 <= status < 500:
        return BadRequestError(f"the {label} rejected the request (HTTP {status}): {message}")
    if status >= 500:
        return ServiceUnavailableError(f"the {label} failed (HTTP {status}): {message}")
    return MalformedResponseError(
        f"the {label} answered with unexpected HTTP status {status}: {message}"
    )


def error_in_stream(
    label: str, error_type: str | None, status: int | None, message: str, *, key_env: str
) -> LlmError:
    """The LlmError for an error event inside a stream.

    ``status`` is the HTTP status the payload names, if any; otherwise the
    ``error_type`` (``"overloaded_error"``, ``"invalid_request_error"``...)
    decides, and an unknown type counts as a server failure.
    """
    if status is None:
        status = ERROR_TYPE_STATUS.get(error_type or "", 500)
    kind = f" ({error_type})" if error_type else ""
    return error_for_status(
        label, status, f"error event in the stream{kind}: {message}", key_env=key_env
    )
