"""The key-free errors of one API: what a status, an error body or an unusable reply stands for.

:class:`ApiErrors` holds what every error of one API needs (its label, the
variable of its key, the hint about its base URL and the secrets to keep out
of messages) and turns a response, and the bytes read of it, into an
:class:`~agentcore.errors.LlmError`. Every text it puts in an error, taken from
the server or from httpx, has the key (and any password in the base URL, and
the values of secret headers) replaced by ``***``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from agentcore._bounded_json import NestedTooDeeplyError, loads_bounded
from agentcore.errors import (
    LlmError,
    MalformedResponseError,
    ResponseTooLargeError,
    ServiceUnavailableError,
)
from agentcore.providers._errors import (
    ServerError,
    error_for_status,
    error_in_stream,
    read_server_error,
)
from agentcore.providers._secret import Secret, mask_secrets
from agentcore.providers._text import valid_json


class ApiErrors:
    """Makes the errors of one API, with no secret in any of their texts.

    ``label`` names the API in messages (never with a password), ``key_env``
    the variable that holds its key, and ``base_url_hint`` is added to the
    message of a status that suggests a wrong base URL. ``secret`` is the API
    key; ``hidden`` lists more texts to keep out of every message (the base
    URL's password, in plain and encoded forms, and the values of secret headers).
    """

    def __init__(
        self,
        *,
        label: str,
        secret: Secret | None,
        key_env: str,
        hidden: Iterable[str] = (),
        base_url_hint: str = "",
    ) -> None:
        self.label = label
        self._secret = secret
        self._hidden = tuple(
            Secret(text)
            for text in sorted({text for text in hidden if text}, key=len, reverse=True)
        )
        self._key_env = key_env
        self._base_url_hint = base_url_hint

    def redact(self, text: str) -> str:
        """``text`` with the API key and every hidden text replaced by ``***``.

        A secret shorter than
        :data:`~agentcore.providers._secret.MIN_MASKED_ANYWHERE_CHARS` is
        replaced only where it stands as a whole token (see
        :func:`~agentcore.providers._secret.mask_secrets`).
        """
        secrets = [secret.reveal() for secret in self._hidden]
        if self._secret is not None:
            secrets.append(self._secret.reveal())
        return mask_secrets(text, secrets)

    def scrub(self, error: LlmError) -> LlmError:
        """``error`` with every secret replaced by ``***`` in its message and every text it holds.

        See :meth:`ApiClient.scrub <agentcore.providers._http.ApiClient.scrub>`.
        """
        error.args = tuple(self.redact(arg) if isinstance(arg, str) else arg for arg in error.args)
        for name, value in vars(error).items():
            if isinstance(value, str):
                setattr(error, name, self.redact(value))
        return error

    def in_stream(
        self,
        error_type: str | None,
        status: int | None,
        message: str,
        *,
        code: str | None = None,
        body: str | None = None,
        error: Mapping[str, Any] | None = None,
    ) -> LlmError:
        """The LlmError for an error event in a stream (see :func:`error_in_stream`).

        ``code`` is the provider's error code (``error_type`` when None),
        ``body`` the event's data and ``error`` its error object.
        """
        details = ServerError(
            message=read_server_error(message, redact=self.redact).message,
            code=code or error_type,
            body=None if body is None else read_server_error(body, redact=self.redact).body,
            error=error,
        )
        return error_in_stream(self.label, error_type, status, details, key_env=self._key_env)

    def stream_cut(self, missing: str) -> ServiceUnavailableError:
        """The error for a stream whose body ended before ``missing`` arrived."""
        return ServiceUnavailableError(
            f"the stream from the {self.label} ended before {missing}; "
            "the connection was probably dropped"
        )

    def request_id(self, response: httpx.Response) -> str | None:
        """The id the server gave the request in the response's headers, if any."""
        return read_server_error("", redact=self.redact, headers=response.headers).request_id

    def too_large(
        self, response: httpx.Response, limit: int, declared: int | None = None
    ) -> LlmError:
        """The error for a reply over the cap of ``limit`` bytes (``declared``: its stated size)."""
        size = f"{declared} bytes" if declared is not None else f"more than {limit} bytes"
        return ResponseTooLargeError(
            f"the reply from the {self.label} is too large: {size} against a cap of "
            f"{limit} bytes (max_reply_bytes); the rest was not read",
            limit_bytes=limit,
            status_code=response.status_code,
            request_id=self.request_id(response),
        )

    def decode_json(self, content: bytes, response: httpx.Response) -> Any:
        """The JSON of a successful reply's body, or the error its body stands for."""
        try:
            return valid_json(loads_bounded(content))
        except NestedTooDeeplyError as exc:
            problem = f"the {self.label} answered with JSON {exc}"
        except ValueError as exc:
            problem = f"the {self.label} answered with invalid JSON ({exc})"
        details = self.server_error(response, content)
        snippet = (details.body or "")[:200]
        raise self.body_error(response, details, f"{problem}: {snippet!r}")

    def server_error(
        self, response: httpx.Response, raw: bytes, *, typed: bool = True
    ) -> ServerError:
        """What the server said in ``raw`` and its headers, key-free.

        With ``typed`` the body's content type decides whether it is an HTML page.
        """
        content_type = response.headers.get("content-type", "") if typed else ""
        return read_server_error(
            raw.decode("utf-8", errors="replace"),
            redact=self.redact,
            headers=response.headers,
            content_type=content_type,
        )

    def status_error(
        self, response: httpx.Response, details: ServerError, *, retry_after: float | None = None
    ) -> LlmError:
        """The LlmError the response's status and ``details`` stand for."""
        return error_for_status(
            self.label,
            response.status_code,
            details,
            key_env=self._key_env,
            retry_after=retry_after,
            base_url_hint=self._base_url_hint,
        )

    def malformed(
        self, response: httpx.Response, message: str, details: ServerError
    ) -> MalformedResponseError:
        """A MalformedResponseError carrying the response's status and ``details``."""
        return MalformedResponseError(
            message,
            status_code=response.status_code,
            code=details.code,
            body=details.body,
            request_id=details.request_id,
        )

    def not_an_event_stream(self, response: httpx.Response, head: bytes) -> LlmError:
        """The error for a streamed reply whose body held no event at all."""
        details = self.server_error(response, head)
        return self.body_error(
            response,
            details,
            f"the {self.label} answered a streaming request with a body that holds no "
            f"server-sent event: {details.message!r}",
        )

    def body_error(self, response: httpx.Response, details: ServerError, problem: str) -> LlmError:
        """The error for a success status whose body is not what was asked for.

        An HTML page (a proxy's or a login page) stands for the error of its
        status; any other body is a :class:`MalformedResponseError` saying ``problem``.
        """
        if details.html_title is not None:
            return self.status_error(response, details)
        return self.malformed(response, problem, details)
