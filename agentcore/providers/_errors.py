"""Which LlmError an HTTP status or an error payload stands for, with the server's details."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from agentcore._bounded_json import loads_bounded
from agentcore.errors import (
    AuthenticationError,
    BadRequestError,
    ContextWindowExceededError,
    LlmError,
    LlmTimeoutError,
    MalformedResponseError,
    ModelNotFoundError,
    RateLimitError,
    ServiceUnavailableError,
)
from agentcore.providers._overflow import find_overflow
from agentcore.providers._text import valid_text

MAX_MESSAGE_CHARS = 500
"""Server text quoted in an error message is cut to this many characters."""

MAX_BODY_CHARS = 4000
"""An error's ``body`` holds at most this many characters of what the server sent."""

REQUEST_ID_HEADERS = ("x-request-id", "request-id")
"""Where OpenAI (``x-request-id``) and Anthropic (``request-id``) put the request's id."""

_HTML_START = re.compile(r"\s*(?:<!doctype\s+html|<html\b|<head\b|<body\b)", re.IGNORECASE)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


@frozen
class ServerError:
    """What a server said about a failure, read from its body and headers.

    ``message`` is the human-readable part (cut, key-free), ``code`` the
    provider's error code (``error.code`` when it is a string, else
    ``error.type``), ``body`` the raw body (cut, key-free), ``request_id``
    the server's id of the request and ``html_title`` the title of an HTML
    page sent where JSON was expected (``""`` for a page without one).
    """

    message: str
    code: str | None = None
    body: str | None = None
    request_id: str | None = None
    html_title: str | None = None
    error: Mapping[str, Any] | None = None


def is_html(text: str, content_type: str = "") -> bool:
    """Whether a body is an HTML page (by its content type or its first tag)."""
    return "text/html" in content_type.lower() or bool(_HTML_START.match(text))


def read_server_error(
    raw: str,
    *,
    redact: Callable[[str], str],
    headers: Mapping[str, str] | None = None,
    content_type: str = "",
) -> ServerError:
    """The :class:`ServerError` in an error body ``raw`` (already decoded) and its headers."""
    text = valid_text(redact(raw)).strip()
    request_id = None
    if headers is not None:
        for name in REQUEST_ID_HEADERS:
            if headers.get(name):
                request_id = valid_text(redact(headers[name]))
                break
    body = _cut(text, MAX_BODY_CHARS) if text else None
    if is_html(text, content_type):
        found = _HTML_TITLE.search(text)
        title = " ".join(found[1].split()) if found else ""
        return ServerError(
            message=_cut(title or "an HTML page", MAX_MESSAGE_CHARS),
            body=body,
            request_id=request_id,
            html_title=_cut(title, 200),
        )
    try:
        data = loads_bounded(text)
    except ValueError:  # Not JSON, or nested too deeply: the text is the message.
        data = None
    message = text
    code = None
    error: Mapping[str, Any] | None = None
    if isinstance(data, dict):
        found_message, code, error = _details(data)
        if found_message:
            message = found_message
        if request_id is None and isinstance(data.get("request_id"), str):
            request_id = data["request_id"]
    return ServerError(
        message=_cut(message, MAX_MESSAGE_CHARS) or "(empty body)",
        code=code,
        body=body,
        request_id=request_id,
        error=error,
    )


def server_message(body: str | bytes) -> str:
    """The human-readable part of an error body (JSON ``error.message`` and the like)."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    return read_server_error(text, redact=lambda value: value).message


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _details(data: dict[str, Any]) -> tuple[str | None, str | None, Mapping[str, Any] | None]:
    """The message, the code and the error object of a JSON error body."""
    error = data.get("error")
    if isinstance(error, dict):
        message = error.get("message")
        code = _code(error.get("code")) or _code(error.get("type"))
        return (message if isinstance(message, str) else None), code, error
    code = _code(data.get("code")) or _code(data.get("type"))
    if isinstance(error, str):
        return error, code, None
    for key in ("message", "detail"):
        if isinstance(data.get(key), str):
            return str(data[key]), code, None
    return None, code, None


def _code(value: Any) -> str | None:
    return value if isinstance(value, str) and value and value != "error" else None


ERROR_TYPE_STATUS: Mapping[str, int] = {
    "invalid_request_error": 400,
    "exceed_context_size_error": 400,
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
    label: str,
    status: int,
    details: ServerError | str,
    *,
    key_env: str,
    retry_after: float | None = None,
    base_url_hint: str = "",
) -> LlmError:
    """The LlmError for an HTTP ``status`` from the API ``label``.

    ``details`` is what the server said (a plain message is accepted too);
    the error carries ``status`` and the server's code, body and request id.
    ``base_url_hint`` ends the advice given when the URL looks wrong.
    """
    if isinstance(details, str):
        details = ServerError(message=details)
    message = details.message
    fields: dict[str, Any] = {
        "status_code": status,
        "code": details.code,
        "body": details.body,
        "request_id": details.request_id,
    }
    where = f"HTTP {status}"
    if details.html_title is not None:
        title = f" ({details.html_title!r})" if details.html_title else ""
        text = (
            f"the {label} answered with an HTML page{title}, not JSON ({where}): "
            f"is base_url right?{base_url_hint} A proxy or gateway error page looks like this too"
        )
        if status >= 500 or status in (408, 429):
            return ServiceUnavailableError(text, **fields)
        if status in (401, 403):
            return AuthenticationError(text, **fields)
        return (
            MalformedResponseError(text, **fields)
            if status < 400
            else BadRequestError(text, **fields)
        )
    if status in (401, 403):
        return AuthenticationError(
            f"the {label} refused the credentials ({where}): {message}; "
            f"check the API key (argument api_key= or {key_env})",
            **fields,
        )
    if status == 429:
        return RateLimitError(
            f"the {label} is rate limiting ({where}): {message}", retry_after=retry_after, **fields
        )
    if status >= 400:
        overflow = find_overflow(message, details.code, details.error)
        if overflow is not None:
            return ContextWindowExceededError(
                f"the {label} says the request does not fit the model's context window "
                f"({where}): {message}",
                prompt_tokens=overflow.prompt_tokens,
                limit_tokens=overflow.limit_tokens,
                requested_tokens=overflow.requested_tokens,
                **fields,
            )
    if status == 408:
        return LlmTimeoutError(f"the {label} timed out the request ({where}): {message}", **fields)
    if status == 404:
        if details.code in ("model_not_found", "not_found_error", "NotFoundError") or (
            "model" in message.lower()
        ):
            return ModelNotFoundError(
                f"the {label} does not know the model ({where}): {message}; check the model "
                "name (for a local server, the name it lists; Ollama: ollama pull MODEL)",
                **fields,
            )
        return BadRequestError(
            f"the {label} has no such endpoint ({where}): {message}; is base_url right?"
            f"{base_url_hint}",
            **fields,
        )
    if 400 <= status < 500:
        return BadRequestError(f"the {label} rejected the request ({where}): {message}", **fields)
    if status >= 500:
        return ServiceUnavailableError(f"the {label} failed ({where}): {message}", **fields)
    return MalformedResponseError(
        f"the {label} answered with unexpected HTTP status {status}: {message}", **fields
    )


def error_in_stream(
    label: str,
    error_type: str | None,
    status: int | None,
    details: ServerError | str,
    *,
    key_env: str,
) -> LlmError:
    """The LlmError for an error event inside a stream.

    ``status`` is the HTTP status the payload names, if any; otherwise the
    ``error_type`` (``"overloaded_error"``, ``"invalid_request_error"``...)
    decides, and an unknown type counts as a server failure.
    """
    if isinstance(details, str):
        details = ServerError(message=details, code=error_type)
    effective = status if status is not None else ERROR_TYPE_STATUS.get(error_type or "", 500)
    kind = f" ({error_type})" if error_type else ""
    details = ServerError(
        message=f"error event in the stream{kind}: {details.message}",
        code=details.code or error_type,
        body=details.body,
        request_id=details.request_id,
        error=details.error,
    )
    error = error_for_status(label, effective, details, key_env=key_env)
    error.status_code = status  # The HTTP status was 200: only what the payload names.
    return error
