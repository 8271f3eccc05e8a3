"""Test helpers for agentcore users and plugin authors.

:class:`MockProvider` is a deterministic :class:`~agentcore.llm.LlmProvider`:
script its replies, run your agent or plugin against it, then inspect
``provider.calls``.
"""

from __future__ import annotations

import asyncio
import types
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterable

from agentcore.hookspecs import hookimpl
from agentcore.llm import (
    LlmRequest,
    LlmResponse,
    ResponseComplete,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)
from agentcore.messages import Message
from agentcore.tokens import count_text_tokens, count_tokens
from agentcore.usage import Usage

ScriptItem = str | LlmResponse | BaseException
"""One scripted reply: text, a whole response, or an exception to raise."""

Responder = Callable[[LlmRequest], ScriptItem | Awaitable[ScriptItem]]
"""A function that computes the reply to a request (it may be async)."""


class MockProviderExhaustedError(AssertionError):
    """A :class:`MockProvider` was called more often than it was scripted."""


class MockProvider:
    """A scripted, offline LLM provider.

    Give either ``script``, a list of replies served in order (a ``str``
    becomes an assistant text reply, an :class:`LlmResponse` is returned as
    is, an exception instance is raised), or ``responder``, a function of the
    request. ``usage`` sets the usage reported for every reply that does not
    carry its own; by default it is the counted size of the request and of
    the reply, so contexts grow as they would with a real model. ``delay``
    seconds are awaited before each reply. Streams chunk the reply text into
    pieces of ``chunk_size`` characters.

    Every request is recorded in :attr:`calls`.
    """

    def __init__(
        self,
        script: Iterable[ScriptItem] | None = None,
        *,
        responder: Responder | None = None,
        usage: Usage | None = None,
        delay: float = 0.0,
        chunk_size: int = 8,
        model: str | None = None,
    ) -> None:
        if script is not None and responder is not None:
            raise ValueError("MockProvider takes a script or a responder, not both")
        if chunk_size <= 0:
            raise ValueError("chunk_size must be positive")
        self._script = list(script or ()) if responder is None else None
        self._responder = responder
        self._usage = usage
        self._delay = delay
        self._chunk_size = chunk_size
        self.model = model
        self.calls: list[LlmRequest] = []
        """Every request received, in order."""

    @property
    def remaining(self) -> int | None:
        """How many scripted replies are left (None with a responder)."""
        return None if self._script is None else len(self._script)

    def calls_for(self, purpose: str) -> list[LlmRequest]:
        """The recorded requests whose purpose is ``purpose``."""
        return [call for call in self.calls if call.purpose == purpose]

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """Record ``request`` and return the next scripted reply."""
        self.calls.append(request)
        if self._delay:
            await asyncio.sleep(self._delay)
        item = await self._next_item(request)
        if isinstance(item, BaseException):
            raise item
        response = item if isinstance(item, LlmResponse) else LlmResponse(Message.assistant(item))
        if response.usage is None:
            response = LlmResponse(
                response.message,
                self._usage or self._counted_usage(request, response.message),
                response.stop_reason,
                response.model or request.model or self.model,
            )
        return response

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """Like :meth:`complete`, but yield the text in chunks, then the tool calls."""
        response = await self.complete(request)
        text = response.message.text
        for start in range(0, len(text), self._chunk_size):
            yield TextDelta(text[start : start + self._chunk_size])
            await asyncio.sleep(0)
        for call in response.message.tool_calls:
            yield ToolCallDelta(call)
        yield ResponseComplete(response)

    async def _next_item(self, request: LlmRequest) -> ScriptItem:
        if self._responder is not None:
            produced = self._responder(request)
            if isinstance(produced, Awaitable):
                return await produced
            return produced
        assert self._script is not None
        if not self._script:
            raise MockProviderExhaustedError(
                f"MockProvider got call {len(self.calls)} ({request.purpose!r}) "
                "but its script is used up"
            )
        return self._script.pop(0)

    def _counted_usage(self, request: LlmRequest, reply: Message) -> Usage:
        model = request.model or self.model
        input_tokens = count_tokens(request.messages, model)
        output_tokens = (
            count_tokens([reply], model)
            if reply.tool_calls
            else count_text_tokens(reply.text, model)
        )
        return Usage(input_tokens, output_tokens)


def wrapper_plugin(hook_names: Iterable[str], fired: list[str]) -> object:
    """A plugin with one ``wrapper=True`` implementation of each hook in ``hook_names``.

    Each wrapper appends its hook's name to ``fired`` when the hook runs and
    passes the result through unchanged: register it (``AgentBuilder().plugin(...)``)
    to see which hooks an operation fires, wrappers included.
    """

    def wrap(name: str) -> Callable[[], Generator[None, object, object]]:
        def wrapper() -> Generator[None, object, object]:
            fired.append(name)
            return (yield)

        marked: Callable[[], Generator[None, object, object]] = hookimpl(
            wrapper=True, specname=name
        )(wrapper)
        return marked

    return types.SimpleNamespace(**{f"wrap_{name}": wrap(name) for name in hook_names})
