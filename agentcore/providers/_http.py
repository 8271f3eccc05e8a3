"""The HTTP side shared by the providers: requests, retries and error mapping.

:class:`ApiClient` posts JSON to one API with one ``httpx.AsyncClient``,
retries what is worth retrying (HTTP 429, 408, 5xx and connection errors)
with :class:`~agentcore.providers._retry.RetryPolicy`, and turns every
failure into an :class:`~agentcore.errors.LlmError`. The API key lives in a
:class:`Secret` and is scrubbed from every message this module builds.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import ssl
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping
from contextlib import aclosing
from typing import Any, NoReturn, Protocol, TypeVar, cast

import httpx
from attrs import frozen

from agentcore.errors import (
    BadRequestError,
    LlmError,
    LlmTimeoutError,
    MalformedResponseError,
    RateLimitError,
    ServiceUnavailableError,
)
from agentcore.providers._errors import error_for_status, error_in_stream, server_message
from agentcore.providers._retry import RetryPolicy, parse_retry_after
from agentcore.providers._sse import SseEvent, SseParser

logger = logging.getLogger(__name__)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""Timeouts of a provider's own client: 10 s to connect, 600 s between bytes."""

_sleep = asyncio.sleep  # Tests replace this to observe the backoff delays.


@functools.cache
def _default_verify() -> ssl.SSLContext | bool:
    """One verifying SSL context shared by the providers' own clients (building one is slow).

    Falls back to ``True`` (a new context per client) on an httpx without
    ``create_ssl_context``.
    """
    factory = getattr(httpx, "create_ssl_context", None)
    if factory is None:
        return True
    context: ssl.SSLContext = factory()
    return context


class Secret:
    """A string that never shows itself in a repr or str."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret value itself: only for the header that carries it."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


class StreamDecoder(Protocol[T_co]):
    """Turns the events of one streamed response into stream events."""

    @property
    def done(self) -> bool:
        """Whether the terminal event has arrived."""
        ...

    def feed(self, event: SseEvent) -> Iterable[T_co]:
        """Take one server-sent event and return what it completes."""
        ...

    def end_of_stream(self) -> None:
        """The body ended without the terminal event: raise the right LlmError."""
        ...


@frozen
class Failure:
    """A failed attempt: the error to raise and whether a retry may help."""

    error: LlmError
    retryable: bool
    reason: str
    retry_after: float | None = None
    cause: BaseException | None = None


class ApiClient:
    """Posts JSON to one API and gets back JSON or a stream of decoded events.

    ``label`` names the API in messages (for example ``"OpenAI API at
    https://api.openai.com/v1"``) and ``key_env`` the variable that holds
    its key. ``auth_headers`` is called for each request, so the key is kept
    only in ``secret`` and in the request being sent. With ``http_client``
    given, that client is used and left open by :meth:`aclose`; otherwise
    the client is made here and closed there.
    """

    def __init__(
        self,
        *,
        label: str,
        base_url: str,
        headers: Mapping[str, str],
        auth_headers: Callable[[], Mapping[str, str]],
        secret: Secret | None,
        key_env: str,
        retry: RetryPolicy,
        timeout: httpx.Timeout | None,
        http_client: httpx.AsyncClient | None,
    ) -> None:
        self.label = label
        self.base_url = base_url.rstrip("/")
        self._headers = dict(headers)
        self._auth_headers = auth_headers
        self._secret = secret
        self._key_env = key_env
        self.retry = retry
        self._timeout = timeout
        self._owns_client = http_client is None
        self._client = (
            http_client
            if http_client is not None
            else httpx.AsyncClient(
                timeout=timeout if timeout is not None else DEFAULT_TIMEOUT,
                verify=_default_verify(),
            )
        )
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` has run."""
        return self._closed

    async def aclose(self) -> None:
        """Close the HTTP client if this object made it."""
        self._closed = True
        if self._owns_client:
            await self._client.aclose()

    def redact(self, text: str) -> str:
        """``text`` with every occurrence of the API key replaced by ``***``."""
        if self._secret is not None and self._secret.reveal():
            return text.replace(self._secret.reveal(), "***")
        return text

    def stream_error(self, error_type: str | None, status: int | None, message: str) -> LlmError:
        """The LlmError for an error event in a stream (see :func:`error_in_stream`)."""
        return error_in_stream(
            self.label, error_type, status, self.redact(message), key_env=self._key_env
        )

    def stream_cut(self, missing: str) -> ServiceUnavailableError:
        """The error for a stream whose body ended before ``missing`` arrived."""
        return ServiceUnavailableError(
            f"the stream from the {self.label} ended before {missing}; "
            "the connection was probably dropped"
        )

    async def post_json(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST ``body`` to ``path`` and return the decoded JSON reply, retrying as allowed."""
        request = self._build_request(path, body, stream=False)
        retry = 0
        while True:
            failure: Failure
            try:
                response = await self._client.send(request)
            except httpx.HTTPError as exc:
                failure = self._transport_failure(exc)
            else:
                if response.is_success:
                    return self._decode_json(response.content)
                failure = self._status_failure(response)
            await self._wait_or_raise(failure, retry)
            retry += 1

    async def stream(
        self, path: str, body: Mapping[str, Any], new_decoder: Callable[[], StreamDecoder[T]]
    ) -> AsyncGenerator[T, None]:
        """POST ``body`` to ``path`` and yield what a fresh decoder makes of the event stream.

        A failed attempt is retried as allowed only while nothing has been
        yielded yet; once an event has been yielded, a failure is raised.
        """
        request = self._build_request(path, body, stream=True)
        retry = 0
        while True:
            yielded = False
            failure: Failure
            try:
                async with aclosing(self._stream_once(request, new_decoder())) as items:
                    async for item in items:
                        yielded = True
                        yield item
                return
            except _FailedAttempt as exc:
                failure = exc.failure
            except httpx.HTTPError as exc:
                failure = self._transport_failure(exc)
            except LlmError as exc:
                failure = Failure(
                    exc,
                    retryable=isinstance(exc, (RateLimitError, ServiceUnavailableError)),
                    reason=type(exc).__name__,
                    retry_after=getattr(exc, "retry_after", None),
                )
            if yielded:
                _raise(failure)
            await self._wait_or_raise(failure, retry)
            retry += 1

    async def _stream_once(
        self, request: httpx.Request, decoder: StreamDecoder[T]
    ) -> AsyncGenerator[T, None]:
        response = await self._client.send(request, stream=True)
        try:
            if not response.is_success:
                await response.aread()
                raise _FailedAttempt(self._status_failure(response))
            self._check_event_stream(response)
            parser = SseParser()
            # httpx types aiter_bytes as an iterator; it is an async generator.
            chunks = cast(AsyncGenerator[bytes, None], response.aiter_bytes())
            async with aclosing(chunks) as body:
                async for chunk in body:
                    for item in _decode_all(decoder, parser.feed(chunk)):
                        yield item
                    if decoder.done:
                        return
            for item in _decode_all(decoder, parser.close()):
                yield item
            if not decoder.done:
                decoder.end_of_stream()
        finally:
            await response.aclose()

    def _build_request(self, path: str, body: Mapping[str, Any], *, stream: bool) -> httpx.Request:
        if self._closed:
            raise LlmError(f"the provider for the {self.label} is closed; create a new one")
        try:
            content = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise BadRequestError(f"the request cannot be encoded as JSON: {exc}") from None
        headers = {**self._headers, **self._auth_headers(), "content-type": "application/json"}
        if stream:
            headers["accept"] = "text/event-stream"
        return self._client.build_request(
            "POST",
            self.base_url + path,
            content=content,
            headers=headers,
            timeout=self._timeout if self._timeout is not None else httpx.USE_CLIENT_DEFAULT,
        )

    def _decode_json(self, content: bytes) -> Any:
        try:
            return json.loads(content)
        except ValueError as exc:
            snippet = self.redact(content.decode("utf-8", errors="replace"))[:200]
            raise MalformedResponseError(
                f"the {self.label} answered with invalid JSON ({exc}): {snippet!r}"
            ) from None

    def _check_event_stream(self, response: httpx.Response) -> None:
        content_type = response.headers.get("content-type", "")
        if "application/json" in content_type:
            raise MalformedResponseError(
                f"the {self.label} answered a streaming request with {content_type} "
                "instead of an event stream"
            )

    def _status_failure(self, response: httpx.Response) -> Failure:
        status = response.status_code
        retry_after = parse_retry_after(response.headers)
        error = error_for_status(
            self.label,
            status,
            server_message(self.redact(response.content.decode("utf-8", errors="replace"))),
            key_env=self._key_env,
            retry_after=retry_after,
        )
        return Failure(
            error,
            retryable=status in (408, 429) or status >= 500,
            reason=f"HTTP {status}",
            retry_after=retry_after,
        )

    def _transport_failure(self, exc: httpx.HTTPError) -> Failure:
        detail = self.redact(str(exc) or type(exc).__name__)
        reason = type(exc).__name__
        if isinstance(exc, httpx.ConnectTimeout):
            error: LlmError = LlmTimeoutError(
                f"could not connect to the {self.label} in time: {detail}"
            )
            return Failure(error, retryable=True, reason=reason, cause=exc)
        if isinstance(exc, httpx.TimeoutException):
            error = LlmTimeoutError(f"the {self.label} did not answer in time ({reason})")
            return Failure(error, retryable=False, reason=reason, cause=exc)
        if isinstance(exc, httpx.DecodingError):
            error = MalformedResponseError(
                f"the {self.label} sent a body that cannot be decoded: {detail}"
            )
            return Failure(error, retryable=False, reason=reason, cause=exc)
        if isinstance(exc, httpx.TransportError):
            error = ServiceUnavailableError(
                f"the connection to the {self.label} failed ({reason}): {detail}"
            )
            return Failure(error, retryable=True, reason=reason, cause=exc)
        error = ServiceUnavailableError(f"the call to the {self.label} failed ({reason}): {detail}")
        return Failure(error, retryable=False, reason=reason, cause=exc)

    async def _wait_or_raise(self, failure: Failure, retry: int) -> None:
        delay = self.retry.delay(retry, failure.retry_after) if failure.retryable else None
        if delay is None:
            _raise(failure)
        logger.warning(
            "%s: %s on attempt %d of %d; retrying in %.2f s",
            self.label,
            failure.reason,
            retry + 1,
            self.retry.max_retries + 1,
            delay,
        )
        await _sleep(delay)


class _FailedAttempt(Exception):
    """Carries the failure of one streaming attempt to the retry loop."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


def _decode_all(decoder: StreamDecoder[T], events: Iterable[SseEvent]) -> Iterator[T]:
    """What ``decoder`` makes of ``events``, up to and including its terminal event."""
    for event in events:
        try:
            items = decoder.feed(event)
        except ValueError as exc:  # A field the core's classes reject, such as an empty id.
            raise MalformedResponseError(
                f"a streamed {event.event} event is invalid: {exc}"
            ) from None
        yield from items
        if decoder.done:
            return


def _raise(failure: Failure) -> NoReturn:
    """Raise the failure's error, chained to the httpx exception behind it."""
    if failure.cause is None:
        raise failure.error
    raise failure.error from failure.cause
