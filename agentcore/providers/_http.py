"""The HTTP side shared by the providers: requests, limits, retries and error mapping.

:class:`ApiClient` posts JSON to one API with one ``httpx.AsyncClient``,
retries what is worth retrying (HTTP 429, 408, 5xx and connection errors)
with :class:`~agentcore.providers._retry.RetryPolicy`, bounds each call (an
idle timeout that only real events reset, an optional deadline for the whole
call, a cap on the bytes of one reply) and turns every failure into an
:class:`~agentcore.errors.LlmError`.

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
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import aclosing
from typing import Any, Literal, NoReturn, Protocol, TypeVar

import httpx
from attrs import frozen

from agentcore.errors import (
    BadRequestError,
    LlmError,
    LlmTimeoutError,
    MalformedResponseError,
    RateLimitError,
    ResponseTooLargeError,
    ServiceUnavailableError,
)
from agentcore.providers._errors import (
    ServerError,
    error_for_status,
    error_in_stream,
    is_html,
    read_server_error,
)
from agentcore.providers._retry import RetryPolicy, parse_retry_after
from agentcore.providers._sse import SseEvent, SseParser
from agentcore.providers._text import valid_json

logger = logging.getLogger(__name__)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

DEFAULT_TIMEOUT = httpx.Timeout(600.0, connect=10.0)
"""Timeouts of a provider's own client: 10 s to connect, 600 s between bytes."""

DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
"""The most bytes read for one reply (8 MiB) unless a provider is given another cap."""

ERROR_BODY_BYTES = 64 * 1024
"""The most bytes read of an error body; the rest is left unread."""

_sleep = asyncio.sleep  # Tests replace this to observe the backoff delays.
_END: Any = object()


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

    @property
    def progress(self) -> int:
        """How many events so far carried content (what resets the idle timeout).

        Content is text, a piece of a tool call, a stop reason, usage or the
        end of the reply; keep-alives (pings) and empty deltas are not.
        """
        ...

    def feed(self, event: SseEvent) -> Iterable[T_co]:
        """Take one server-sent event and return what it completes."""
        ...

    def end_of_stream(self) -> None:
        """The body ended without the terminal event: raise the right LlmError."""
        ...


@frozen
class Limits:
    """The bounds of one call.

    ``idle_timeout``: seconds without progress (a server-sent event that
    carries content, see :attr:`StreamDecoder.progress`, or for a
    non-streamed call the whole reply) before the call fails; None
    for no bound. ``call_timeout``: seconds the whole call may take, retries
    and backoff included; None for no bound. ``max_reply_bytes``: the most
    bytes read for one reply.
    """

    idle_timeout: float | None = None
    call_timeout: float | None = None
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES


@frozen
class Failure:
    """A failed attempt: the error to raise and whether a retry may help."""

    error: LlmError
    retryable: bool
    reason: str
    retry_after: float | None = None


def detach(error: LlmError) -> LlmError:
    """``error`` with its exception chain cut, so no httpx object (or key) hangs from it."""
    error.__cause__ = None
    error.__context__ = None
    error.__suppress_context__ = True
    return error


class _Clock:
    """The idle and overall deadlines of one call, and waits bounded by them."""

    def __init__(self, label: str, limits: Limits) -> None:
        self._label = label
        self._limits = limits
        self._now = asyncio.get_running_loop().time
        total = limits.call_timeout
        self.deadline = None if total is None else self._now() + total
        self._idle_deadline: float | None = None
        self.streaming = False

    def progress(self) -> None:
        """Something real arrived (or an attempt starts): the idle time starts again."""
        idle = self._limits.idle_timeout
        self._idle_deadline = None if idle is None else self._now() + idle

    def remaining(self) -> float | None:
        """Seconds left before the overall deadline, or None without one."""
        return None if self.deadline is None else self.deadline - self._now()

    async def wait(self, start: Callable[[], Any]) -> Any:
        """Await what ``start()`` returns, within the nearer of the two deadlines."""
        bound: float | None = None
        which: Literal["idle", "call"] = "idle"
        if self._idle_deadline is not None:
            bound = self._idle_deadline
        if self.deadline is not None and (bound is None or self.deadline <= bound):
            bound, which = self.deadline, "call"
        if bound is None:
            return await start()
        remaining = bound - self._now()
        if remaining <= 0:
            raise self.timeout(which)
        try:
            return await asyncio.wait_for(start(), remaining)
        except asyncio.TimeoutError:
            pass
        raise self.timeout(which)

    def timeout(self, which: Literal["idle", "call"]) -> LlmTimeoutError:
        """The error for a passed deadline."""
        if which == "call":
            return LlmTimeoutError(
                f"the call to the {self._label} did not finish within its deadline of "
                f"{self._limits.call_timeout:g} s (call_timeout)"
            )
        if self.streaming:
            return LlmTimeoutError(
                f"the {self._label} sent no event for {self._limits.idle_timeout:g} s "
                "(idle_timeout); keep-alive comments, pings, empty deltas and partial data "
                "do not count"
            )
        return LlmTimeoutError(
            f"the {self._label} sent no complete reply within {self._limits.idle_timeout:g} s "
            "(idle_timeout)"
        )


async def _next(iterator: AsyncIterator[T]) -> T:
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        return _END  # type: ignore[no-any-return]


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
        self._secret = secret
        self._hidden = tuple(
            Secret(text)
            for text in sorted({text for text in hidden if text}, key=len, reverse=True)
        )
        self._key_env = key_env
        self._auth = auth
        self._base_url_hint = base_url_hint
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
        """``text`` with the API key and every hidden text replaced by ``***``."""
        secrets = [secret.reveal() for secret in self._hidden]
        if self._secret is not None and self._secret.reveal():
            secrets.append(self._secret.reveal())
        for secret in sorted(secrets, key=len, reverse=True):
            text = text.replace(secret, "***")
        return text

    def scrub(self, error: LlmError) -> LlmError:
        """``error`` with every secret replaced by ``***`` in its message and every text it holds.

        The last pass before an error leaves a provider: whatever built the
        error (a codec quoting tool arguments, a server's echoed body), no
        text of it holds the key, a secret header or the base URL's password.
        """
        error.args = tuple(self.redact(arg) if isinstance(arg, str) else arg for arg in error.args)
        for name, value in vars(error).items():
            if isinstance(value, str):
                setattr(error, name, self.redact(value))
        return error

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

    async def post_json(self, path: str, body: Mapping[str, Any]) -> Any:
        """POST ``body`` to ``path`` and return the decoded JSON reply, retrying as allowed.

        Every string of the reply is made valid text (see
        :func:`~agentcore.providers._text.valid_json`).
        """
        request = self._build_request(path, body, stream=False)
        clock = _Clock(self.label, self.limits)
        retry = 0
        while True:
            failure: Failure
            try:
                return await self._complete_once(request, clock)
            except _FailedAttempt as exc:
                failure = exc.failure
            except httpx.HTTPError as exc:
                failure = self._transport_failure(exc)
            except LlmError as exc:
                failure = _failure_of(exc)
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
        clock = _Clock(self.label, self.limits)
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
            except _FailedAttempt as exc:
                failure = exc.failure
            except httpx.HTTPError as exc:
                failure = self._transport_failure(exc)
            except LlmError as exc:
                failure = _failure_of(exc)
            if yielded:
                _raise(failure)
            await self._wait_or_raise(failure, retry, clock)
            retry += 1

    async def _send(self, request: httpx.Request, clock: _Clock) -> httpx.Response:
        clock.progress()
        auth: Any = self._auth if self._auth is not None else httpx.USE_CLIENT_DEFAULT
        response: httpx.Response = await clock.wait(
            lambda: self._client.send(request, stream=True, auth=auth)
        )
        return response

    async def _complete_once(self, request: httpx.Request, clock: _Clock) -> Any:
        response = await self._send(request, clock)
        try:
            if not response.is_success:
                raise _FailedAttempt(await self._status_failure(response, clock))
            content = await self._read_body(response, clock)
            return valid_json(self._decode_json(content, response))
        finally:
            await response.aclose()

    async def _stream_once(
        self, request: httpx.Request, decoder: StreamDecoder[T], clock: _Clock
    ) -> AsyncGenerator[T, None]:
        response = await self._send(request, clock)
        try:
            if not response.is_success:
                raise _FailedAttempt(await self._status_failure(response, clock))
            await self._check_event_stream(response, clock)
            parser = SseParser()
            size = 0
            head = b""  # The first bytes, to name what a body without events was.
            seen_event = False
            limit = self.limits.max_reply_bytes
            async with aclosing(response.aiter_bytes()) as body:  # type: ignore[type-var]
                while True:
                    chunk = await clock.wait(lambda: _next(body))
                    if chunk is _END:
                        break
                    size += len(chunk)
                    if size > limit:
                        raise self._too_large(response)
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
                if not seen_event and not closing and _not_sse(head):
                    raise self._not_an_event_stream(response, head)
                decoder.end_of_stream()
        finally:
            await response.aclose()

    def _decode_all(
        self, decoder: StreamDecoder[T], events: Iterable[SseEvent], response: httpx.Response
    ) -> Iterator[T]:
        """:func:`_decode_all`, with the response's request id put on an error it raises."""
        try:
            yield from _decode_all(decoder, events)
        except LlmError as exc:
            if exc.request_id is None:
                exc.request_id = self._request_id(response)
            raise

    async def _read_body(self, response: httpx.Response, clock: _Clock) -> bytes:
        """The body of a reply, up to the cap (declared sizes over it are refused unread)."""
        limit = self.limits.max_reply_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise self._too_large(response, declared=int(declared))
        return await self._read_up_to(response, clock, limit, refuse=True)

    async def _read_up_to(
        self, response: httpx.Response, clock: _Clock, limit: int, *, refuse: bool
    ) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async with aclosing(response.aiter_bytes()) as body:  # type: ignore[type-var]
            while True:
                chunk = await clock.wait(lambda: _next(body))
                if chunk is _END:
                    break
                size += len(chunk)
                if size > limit:
                    if refuse:
                        raise self._too_large(response)
                    chunks.append(chunk[: len(chunk) - (size - limit)])
                    break
                chunks.append(chunk)
        return b"".join(chunks)

    def _too_large(self, response: httpx.Response, declared: int | None = None) -> LlmError:
        limit = self.limits.max_reply_bytes
        size = f"{declared} bytes" if declared is not None else f"more than {limit} bytes"
        return ResponseTooLargeError(
            f"the reply from the {self.label} is too large: {size} against a cap of "
            f"{limit} bytes (max_reply_bytes); the rest was not read",
            limit_bytes=limit,
            status_code=response.status_code,
            request_id=self._request_id(response),
        )

    def _request_id(self, response: httpx.Response) -> str | None:
        return read_server_error("", redact=self.redact, headers=response.headers).request_id

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

    def _decode_json(self, content: bytes, response: httpx.Response) -> Any:
        try:
            return json.loads(content)
        except ValueError as exc:
            problem = str(exc)
        text = content.decode("utf-8", errors="replace")
        details = read_server_error(
            text,
            redact=self.redact,
            headers=response.headers,
            content_type=response.headers.get("content-type", ""),
        )
        if details.html_title is not None:
            raise error_for_status(
                self.label,
                response.status_code,
                details,
                key_env=self._key_env,
                base_url_hint=self._base_url_hint,
            )
        snippet = (details.body or "")[:200]
        raise MalformedResponseError(
            f"the {self.label} answered with invalid JSON ({problem}): {snippet!r}",
            status_code=response.status_code,
            body=details.body,
            request_id=details.request_id,
        )

    async def _check_event_stream(self, response: httpx.Response, clock: _Clock) -> None:
        content_type = response.headers.get("content-type", "")
        if "application/json" in content_type:
            raw = await self._read_up_to(response, clock, ERROR_BODY_BYTES, refuse=False)
            details = read_server_error(
                raw.decode("utf-8", errors="replace"), redact=self.redact, headers=response.headers
            )
            raise MalformedResponseError(
                f"the {self.label} answered a streaming request with {content_type} "
                f"instead of an event stream: {details.message}",
                status_code=response.status_code,
                code=details.code,
                body=details.body,
                request_id=details.request_id,
            )
        if is_html("", content_type):
            raw = await self._read_up_to(response, clock, ERROR_BODY_BYTES, refuse=False)
            details = read_server_error(
                raw.decode("utf-8", errors="replace"),
                redact=self.redact,
                headers=response.headers,
                content_type=content_type,
            )
            raise error_for_status(
                self.label,
                response.status_code,
                details,
                key_env=self._key_env,
                base_url_hint=self._base_url_hint,
            )

    def _not_an_event_stream(self, response: httpx.Response, head: bytes) -> LlmError:
        """The error for a streamed reply whose body held no event at all."""
        details = read_server_error(
            head.decode("utf-8", errors="replace"),
            redact=self.redact,
            headers=response.headers,
            content_type=response.headers.get("content-type", ""),
        )
        if details.html_title is not None:
            return error_for_status(
                self.label,
                response.status_code,
                details,
                key_env=self._key_env,
                base_url_hint=self._base_url_hint,
            )
        return MalformedResponseError(
            f"the {self.label} answered a streaming request with a body that holds no "
            f"server-sent event: {details.message!r}",
            status_code=response.status_code,
            code=details.code,
            body=details.body,
            request_id=details.request_id,
        )

    async def _status_failure(self, response: httpx.Response, clock: _Clock) -> Failure:
        status = response.status_code
        retry_after = parse_retry_after(response.headers)
        raw = await self._read_up_to(response, clock, ERROR_BODY_BYTES, refuse=False)
        details = read_server_error(
            raw.decode("utf-8", errors="replace"),
            redact=self.redact,
            headers=response.headers,
            content_type=response.headers.get("content-type", ""),
        )
        error = error_for_status(
            self.label,
            status,
            details,
            key_env=self._key_env,
            retry_after=retry_after,
            base_url_hint=self._base_url_hint,
        )
        return Failure(
            error,
            retryable=_retryable(error, status),
            reason=f"HTTP {status}",
            retry_after=retry_after,
        )

    def _transport_failure(self, exc: httpx.HTTPError) -> Failure:
        detail = self.redact(str(exc) or type(exc).__name__)
        reason = type(exc).__name__
        if isinstance(exc, httpx.ConnectTimeout):
            error: LlmError = LlmTimeoutError(
                f"could not connect to the {self.label} in time (httpx.{reason}): {detail}"
            )
            return Failure(error, retryable=True, reason=reason)
        if isinstance(exc, httpx.TimeoutException):
            error = LlmTimeoutError(
                f"the {self.label} did not answer in time (httpx.{reason}: no byte for the "
                "read timeout)"
            )
            return Failure(error, retryable=False, reason=reason)
        if isinstance(exc, httpx.DecodingError):
            error = MalformedResponseError(
                f"the {self.label} sent a body that cannot be decoded (httpx.{reason}): {detail}"
            )
            return Failure(error, retryable=False, reason=reason)
        if isinstance(exc, httpx.TransportError):
            error = ServiceUnavailableError(
                f"the connection to the {self.label} failed (httpx.{reason}): {detail}"
            )
            return Failure(error, retryable=True, reason=reason)
        error = ServiceUnavailableError(
            f"the call to the {self.label} failed (httpx.{reason}): {detail}"
        )
        return Failure(error, retryable=False, reason=reason)

    async def _wait_or_raise(self, failure: Failure, retry: int, clock: _Clock) -> None:
        delay = self.retry.delay(retry, failure.retry_after) if failure.retryable else None
        if delay is None:
            _raise(failure)
        remaining = clock.remaining()
        if remaining is not None and delay >= remaining:
            _raise(failure)  # The deadline would pass while waiting: the real error says more.
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
    """Carries the failure of one attempt to the retry loop."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


_SSE_STARTS = (b"data:", b"event:", b"id:", b"retry:", b":")


def _not_sse(head: bytes) -> bool:
    """Whether the first bytes of a body are something, and not the start of an event stream."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return bool(text) and not text.startswith(_SSE_STARTS)


def _retryable(error: LlmError, status: int | None) -> bool:
    return isinstance(error, (RateLimitError, ServiceUnavailableError)) or status == 408


def _failure_of(error: LlmError) -> Failure:
    return Failure(
        error,
        retryable=_retryable(error, None),
        reason=type(error).__name__,
        retry_after=getattr(error, "retry_after", None),
    )


def _decode_all(decoder: StreamDecoder[T], events: Iterable[SseEvent]) -> Iterator[T]:
    """What ``decoder`` makes of ``events``, up to and including its terminal event."""
    for event in events:
        try:
            items = decoder.feed(event)
        except ValueError as exc:  # A field the core's classes reject, such as an empty id.
            problem = str(exc)
        else:
            yield from items
            if decoder.done:
                return
            continue
        raise MalformedResponseError(f"a streamed {event.event} event is invalid: {problem}")


def _raise(failure: Failure) -> NoReturn:
    """Raise the failure's error with no exception chain behind it."""
    raise detach(failure.error)
