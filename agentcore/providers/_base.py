"""What the HTTP providers share: settings, the client's lifetime, complete and stream."""

from __future__ import annotations

import base64
import math
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from types import TracebackType
from typing import Any, ClassVar, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx
from attrs import frozen

from agentcore.errors import ConfigError, LlmError, MalformedResponseError
from agentcore.llm import LlmRequest, LlmResponse, StreamEvent
from agentcore.providers._http import (
    DEFAULT_MAX_REPLY_BYTES,
    ApiClient,
    Limits,
    Secret,
    StreamDecoder,
    detach,
)
from agentcore.providers._retry import RetryPolicy

_P = TypeVar("_P", bound="HttpProvider")


class HttpProvider:
    """Base class of the providers that speak JSON over HTTP.

    A subclass names its API in the class variables and implements the
    encoding of requests and the decoding of replies; this class owns the
    settings, the HTTP client and the retries.
    """

    display_name: ClassVar[str] = ""
    """The API's name in messages, such as ``"OpenAI"``."""
    default_base_url: ClassVar[str] = ""
    base_url_env: ClassVar[str] = ""
    api_key_env: ClassVar[str] = ""
    api_key_required: ClassVar[bool] = False
    path: ClassVar[str] = ""
    """The endpoint, appended to the base URL."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | httpx.Timeout | None = None,
        max_retries: int = 2,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        http_client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        idle_timeout: float | None = None,
        call_timeout: float | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        cls = type(self).__name__
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"{cls} needs a model name (a non-empty string), got {model!r}")
        self._model = model
        url = _split_user_info(cls, self._resolve_base_url(cls, base_url))
        self._base_url = url.display
        secret = _api_key(cls, api_key, self.api_key_env, required=self.api_key_required)
        self._has_api_key = secret is not None
        try:
            retry = RetryPolicy(max_retries, backoff_base, backoff_max)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{cls}: {exc}") from None
        if http_client is not None and not isinstance(http_client, httpx.AsyncClient):
            raise ConfigError(
                f"{cls}: http_client must be an httpx.AsyncClient, got {http_client!r}"
            )
        self._extra_body = _mapping(cls, "extra_body", extra_body)
        extra_headers = {
            str(key): str(value) for key, value in _mapping(cls, "headers", headers).items()
        }
        read_timeout = _timeout(cls, timeout)
        limits = Limits(
            idle_timeout=_seconds(cls, "idle_timeout", idle_timeout, _read_seconds(read_timeout)),
            call_timeout=_seconds(cls, "call_timeout", call_timeout, None),
            max_reply_bytes=_byte_count(cls, max_reply_bytes),
        )
        self._api = ApiClient(
            label=f"{self._label_kind()} API at {self._base_url}",
            base_url=url.request,
            headers=extra_headers,
            auth_headers=lambda: self._auth_headers(secret),
            secret=secret,
            key_env=self.api_key_env,
            retry=retry,
            timeout=read_timeout,
            http_client=http_client,
            limits=limits,
            auth=url.auth,
            hidden=url.hidden,
            base_url_hint=f" It should be the API root, such as {self.default_base_url}.",
        )

    @property
    def model(self) -> str:
        """The model used when a request names none."""
        return self._model

    @property
    def base_url(self) -> str:
        """The URL the endpoint paths are appended to (any user-info in it shown as ``***``)."""
        return self._base_url

    @property
    def limits(self) -> Limits:
        """The idle timeout, the per-call deadline and the reply cap of every call."""
        return self._api.limits

    @property
    def max_retries(self) -> int:
        """How many times a failed call is retried at most."""
        return self._api.retry.max_retries

    def __repr__(self) -> str:
        key = "'***'" if self._has_api_key else "None"
        return (
            f"{type(self).__name__}(model={self._model!r}, base_url={self._base_url!r}, "
            f"api_key={key})"
        )

    async def aclose(self) -> None:
        """Close the connection pool (a client passed as ``http_client`` stays open)."""
        await self._api.aclose()

    async def __aenter__(self: _P) -> _P:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """Send ``request`` and return the whole reply."""
        try:
            body = self._body(request, stream=False)
            data = await self._api.post_json(self.path, body)
            return self._decode_reply(data, body["model"])
        except LlmError as exc:
            detach(exc)
            raise

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` and yield the reply as it arrives, ending with ResponseComplete."""
        try:
            body = self._body(request, stream=True)
            model = body["model"]
            events = self._api.stream(self.path, body, lambda: self._new_decoder(model))
            async with aclosing(events) as stream:
                async for event in stream:
                    yield event
        except LlmError as exc:
            detach(exc)
            raise

    def _decode_reply(self, data: Any, model: str) -> LlmResponse:
        try:
            return self._decode_response(data, requested_model=model)
        except ValueError as exc:  # A field the core's classes reject, such as an empty id.
            problem = self._api.redact(str(exc))
        raise MalformedResponseError(f"the {self._api.label} sent an invalid reply: {problem}")

    def _label_kind(self) -> str:
        """How messages name the API: the display name, or "...-compatible" elsewhere."""
        if self._base_url == self.default_base_url:
            return self.display_name
        return f"{self.display_name}-compatible"

    def _resolve_base_url(self, cls: str, given: str | None) -> str:
        """The base URL: ``given``, else the environment variable, else the default."""
        return _base_url(cls, given, self.base_url_env, self.default_base_url)

    def _body(self, request: LlmRequest, *, stream: bool) -> dict[str, Any]:
        if not isinstance(request, LlmRequest):
            raise TypeError(f"expected an LlmRequest, got {type(request).__name__}")
        body = self._encode_request(request, model=request.model or self._model, stream=stream)
        body.update(self._extra_body)
        return body

    def _auth_headers(self, secret: Secret | None) -> dict[str, str]:
        """The headers that carry the credentials and the API version."""
        raise NotImplementedError

    def _encode_request(self, request: LlmRequest, *, model: str, stream: bool) -> dict[str, Any]:
        """The JSON body for ``request``."""
        raise NotImplementedError

    def _decode_response(self, data: Any, *, requested_model: str) -> LlmResponse:
        """The reply from the decoded JSON of a complete (non-streamed) response."""
        raise NotImplementedError

    def _new_decoder(self, requested_model: str) -> StreamDecoder[StreamEvent]:
        """A fresh decoder for one streamed response."""
        raise NotImplementedError


def _base_url(cls: str, given: str | None, env: str, default: str) -> str:
    if given is not None and not isinstance(given, str):
        raise ConfigError(f"{cls}: base_url must be a string, got {given!r}")
    url = (given or os.environ.get(env, "") or default).strip()
    if not url.startswith(("http://", "https://")):
        source = "base_url" if given else env
        raise ConfigError(f"{cls}: {source} must be an http:// or https:// URL, got {url!r}")
    return url.rstrip("/")


@frozen
class _Url:
    """A base URL split for use: ``request`` has no user-info, ``display`` masks it."""

    request: str
    display: str
    auth: httpx.BasicAuth | None
    hidden: tuple[str, ...]


def _split_user_info(cls: str, url: str) -> _Url:
    """Take the ``user:password@`` part out of ``url``: it becomes HTTP Basic credentials.

    httpx does the same with user-info left in a URL; taking it out keeps it
    out of httpx's own log lines and of every message that names the URL.
    """
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
        host = parts.hostname
    except ValueError as exc:
        raise ConfigError(f"{cls}: base_url is not a valid URL: {exc}") from None
    if username is None and password is None:
        return _Url(request=url, display=url, auth=None, hidden=())
    netloc = parts.netloc.rpartition("@")[2]
    if not host:
        raise ConfigError(f"{cls}: base_url has no host after its user-info")
    user, secret = unquote(username or ""), unquote(password or "")
    basic = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
    hidden = {basic, password or "", secret}
    if not password:
        hidden |= {username or "", user}  # A token given as the user name.
    return _Url(
        request=urlunsplit(parts._replace(netloc=netloc)),
        display=urlunsplit(parts._replace(netloc="***@" + netloc)),
        auth=httpx.BasicAuth(user, secret),
        hidden=tuple(text for text in hidden if text),
    )


def _read_seconds(timeout: httpx.Timeout | None) -> float | None:
    """The read timeout in force: the given one, else the default client's (600 s)."""
    from agentcore.providers._http import DEFAULT_TIMEOUT

    return (timeout if timeout is not None else DEFAULT_TIMEOUT).read


def _seconds(cls: str, name: str, value: float | None, default: float | None) -> float | None:
    if value is None:
        return default
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ConfigError(f"{cls}: {name} must be a number of seconds > 0 or None, got {value!r}")
    return float(value)


def _byte_count(cls: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{cls}: max_reply_bytes must be an int > 0, got {value!r}")
    return value


def _api_key(cls: str, given: str | None, env: str, *, required: bool) -> Secret | None:
    if given is not None and not isinstance(given, str):
        raise ConfigError(f"{cls}: api_key must be a string or None")
    key = (given or os.environ.get(env, "")).strip()
    if key:
        return Secret(key)
    if required:
        raise ConfigError(f"{cls} needs an API key: pass api_key= or set {env}")
    return None


def _timeout(cls: str, timeout: float | httpx.Timeout | None) -> httpx.Timeout | None:
    if timeout is None or isinstance(timeout, httpx.Timeout):
        return timeout
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ConfigError(
            f"{cls}: timeout must be a number of seconds > 0 or an httpx.Timeout, got {timeout!r}"
        )
    return httpx.Timeout(float(timeout))


def _mapping(cls: str, name: str, value: Mapping[str, Any] | None) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{cls}: {name} must be a mapping, got {value!r}")
    return dict(value)
