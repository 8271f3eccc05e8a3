"""The HTTP side shared by the providers: requests, limits and retries.

:class:`ApiClient` posts JSON to one API with one ``httpx.AsyncClient``,
retries what is worth retrying (HTTP 429, 408, 5xx and connection errors)
with :class:`~agentcore.providers._retry.RetryPolicy`, bounds each call (an
idle timeout that only real events reset, an optional deadline for the whole
call, a cap on the bytes of one reply) and turns every failure into an
:class:`~agentcore.errors.LlmError` (made by
:class:`~agentcore.providers._api_errors.ApiErrors`).

No error it raises holds an httpx object or a secret: every error leaves
with its ``__cause__`` and ``__context__`` cleared and a key-free account of
the cause in its message, and every text taken from the server or from
httpx has the key (and any password in the base URL, and the values of
secret headers) replaced by ``***``; :meth:`ApiClient.scrub` is the last
pass on every error a provider raises.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import ssl
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping
from contextlib import aclosing
from typing import Any, TypeVar

import httpx

from agentcore.errors import BadRequestError, LlmError, ServiceUnavailableError
from agentcore.providers._api_errors import ApiErrors
from agentcore.providers._clock import Clock, Limits, chunks
from agentcore.providers._errors import ServerError, is_html
from agentcore.providers._failures import (
    FailedAttempt,
    Failure,
    failure_of,
    raise_failure,
    retryable,
    transport_failure,
)
from agentcore.providers._retry import RetryPolicy, parse_retry_after
from agentcore.providers._secret import Secret
from agentcore.providers._sse import SseEvent, SseParser
from agentcore.providers._stream_decoder import StreamDecoder, decode_all, not_sse

logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""Timeouts of a provider's own client: 10 s to connect, 600 s between bytes."""

ERROR_BODY_BYTES = 64 * 1024
"""The most bytes read of an error body; the rest is left unread."""

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


class ApiClient:
    """Posts JSON to one API and gets back JSON or a stream of decoded events.

    ``label`` names the API in messages (for example ``"OpenAI API at
    https://api.openai.com/v1"``, never with a password) and ``key_env`` the
    variable that holds its key. ``auth_headers`` is called for each
    request, so the key is kept only in ``secret`` and in the request being
    sent. ``auth`` carries the user-info of the base URL as HTTP Basic
    credentials; ``hidden`` lists more texts to keep out of every message
    (that password, in plain and encoded forms, and the values of secret
    headers). With ``http_client`` given,
    that client is used and left open by :meth:`aclose`; otherwise the
    client is made here and closed there.
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
        limits: Limits | None = None,
        auth: httpx.Auth | None = None,
        hidden: Iterable[str] = (),
        base_url_hint: str = "",
    ) -> None:
        self.label = label
        self.base_url = base_url.rstrip("/")
        self._headers = dict(headers)
        self._auth_headers = auth_headers
        self._errors = ApiErrors(
            label=label,
            secret=secret,
            key_env=key_env,
            hidden=hidden,
            base_url_hint=base_url_hint,
        )
        self._auth = auth
        self.retry = retry
        self.limits = limits if limits is not None else Limits()
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
        """``text`` with the API key and every hidden text replaced by ``***``.

        A secret shorter than
        :data:`~agentcore.providers._secret.MIN_MASKED_ANYWHERE_CHARS` is
        replaced only where it stands as a whole token (see
        :func:`~agentcore.providers._secret.mask_secrets`).
        """
        return self._errors.redact(text)

    def scrub(self, error: LlmError) -> LlmError:
        """``error`` with every secret replaced by ``***`` in its message and every text it holds.

        The last pass before an error leaves a provider: whatever built the
        error (a codec quoting tool arguments, a server's echoed body), no
        text of it holds the key, a secret header or the base URL's password.
        """
        return self._errors.scrub(error)

    def stream_error(
        self,
        error_type: str | None,
        status: int | None,
        message: str,
        *,
        code: str | None = None,
        body: str | None = None,
        error: Mapping[str, Any] | None = None,
    ) -> LlmError:
        """The LlmError for an error event in a stream (see :meth:`ApiErrors.in_stream`).

        ``code`` is the provider's error code (``error_type`` when None),
        ``body`` the event's data and ``error`` its error object.
        """
        return self._errors.in_stream(
            error_type, status, message, code=code, body=body, error=error
        )

    def stream_cut(self, missing: str) -> ServiceUnavailableError:
        """The error for a stream whose body ended before ``missing`` arrived."""
        return self._errors.stream_cut(missing)

    async def post_json(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST ``body`` to ``path`` and return the decoded JSON reply, retrying as allowed.

        Every string of the reply is made valid text, and a reply nested
        deeper than :data:`~agentcore._bounded_json.MAX_JSON_DEPTH` is a
        :class:`MalformedResponseError` (see :func:`~agentcore._bounded_json.loads_bounded`).
        """
        request = self._build_request(path, body, stream=False)
        clock = Clock(self.label, self.limits)
        retry = 0
        while True:
            failure: Failure
            try:
                return await self._complete_once(request, clock)
            except (FailedAttempt, httpx.HTTPError, LlmError) as exc:
                failure = self._failure(exc)
            await self._wait_or_raise(failure, retry, clock)
            retry += 1

    async def stream(
        self, path: str, body: Mapping[str, Any], new_decoder: Callable[[], StreamDecoder[T]]
    ) -> AsyncGenerator[T, None]:
        """POST ``body`` to ``path`` and yield what a fresh decoder makes of the event stream.

        The idle timeout is reset by an event only when the decoder counts it
        as content (:attr:`StreamDecoder.progress`), and after each item the
        consumer takes. A failed attempt is retried as allowed only while nothing has been
        yielded yet; once an event has been yielded, a failure is raised.
        """
        request = self._build_request(path, body, stream=True)
        clock = Clock(self.label, self.limits)
        clock.streaming = True
        retry = 0
        while True:
            yielded = False
            failure: Failure
            try:
                async with aclosing(self._stream_once(request, new_decoder(), clock)) as items:
                    async for item in items:
                        yielded = True
                        yield item
                        clock.progress()  # The consumer's own time is not the server's.
                return
            except (FailedAttempt, httpx.HTTPError, LlmError) as exc:
                failure = self._failure(exc)
            if yielded:
                raise_failure(failure)
            await self._wait_or_raise(failure, retry, clock)
            retry += 1

    def _failure(self, exc: FailedAttempt | httpx.HTTPError | LlmError) -> Failure:
        """What a failed attempt was: its error, whether to retry, the reason to log."""
        if isinstance(exc, FailedAttempt):
            return exc.failure
        if isinstance(exc, httpx.HTTPError):
            return transport_failure(self.label, self.redact, exc)
        return failure_of(exc)

    async def _send(self, request: httpx.Request, clock: Clock) -> httpx.Response:
        clock.progress()
        auth: Any = self._auth if self._auth is not None else httpx.USE_CLIENT_DEFAULT
        response: httpx.Response = await clock.wait(
            lambda: self._client.send(request, stream=True, auth=auth)
        )
        return response

    async def _complete_once(self, request: httpx.Request, clock: Clock) -> Any:
        response = await self._send(request, clock)
        try:
            if not response.is_success:
                raise FailedAttempt(await self._status_failure(response, clock))
            content = await self._read_body(response, clock)
            return self._errors.decode_json(content, response)
        finally:
            await response.aclose()

    async def _stream_once(
        self, request: httpx.Request, decoder: StreamDecoder[T], clock: Clock
    ) -> AsyncGenerator[T, None]:
        response = await self._send(request, clock)
        try:
            if not response.is_success:
                raise FailedAttempt(await self._status_failure(response, clock))
            await self._check_event_stream(response, clock)
            parser = SseParser()
            head = b""  # The first bytes, to name what a body without events was.
            seen_event = False
            limit = self.limits.max_reply_bytes
            async with aclosing(self._chunks(response, clock, limit, refuse=True)) as body:
                async for chunk in body:
                    if len(head) < ERROR_BODY_BYTES:
                        head += chunk[: ERROR_BODY_BYTES - len(head)]
                    events = parser.feed(chunk)
                    seen_event = seen_event or bool(events)
                    mark = decoder.progress
                    for item in self._decode_all(decoder, events, response):
                        yield item
                    if decoder.progress != mark:
                        clock.progress()  # Only content counts: not pings, not empty deltas.
                    if decoder.done:
                        return
            closing = parser.close()
            for item in self._decode_all(decoder, closing, response):
                yield item
            if not decoder.done:
                if not seen_event and not closing and not_sse(head):
                    raise self._errors.not_an_event_stream(response, head)
                decoder.end_of_stream()
        finally:
            await response.aclose()

    def _decode_all(
        self, decoder: StreamDecoder[T], events: Iterable[SseEvent], response: httpx.Response
    ) -> Iterator[T]:
        """:func:`decode_all`, with the response's request id put on an error it raises."""
        try:
            yield from decode_all(decoder, events)
        except LlmError as exc:
            if exc.request_id is None:
                exc.request_id = self._errors.request_id(response)
            raise

    async def _read_body(self, response: httpx.Response, clock: Clock) -> bytes:
        """The body of a reply, up to the cap (declared sizes over it are refused unread)."""
        limit = self.limits.max_reply_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise self._too_large(response, declared=int(declared))
        return await self._read_up_to(response, clock, limit, refuse=True)

    async def _read_up_to(
        self, response: httpx.Response, clock: Clock, limit: int, *, refuse: bool
    ) -> bytes:
        async with aclosing(self._chunks(response, clock, limit, refuse=refuse)) as body:
            return b"".join([chunk async for chunk in body])

    def _chunks(
        self, response: httpx.Response, clock: Clock, limit: int, *, refuse: bool
    ) -> AsyncGenerator[bytes, None]:
        """The body's chunks (see :func:`chunks`); past ``limit`` refused with ``refuse``."""
        too_large = (lambda: self._too_large(response)) if refuse else None
        return chunks(response.aiter_bytes(), clock, limit, too_large)

    def _too_large(self, response: httpx.Response, declared: int | None = None) -> LlmError:
        return self._errors.too_large(response, self.limits.max_reply_bytes, declared)

    async def probe_json(
        self, method: str, url: str, body: Mapping[str, Any] | None = None, *, timeout: float = 5.0
    ) -> Any:
        """One request to ``url`` (absolute) with the API's headers; its JSON, or None.

        No retries: any failure (refused connection, error status, a reply
        that is not JSON) gives None. For optional look-ups such as the
        context window a server reports.
        """
        if self._closed:
            return None
        headers = {**self._headers, **self._auth_headers()}
        auth: Any = self._auth if self._auth is not None else httpx.USE_CLIENT_DEFAULT
        try:
            response = await self._client.request(
                method,
                url,
                json=body,
                headers=headers,
                timeout=timeout,
                auth=auth,
            )
            if response.status_code != 200:
                return None
            return response.json()
        except (httpx.HTTPError, ValueError):
            return None

    def _build_request(self, path: str, body: Mapping[str, Any], *, stream: bool) -> httpx.Request:
        if self._closed:
            raise LlmError(f"the provider for the {self.label} is closed; create a new one")
        try:
            content = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError) as exc:
            message = f"the request cannot be encoded as JSON: {exc}"
        else:
            headers = {
                **self._headers,
                **self._auth_headers(),
                "content-type": "application/json",
            }
            if stream:
                headers["accept"] = "text/event-stream"
            return self._client.build_request(
                "POST",
                self.base_url + path,
                content=content,
                headers=headers,
                timeout=self._timeout if self._timeout is not None else httpx.USE_CLIENT_DEFAULT,
            )
        raise BadRequestError(self.redact(message))

    async def _check_event_stream(self, response: httpx.Response, clock: Clock) -> None:
        content_type = response.headers.get("content-type", "")
        if "application/json" in content_type:
            details = await self._read_error(response, clock, typed=False)
            raise self._errors.malformed(
                response,
                f"the {self.label} answered a streaming request with {content_type} "
                f"instead of an event stream: {details.message}",
                details,
            )
        if is_html("", content_type):
            raise self._errors.status_error(response, await self._read_error(response, clock))

    # -- the one path of an error body: read it, say what it holds, make the error --

    async def _read_error(
        self, response: httpx.Response, clock: Clock, *, typed: bool = True
    ) -> ServerError:
        """Read an error body (up to :data:`ERROR_BODY_BYTES`) and what the server said in it."""
        raw = await self._read_up_to(response, clock, ERROR_BODY_BYTES, refuse=False)
        return self._errors.server_error(response, raw, typed=typed)

    async def _status_failure(self, response: httpx.Response, clock: Clock) -> Failure:
        status = response.status_code
        retry_after = parse_retry_after(response.headers)
        details = await self._read_error(response, clock)
        error = self._errors.status_error(response, details, retry_after=retry_after)
        return Failure(
            error,
            retryable=retryable(error, status),
            reason=f"HTTP {status}",
            retry_after=retry_after,
        )

    async def _wait_or_raise(self, failure: Failure, retry: int, clock: Clock) -> None:
        delay = self.retry.delay(retry, failure.retry_after) if failure.retryable else None
        if delay is None:
            raise_failure(failure)
        remaining = clock.remaining()
        if remaining is not None and delay >= remaining:
            raise_failure(
                failure
            )  # The deadline would pass while waiting: the real error says more.
        logger.warning(
            "%s: %s on attempt %d of %d; retrying in %.2f s",
            self.label,
            failure.reason,
            retry + 1,
            self.retry.max_retries + 1,
            delay,
        )
        await _sleep(delay)
