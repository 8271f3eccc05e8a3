"""OpenAIResponsesProvider: OpenAI's Responses API (``POST {base_url}/responses``).

Stateless by default: every request carries the whole conversation and
``store: false``, and asks for the reasoning items' encrypted content, so a
reasoning model's reasoning goes back to it on the next call of a tool loop
(see :mod:`agentcore.providers._responses_codec`) while OpenAI keeps nothing.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Literal, cast

from agentcore.errors import BadRequestError, LlmError
from agentcore.llm import LlmRequest, LlmResponse, StreamEvent
from agentcore.providers import _responses_codec as codec
from agentcore.providers._base import HttpProvider
from agentcore.providers._errors import ERROR_TYPE_STATUS, ServerError, error_for_status
from agentcore.providers._options import HttpOptions
from agentcore.providers._responses_stream import ResponsesStreamDecoder
from agentcore.providers._secret import Secret
from agentcore.providers._stream_decoder import StreamDecoder
from agentcore.providers.openai import DEFAULT_BASE_URL
from agentcore.validators import BOOL, STR, one_of

if TYPE_CHECKING:
    from typing_extensions import Unpack

logger = logging.getLogger(__name__)

NO_ENCRYPTED_REASONING = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4", "gpt-3.5", "gpt-5-chat")
"""Model families that do not reason, whose requests ``encrypted_reasoning="auto"`` sends
without ``include`` (OpenAI refuses it for them: "Encrypted content is not supported
with this model"). A name matches a family when it is the family or continues with ``-``."""

_REFUSAL = "encrypted content is not supported"
_CACHE_KEY = STR.where(bool, "a non-empty string").or_none()


def may_reason(model: str) -> bool:
    """Whether ``model`` is of no family in :data:`NO_ENCRYPTED_REASONING`."""
    name = model.lower().rsplit("/", 1)[-1]
    return not any(
        name == family or name.startswith(family + "-") for family in NO_ENCRYPTED_REASONING
    )


class OpenAIResponsesProvider(HttpProvider):
    """A model behind ``POST {base_url}/responses``.

    :param model: The model used when a request names none (``request.model``
        overrides it per call).
    :param base_url: The API root, ``OPENAI_BASE_URL`` when None, else
        ``https://api.openai.com/v1`` (as for :class:`~agentcore.providers.OpenAIProvider`).
    :param api_key: Sent as ``Authorization: Bearer``; ``OPENAI_API_KEY``
        when None. Optional: local servers need none.
    :param options: The other HTTP options (``timeout``, ``idle_timeout``,
        ``call_timeout``, ``max_reply_bytes``, ``max_retries``, ``backoff_base``,
        ``backoff_max``, ``http_client``, ``headers``, ``extra_body``,
        ``context_windows``), documented once in
        :class:`~agentcore.providers.HttpOptions`.
    :param store: Sent as ``store``: False (the default) asks OpenAI to keep
        no response; every request carries the whole conversation anyway.
        With True, a reasoning item without its encrypted content is sent
        back by its id.
    :param encrypted_reasoning: Whether requests ask for the reasoning
        items' encrypted content (``include: ["reasoning.encrypted_content"]``),
        which lets the reasoning go back to the model with ``store`` False:
        ``"auto"`` (the default) asks unless the model is of a family that
        does not reason
        (:data:`~agentcore.providers.openai_responses.NO_ENCRYPTED_REASONING`) or the server
        refused it for the model once (the refused request is sent again
        without it, and the model's later requests go without it); ``"on"``
        always asks; ``"off"`` never does.
    :param cache: Whether requests carry ``prompt_cache_key``, as for
        :class:`~agentcore.providers.OpenAIProvider`: ``"auto"`` (the
        default) to OpenAI's own endpoint only, ``"on"`` to any server,
        ``"off"`` never.
    :param prompt_cache_key: The key to send; by default each request's
        ``cache_key`` (the conversation it belongs to), when it has one.
    """

    api = codec.API_NAME
    """The ``api`` of the opaque items it returns and sends back: ``"openai-responses"``."""
    display_name = "OpenAI Responses"
    default_base_url = DEFAULT_BASE_URL
    base_url_env = "OPENAI_BASE_URL"
    api_key_env = "OPENAI_API_KEY"
    api_key_required = False
    path = "/responses"

    def __init__(
        self,
        model: str,
        *,
        store: bool = False,
        encrypted_reasoning: Literal["auto", "on", "off"] = "auto",
        cache: Literal["auto", "on", "off"] = "auto",
        prompt_cache_key: str | None = None,
        **options: Unpack[HttpOptions],
    ) -> None:
        cls = type(self).__name__
        BOOL.check(f"{cls}: store", store)
        one_of("auto", "on", "off").check(f"{cls}: encrypted_reasoning", encrypted_reasoning)
        one_of("auto", "on", "off").check(f"{cls}: cache", cache)
        _CACHE_KEY.check(f"{cls}: prompt_cache_key", prompt_cache_key)
        self._store = store
        self._encrypted_reasoning = encrypted_reasoning
        self._refused: set[str] = set()
        self._cache = cache
        self._prompt_cache_key = prompt_cache_key
        super().__init__(model, **options)

    @property
    def store(self) -> bool:
        """Whether requests ask OpenAI to keep the response (``store``)."""
        return self._store

    def asks_encrypted_reasoning(self, model: str) -> bool:
        """Whether a request to ``model`` asks for the encrypted reasoning now."""
        if self._encrypted_reasoning != "auto":
            return self._encrypted_reasoning == "on"
        return may_reason(model) and model.lower() not in self._refused

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """Send ``request`` and return the whole reply."""
        try:
            return await super().complete(request)
        except BadRequestError as exc:
            if not self._refused_reasoning(exc, request.model or self.model):
                raise
        return await super().complete(request)

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` and yield the reply as it arrives, ending with ResponseComplete."""
        yielded = False
        try:
            async with aclosing(self._base_stream(request)) as events:
                async for event in events:
                    yielded = True
                    yield event
            return
        except BadRequestError as exc:
            # A refusal comes as the answer's status, before any event.
            if yielded or not self._refused_reasoning(exc, request.model or self.model):
                raise
        async with aclosing(self._base_stream(request)) as events:
            async for event in events:
                yield event

    def _base_stream(self, request: LlmRequest) -> AsyncGenerator[StreamEvent, None]:
        """The base class's stream of ``request``, typed as the generator it is (to close it)."""
        return cast("AsyncGenerator[StreamEvent, None]", super().stream(request))

    def _refused_reasoning(self, error: BadRequestError, model: str) -> bool:
        """Whether ``error`` refused the encrypted reasoning "auto" asked for (now learned)."""
        if self._encrypted_reasoning != "auto" or not self.asks_encrypted_reasoning(model):
            return False
        if _REFUSAL not in str(error).lower():
            return False
        self._refused.add(model.lower())
        logger.info(
            "the %s refuses encrypted reasoning for %r: its requests go without it",
            self._api.label,
            model,
        )
        return True

    def _auth_headers(self, secret: Secret | None) -> dict[str, str]:
        return {} if secret is None else {"authorization": f"Bearer {secret.reveal()}"}

    def _encode_request(self, request: LlmRequest, *, model: str, stream: bool) -> dict[str, Any]:
        body = codec.encode_request(
            request,
            model=model,
            stream=stream,
            store=self._store,
            include_reasoning=self.asks_encrypted_reasoning(model),
        )
        sends_key = self._cache == "on" or (
            self._cache == "auto" and self.base_url == self.default_base_url
        )
        key = self._prompt_cache_key or request.cache_key
        if sends_key and key:
            body["prompt_cache_key"] = key
        return body

    def _decode_response(
        self, data: Any, *, requested_model: str, request: LlmRequest
    ) -> LlmResponse:
        if isinstance(data, dict) and data.get("status") == "failed":
            raise self._failed(data)
        return codec.decode_response(data, requested_model=requested_model)

    def _failed(self, data: dict[str, Any]) -> LlmError:
        """The error of a response whose ``status`` is ``failed`` (its ``error`` says why)."""
        raw = data.get("error")
        error = raw if isinstance(raw, dict) else {}
        code = error.get("code") if isinstance(error.get("code"), str) else None
        message = error.get("message") if isinstance(error.get("message"), str) else str(raw)
        details = ServerError(message=f"the response failed: {message}", code=code, error=error)
        status = ERROR_TYPE_STATUS.get(code or "", 500)
        failure = error_for_status(self._api.label, status, details, key_env=self.api_key_env)
        failure.status_code = None  # The HTTP status was 200.
        return failure

    def _new_decoder(self, requested_model: str, request: LlmRequest) -> StreamDecoder[StreamEvent]:
        return ResponsesStreamDecoder(self._api, requested_model)
