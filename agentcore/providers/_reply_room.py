"""The ``max_tokens`` of an API that requires one: the room the window leaves, not a constant.

OpenAI-compatible servers take a request without ``max_tokens`` and let the
reply use what the window leaves. Anthropic's Messages API requires the
field, so a fixed default (4,096) asks for more than a small window holds
and every turn is refused. :class:`ReplyRoom` sends, for a request that
gives no ``max_tokens``:

- the default, when the model's window is unknown or leaves room for it;
- what the window leaves after the request's local count (with a margin),
  when that is less than the default;
- after a refusal for length that gives the figures (``X + Y > L``), once,
  exactly ``L - X``; the window ``L`` and how the server's count ``X``
  compares with the local one are learned for the model, so later requests
  are sized before they are sent.

A request's own ``max_tokens`` is always sent as it is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs

from agentcore.errors import ContextWindowExceededError
from agentcore.llm import LlmRequest
from agentcore.providers.windows import KNOWN_CONTEXT_WINDOWS, known_context_window
from agentcore.tokens import get_token_counter

COUNT_MARGIN = 0.1
"""Share added to the local count of a request: servers count with their own tokenizer."""

MIN_REPLY_ROOM = 16
"""Below this many tokens left by the local count, the default is sent and the server judges."""


class ReplyRoom:
    """Chooses the ``max_tokens`` of each request from the model's window.

    :param default: Sent when the window is unknown or leaves room for it.
    :param windows: The provider's ``context_windows`` (lower-cased prefixes),
        consulted before :data:`~agentcore.providers.windows.KNOWN_CONTEXT_WINDOWS`.
    """

    def __init__(self, default: int, windows: Mapping[str, int]) -> None:
        self._default = default
        self._windows = {**KNOWN_CONTEXT_WINDOWS, **windows}
        self._learned: dict[str, int] = {}
        self._ratios: dict[str, float] = {}

    def window(self, model: str) -> int | None:
        """The window of ``model``: learned from a refusal, else given, else known."""
        learned = self._learned.get(model.lower())
        if learned is not None:
            return learned
        return known_context_window(model, self._windows)

    async def sized(self, request: LlmRequest, model: str) -> LlmRequest:
        """``request`` with the ``max_tokens`` to send (its own when it has one)."""
        if request.max_tokens is not None:
            return request
        return attrs.evolve(request, max_tokens=await self._room(request, model))

    async def after_refusal(
        self, request: LlmRequest, sent: LlmRequest, error: ContextWindowExceededError, model: str
    ) -> LlmRequest | None:
        """The request to send once more after ``error`` refused ``sent``, or None.

        Only a request whose ``max_tokens`` was chosen here is sized again,
        and only when the server's figures show its input fits: the reply
        then gets exactly what the window leaves.
        """
        limit, prompt = error.limit_tokens, error.prompt_tokens
        key = model.lower()
        if limit is not None and limit > 0:
            self._learned[key] = limit
        if request.max_tokens is not None or limit is None or prompt is None:
            return None
        counted = await _count(request, model)
        if counted > 0:
            self._ratios[key] = max(self._ratios.get(key, 1.0), prompt / counted)
        room = limit - prompt
        if room < 1 or sent.max_tokens is None or room >= sent.max_tokens:
            return None
        return attrs.evolve(request, max_tokens=room)

    async def _room(self, request: LlmRequest, model: str) -> int:
        window = self.window(model)
        if window is None:
            return self._default
        ratio = self._ratios.get(model.lower(), 1.0)
        counted = await _count(request, model)
        room = window - math.ceil(counted * ratio * (1 + COUNT_MARGIN))
        if room < MIN_REPLY_ROOM:
            return self._default
        return min(self._default, room)


async def _count(request: LlmRequest, model: str) -> int:
    """The local count of ``request``'s messages and tools (kept counts are reused)."""
    counter = get_token_counter(model)
    counted = await counter.count_messages_async(request.messages)
    return counted + counter.count_tools(request.tools)
