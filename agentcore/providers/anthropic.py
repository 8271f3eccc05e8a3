"""AnthropicProvider: Anthropic's Messages API."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Literal, cast

from agentcore.errors import ContextWindowExceededError
from agentcore.llm import LlmRequest, LlmResponse, StreamEvent
from agentcore.providers import _anthropic_codec as codec
from agentcore.providers._anthropic_stream import AnthropicStreamDecoder
from agentcore.providers._base import HttpProvider
from agentcore.providers._options import HttpOptions
from agentcore.providers._reply_room import ReplyRoom
from agentcore.providers._secret import Secret
from agentcore.providers._stream_decoder import StreamDecoder
from agentcore.validators import POSITIVE_INT, STR, one_of

if TYPE_CHECKING:
    from typing_extensions import Unpack

DEFAULT_BASE_URL = "https://api.anthropic.com"
"""Anthropic's endpoint, used when neither ``base_url`` nor ``ANTHROPIC_BASE_URL`` is set."""

DEFAULT_API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header sent by default."""

DEFAULT_MAX_TOKENS = 4096
"""The most ``max_tokens`` sent when a request gives none (the API requires the field).

Less is sent when the model's window leaves less (see ``default_max_tokens``).
"""


class AnthropicProvider(HttpProvider):
    """A model behind ``POST {base_url}/v1/messages``.

    :param model: The model used when a request names none (``request.model``
        overrides it per call).
    :param base_url: The API root, ``ANTHROPIC_BASE_URL`` when None, else
        :data:`DEFAULT_BASE_URL`.
    :param api_key: Sent as ``x-api-key``; ``ANTHROPIC_API_KEY`` when None.
        Required.
    :param options: The other HTTP options (``timeout``, ``idle_timeout``,
        ``call_timeout``, ``max_reply_bytes``, ``max_retries``, ``backoff_base``,
        ``backoff_max``, ``http_client``, ``headers``, ``extra_body``,
        ``context_windows``), documented once in
        :class:`~agentcore.providers.HttpOptions`.
    :param api_version: The ``anthropic-version`` header.
    :param default_max_tokens: The most ``max_tokens`` sent for a request that
        gives none. When the model's window is known (``context_windows=``,
        the built-in table, or learned from a refusal), such a request asks
        for at most what the window leaves after its count; a refusal for
        length with the server's figures (``X + Y > L``) is sent once more
        with exactly ``L - X``, so a small window works as on OpenAI, where
        the field is left out. A request's own ``max_tokens`` is sent as is.
    :param cache: ``"auto"`` (the default) marks prompt-cache breakpoints
        (``cache_control``) on the tools, the system prompt, the end of the
        turn before the newest user turn and the end of the newest turn (not
        for a request whose ``cache_newest`` is False: a plugin's one-off), at
        most four, so each request of a conversation reads what the previous
        one wrote (billed at 0.1× instead of 1×; writes at 1.25× for 5
        minutes, 2× for an hour); ``"off"`` sends none.
    :param cache_ttl: How long a cache entry lives: ``"5m"`` (the default)
        or ``"1h"``.
    """

    display_name = "Anthropic"
    default_base_url = DEFAULT_BASE_URL
    base_url_env = "ANTHROPIC_BASE_URL"
    api_key_env = "ANTHROPIC_API_KEY"
    api_key_required = True
    path = "/v1/messages"

    def __init__(
        self,
        model: str,
        *,
        api_version: str = DEFAULT_API_VERSION,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        cache: Literal["auto", "off"] = "auto",
        cache_ttl: Literal["5m", "1h"] = "5m",
        **options: Unpack[HttpOptions],
    ) -> None:
        cls = type(self).__name__
        one_of("auto", "off").check(f"{cls}: cache", cache)
        one_of("5m", "1h").check(f"{cls}: cache_ttl", cache_ttl)
        STR.where(bool, "a date string").check(f"{cls}: api_version", api_version)
        POSITIVE_INT.check(f"{cls}: default_max_tokens", default_max_tokens)
        self._cache_ttl: str | None = cache_ttl if cache == "auto" else None
        self._api_version = api_version
        self._default_max_tokens = default_max_tokens
        super().__init__(model, **options)
        self._reply_room = ReplyRoom(default_max_tokens, self.context_windows)

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """Send ``request`` and return the whole reply, its reply sized to the window."""
        model = request.model or self.model
        sent = await self._reply_room.sized(request, model)
        try:
            return await super().complete(sent)
        except ContextWindowExceededError as exc:
            again = await self._reply_room.after_refusal(request, sent, exc, model)
            if again is None:
                raise
        return await super().complete(again)

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` and yield the reply as it arrives, its reply sized to the window."""
        model = request.model or self.model
        sent = await self._reply_room.sized(request, model)
        yielded = False
        try:
            async with aclosing(self._base_stream(sent)) as events:
                async for event in events:
                    yielded = True
                    yield event
            return
        except ContextWindowExceededError as exc:
            # A refusal comes as the answer's status, before any event.
            again = (
                None if yielded else await self._reply_room.after_refusal(request, sent, exc, model)
            )
            if again is None:
                raise
        async with aclosing(self._base_stream(again)) as events:
            async for event in events:
                yield event

    def _base_stream(self, request: LlmRequest) -> AsyncGenerator[StreamEvent, None]:
        """The base class's stream of ``request``, typed as the generator it is (to close it)."""
        return cast("AsyncGenerator[StreamEvent, None]", super().stream(request))

    def _auth_headers(self, secret: Secret | None) -> dict[str, str]:
        headers = {"anthropic-version": self._api_version}
        if secret is not None:
            headers["x-api-key"] = secret.reveal()
        return headers

    def _encode_request(self, request: LlmRequest, *, model: str, stream: bool) -> dict[str, Any]:
        return codec.encode_request(
            request,
            model=model,
            stream=stream,
            default_max_tokens=self._default_max_tokens,
            cache_ttl=self._cache_ttl,
        )

    def _decode_response(
        self, data: Any, *, requested_model: str, request: LlmRequest
    ) -> LlmResponse:
        output = request.output.name if request.output is not None else None
        return codec.decode_response(data, requested_model=requested_model, output_tool=output)

    def _new_decoder(self, requested_model: str, request: LlmRequest) -> StreamDecoder[StreamEvent]:
        output = request.output.name if request.output is not None else None
        return AnthropicStreamDecoder(self._api, requested_model, output)
