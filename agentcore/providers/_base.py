"""What the HTTP providers share: settings, the client's lifetime, complete and stream."""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from types import TracebackType
from typing import Any, ClassVar, TypeVar

import httpx

from agentcore.errors import ConfigError, MalformedResponseError
from agentcore.llm import LlmRequest, LlmResponse, StreamEvent
from agentcore.providers._http import ApiClient, Secret, StreamDecoder
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
    ) -> None:
        cls = type(self).__name__
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"{cls} needs a model name (a non-empty string), got {model!r}")
        self._model = model
        self._base_url = _base_url(cls, base_url, self.base_url_env, self.default_base_url)
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
        label_kind = (
            self.display_name
            if self._base_url == self.default_base_url
            else f"{self.display_name}-compatible"
        )
        self._api = ApiClient(
            label=f"{label_kind} API at {self._base_url}",
            base_url=self._base_url,
            headers=extra_headers,
            auth_headers=lambda: self._auth_headers(secret),
            secret=secret,
            key_env=self.api_key_env,
            retry=retry,
            timeout=_timeout(cls, timeout),
            http_client=http_client,
        )

    @property
    def model(self) -> str:
        """The model used when a request names none."""
        return self._model

    @property
    def base_url(self) -> str:
        """The URL the endpoint paths are appended to."""
        return self._base_url

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
        body = self._body(request, stream=False)
        data = await self._api.post_json(self.path, body)
        try:
            return self._decode_response(data, requested_model=body["model"])
        except ValueError as exc:  # A field the core's classes reject, such as an empty id.
            raise MalformedResponseError(
                f"the {self._api.label} sent an invalid reply: {exc}"
            ) from None

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` and yield the reply as it arrives, ending with ResponseComplete."""
        body = self._body(request, stream=True)
        model = body["model"]
        events = self._api.stream(self.path, body, lambda: self._new_decoder(model))
        async with aclosing(events) as stream:
            async for event in stream:
                yield event

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
