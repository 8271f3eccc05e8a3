"""What the HTTP providers share: settings, the client's lifetime, complete and stream."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from agentcore.errors import ConfigError, LlmError, MalformedResponseError
from agentcore.llm import LlmRequest, LlmResponse, StreamEvent
from agentcore.providers._clock import Limits
from agentcore.providers._failures import detach
from agentcore.providers._http import ApiClient
from agentcore.providers._options import HttpOptions, resolve_base_url, settings
from agentcore.providers._secret import Secret
from agentcore.providers._stream_decoder import StreamDecoder

if TYPE_CHECKING:
    from typing_extensions import Unpack

_P = TypeVar("_P", bound="HttpProvider")


class HttpProvider:
    """Base class of the providers that speak JSON over HTTP.

    A subclass names its API in the class variables and implements the
    encoding of requests and the decoding of replies; this class owns the
    settings, the HTTP client and the retries. The constructor takes the
    model and the keyword options of :class:`~agentcore.providers.HttpOptions`;
    a subclass adds its own keywords and passes the rest on as ``**options``.
    """

    display_name: ClassVar[str] = ""
    """The API's name in messages, such as ``"OpenAI"``."""
    default_base_url: ClassVar[str] = ""
    base_url_env: ClassVar[str] = ""
    api_key_env: ClassVar[str] = ""
    api_key_required: ClassVar[bool] = False
    path: ClassVar[str] = ""
    """The endpoint, appended to the base URL."""

    def __init__(self, model: str, **options: Unpack[HttpOptions]) -> None:
        cls = type(self).__name__
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"{cls} needs a model name (a non-empty string), got {model!r}")
        self._model = model
        given = options.get("base_url")
        checked = settings(
            cls,
            options,
            base_url=self._resolve_base_url(cls, given),
            key_env=self.api_key_env,
            key_required=self.api_key_required,
        )
        url, secret = checked.url, checked.secret
        self._base_url = url.display
        self._has_api_key = secret is not None
        self._extra_body = dict(checked.extra_body)
        self._context_windows = checked.context_windows
        self._api = ApiClient(
            label=f"{self._label_kind()} API at {self._base_url}",
            base_url=url.request,
            headers=checked.headers,
            auth_headers=lambda: self._auth_headers(secret),
            secret=secret,
            key_env=self.api_key_env,
            retry=checked.retry,
            timeout=checked.timeout,
            http_client=checked.http_client,
            limits=checked.limits,
            auth=url.auth,
            hidden=checked.hidden,
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
    def context_windows(self) -> Mapping[str, int]:
        """The windows given as ``context_windows=``, by lower-cased model-name prefix.

        ``agentcore.providers.windows.discover_context_window`` consults
        them with the built-in table (an entry replaces the table's entry of
        the same name), before asking the server.
        """
        return self._context_windows

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
            return self._decode_reply(data, body["model"], request)
        except LlmError as exc:
            self._api.scrub(detach(exc))
            raise

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` and yield the reply as it arrives, ending with ResponseComplete."""
        try:
            body = self._body(request, stream=True)
            model = body["model"]
            events = self._api.stream(self.path, body, lambda: self._new_decoder(model, request))
            async with aclosing(events) as stream:
                async for event in stream:
                    yield event
        except LlmError as exc:
            self._api.scrub(detach(exc))
            raise

    def _decode_reply(self, data: Any, model: str, request: LlmRequest) -> LlmResponse:
        try:
            return self._decode_response(data, requested_model=model, request=request)
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
        return resolve_base_url(cls, given, self.base_url_env, self.default_base_url)

    def _body(self, request: LlmRequest, *, stream: bool) -> dict[str, Any]:
        if not isinstance(request, LlmRequest):
            raise TypeError(f"expected an LlmRequest, got {type(request).__name__}")
        body = self._encode_request(request, model=request.model or self._model, stream=stream)
        body.update(self._extra_body)
        body.update(request.extra_body)
        return body

    def _auth_headers(self, secret: Secret | None) -> dict[str, str]:
        """The headers that carry the credentials and the API version."""
        raise NotImplementedError

    def _encode_request(self, request: LlmRequest, *, model: str, stream: bool) -> dict[str, Any]:
        """The JSON body for ``request``."""
        raise NotImplementedError

    def _decode_response(
        self, data: Any, *, requested_model: str, request: LlmRequest
    ) -> LlmResponse:
        """The reply to ``request`` from the decoded JSON of a complete (non-streamed) response."""
        raise NotImplementedError

    def _new_decoder(self, requested_model: str, request: LlmRequest) -> StreamDecoder[StreamEvent]:
        """A fresh decoder for one streamed response to ``request``."""
        raise NotImplementedError
