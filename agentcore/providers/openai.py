"""OpenAIProvider: OpenAI's Chat Completions API and the servers that copy it.

Ollama, vLLM, LM Studio, llama.cpp's server and many hosted services speak
the same protocol: point ``base_url`` (or ``OPENAI_BASE_URL``) at them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from agentcore.llm import LlmRequest, LlmResponse, StreamEvent
from agentcore.providers import _openai_codec as codec
from agentcore.providers._base import HttpProvider
from agentcore.providers._openai_stream import OpenAIStreamDecoder
from agentcore.providers._options import HttpOptions
from agentcore.providers._secret import Secret
from agentcore.providers._stream_decoder import StreamDecoder
from agentcore.validators import BOOL, STR, one_of

if TYPE_CHECKING:
    from typing_extensions import Unpack

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""The public OpenAI endpoint, used when neither ``base_url`` nor ``OPENAI_BASE_URL`` is set."""


_CACHE_KEY = STR.where(bool, "a non-empty string").or_none()


class OpenAIProvider(HttpProvider):
    """A model behind ``POST {base_url}/chat/completions``.

    :param model: The model used when a request names none (``request.model``
        overrides it per call).
    :param base_url: The API root, ``OPENAI_BASE_URL`` when None, else
        :data:`DEFAULT_BASE_URL`. For Ollama: ``http://localhost:11434/v1``.
    :param api_key: Sent as ``Authorization: Bearer``; ``OPENAI_API_KEY``
        when None. Optional: local servers need none.
    :param options: The other HTTP options (``timeout``, ``idle_timeout``,
        ``call_timeout``, ``max_reply_bytes``, ``max_retries``, ``backoff_base``,
        ``backoff_max``, ``http_client``, ``headers``, ``extra_body``,
        ``context_windows``), documented once in
        :class:`~agentcore.providers.HttpOptions`.
    :param max_tokens_field: The body field that carries
        ``request.max_tokens``: ``"max_tokens"`` (understood by every
        compatible server) or ``"max_completion_tokens"`` (required by
        OpenAI's reasoning models).
    :param cache: Whether requests carry ``prompt_cache_key`` (OpenAI routes
        requests with one key to the same prompt cache): ``"auto"`` (the
        default) sends it to OpenAI's own endpoint only, as other servers
        may refuse an unknown field; ``"on"`` sends it to any server;
        ``"off"`` never sends it (nor ``cache_prompt``).
    :param prompt_cache_key: The key to send; by default each request's
        ``cache_key`` (the conversation it belongs to), when it has one.
    :param cache_prompt: Send llama.cpp's ``cache_prompt: true`` (reuse the
        server's KV cache for the prompt prefix); for a llama.cpp server only.
    """

    display_name = "OpenAI"
    default_base_url = DEFAULT_BASE_URL
    base_url_env = "OPENAI_BASE_URL"
    api_key_env = "OPENAI_API_KEY"
    api_key_required = False
    path = "/chat/completions"

    def __init__(
        self,
        model: str,
        *,
        max_tokens_field: str = "max_tokens",
        cache: Literal["auto", "on", "off"] = "auto",
        prompt_cache_key: str | None = None,
        cache_prompt: bool = False,
        **options: Unpack[HttpOptions],
    ) -> None:
        cls = type(self).__name__
        one_of("auto", "on", "off").check(f"{cls}: cache", cache)
        _CACHE_KEY.check(f"{cls}: prompt_cache_key", prompt_cache_key)
        BOOL.check(f"{cls}: cache_prompt", cache_prompt)
        self._cache = cache
        self._prompt_cache_key = prompt_cache_key
        self._cache_prompt = cache_prompt
        one_of("max_tokens", "max_completion_tokens").check(
            f"{cls}: max_tokens_field", max_tokens_field
        )
        self._max_tokens_field = max_tokens_field
        super().__init__(model, **options)

    def _auth_headers(self, secret: Secret | None) -> dict[str, str]:
        return {} if secret is None else {"authorization": f"Bearer {secret.reveal()}"}

    def _encode_request(self, request: LlmRequest, *, model: str, stream: bool) -> dict[str, Any]:
        body = codec.encode_request(
            request, model=model, stream=stream, max_tokens_field=self._max_tokens_field
        )
        sends_key = self._cache == "on" or (
            self._cache == "auto" and self.base_url == self.default_base_url
        )
        key = self._prompt_cache_key or request.cache_key
        if sends_key and key:
            body["prompt_cache_key"] = key
        if self._cache_prompt and self._cache != "off":
            body["cache_prompt"] = True
        return body

    def _decode_response(
        self, data: Any, *, requested_model: str, request: LlmRequest
    ) -> LlmResponse:
        return codec.decode_response(data, requested_model=requested_model)

    def _new_decoder(self, requested_model: str, request: LlmRequest) -> StreamDecoder[StreamEvent]:
        return OpenAIStreamDecoder(self._api, requested_model)
