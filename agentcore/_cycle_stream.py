"""A streamed model cycle: :class:`CycleStream`, the events it yields, and the streams under it.

:meth:`agentcore.cycle.LlmCycle.stream_with_tools` makes a :class:`CycleStream`;
it runs the cycle's tool loop round by round, yielding each provider stream's
events and each tool result as its call finishes. The public names are
importable from :mod:`agentcore.cycle`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Protocol

from attrs import frozen

from agentcore._cycle_progress import CycleResult, Overflow, Prepare, Progress, refused
from agentcore.errors import AgentCoreError, ContextWindowExceededError, MalformedResponseError
from agentcore.llm import (
    LlmProvider,
    LlmRequest,
    ResponseComplete,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from agentcore.messages import Message, ToolUseBlock
from agentcore.tools import ToolCallHooks, ToolRegistry


@frozen
class ToolResultEvent:
    """A streamed event: a tool call has been answered with ``message``.

    ``call`` is the tool call it answers.
    """

    message: Message
    call: ToolUseBlock | None = None

    @property
    def text(self) -> str:
        """Tool results carry no reply text: always ``""``."""
        return ""


CycleEvent = TextDelta | ToolCallDelta | ToolResultEvent | ResponseComplete
"""An event of a :class:`CycleStream`; every kind has a ``.text`` delta."""


class StreamNotFinishedError(AgentCoreError, RuntimeError):
    """:attr:`CycleStream.result` was read before the stream finished."""


class StreamedCycle(Protocol):
    """The settings a :class:`CycleStream` runs with: an :class:`~agentcore.cycle.LlmCycle`."""

    @property
    def provider(self) -> LlmProvider:
        """The provider the cycle streams from."""
        ...

    @property
    def prepare(self) -> Prepare | None:
        """Makes the messages of each request (see :data:`agentcore.cycle.PrepareCall`)."""
        ...

    @property
    def on_overflow(self) -> Overflow | None:
        """Makes the messages of a retry (see :data:`agentcore.cycle.OverflowCall`)."""
        ...

    @property
    def tool_hooks(self) -> ToolCallHooks | None:
        """Awaited around every tool call."""
        ...

    @property
    def max_tool_rounds(self) -> int:
        """The rounds of tool calls run before further calls are refused."""
        ...

    def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] = (), *, first: bool = True
    ) -> LlmRequest:
        """The request the cycle sends for ``messages`` and ``tools``."""
        ...


async def _answer(
    registry: ToolRegistry, calls: Sequence[ToolUseBlock], hooks: ToolCallHooks | None
) -> AsyncGenerator[tuple[int, Message], None]:
    """Yield ``(index, result)`` for each call as it finishes."""
    if not registry.concurrent or len(calls) == 1:
        for index, call in enumerate(calls):
            yield index, await registry.call(call, hooks=hooks)
        return
    tasks = [asyncio.ensure_future(registry.call(call, hooks=hooks)) for call in calls]
    try:
        pending: set[asyncio.Future[Message]] = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for index, task in enumerate(tasks):
                if task in done:
                    yield index, task.result()
    finally:
        for task in tasks:
            task.cancel()


class CycleStream:
    """The events of a streamed cycle, for ``async for``.

    Yields the :class:`~agentcore.llm.TextDelta` and
    :class:`~agentcore.llm.ToolCallDelta` events of every round, a
    :class:`ToolResultEvent` as each tool call is answered (in the order the
    calls finish; the results are stored in call order), and last the final
    round's :class:`~agentcore.llm.ResponseComplete`; the intermediate
    rounds' ``ResponseComplete`` events are not yielded. Once the final
    event has been yielded, :attr:`result` holds the :class:`CycleResult`.
    A provider stream that ends without ``ResponseComplete`` raises
    :class:`~agentcore.errors.MalformedResponseError`; provider errors
    propagate. Made by :meth:`LlmCycle.stream_with_tools`.
    """

    def __init__(
        self, cycle: StreamedCycle, messages: Sequence[Message], registry: ToolRegistry | None
    ) -> None:
        self._cycle = cycle
        self._registry = registry
        self._events = self._run(list(messages))
        self._result: CycleResult | None = None
        self._error: BaseException | None = None

    def __aiter__(self) -> AsyncIterator[CycleEvent]:
        return self

    async def __anext__(self) -> CycleEvent:
        return await self._events.__anext__()

    async def aclose(self) -> None:
        """Stop the stream early, closing the provider's stream and cancelling tools."""
        await self._events.aclose()

    async def __aenter__(self) -> CycleStream:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def result(self) -> CycleResult:
        """The cycle's result, once the final event has been yielded.

        Raises :class:`StreamNotFinishedError` before that.
        """
        if self._result is None:
            if self._error is not None:
                raise StreamNotFinishedError(
                    f"the stream stopped with {type(self._error).__name__} and has no result"
                ) from self._error
            raise StreamNotFinishedError(
                "the stream has not finished: iterate it to the end before reading .result"
            )
        return self._result

    async def _run(self, history: list[Message]) -> AsyncGenerator[CycleEvent, None]:
        try:
            async with contextlib.aclosing(self._rounds(history)) as rounds:
                async for event in rounds:
                    yield event
        except Exception as exc:
            self._error = exc
            raise

    async def _rounds(self, history: list[Message]) -> AsyncGenerator[CycleEvent, None]:
        cycle, registry = self._cycle, self._registry
        progress = Progress(history)
        specs = registry.specs() if registry is not None else []
        while True:
            complete: ResponseComplete | None = None
            request_messages = await progress.refresh(cycle.prepare)
            events = _provider_events_retried(cycle, request_messages, specs, progress.new_messages)
            async with contextlib.aclosing(events) as events:
                async for event in events:
                    if isinstance(event, ResponseComplete):
                        complete = event
                        break
                    yield event
            if complete is None:
                raise MalformedResponseError(
                    "the provider's stream ended without a ResponseComplete event"
                )
            response = complete.response
            progress.add_response(response)
            calls = response.message.tool_calls
            if not calls or registry is None:
                self._result = progress.result(response)
                yield complete
                return
            if progress.rounds >= cycle.max_tool_rounds:
                for call, message in zip(calls, refused(calls, cycle.max_tool_rounds), strict=True):
                    progress.add(message)
                    yield ToolResultEvent(message, call)
                self._result = progress.result(response, round_limit_reached=True)
                yield complete
                return
            progress.rounds += 1
            results: list[Message | None] = [None] * len(calls)
            async with contextlib.aclosing(_answer(registry, calls, cycle.tool_hooks)) as answers:
                async for index, message in answers:
                    results[index] = message
                    yield ToolResultEvent(message, calls[index])
            for answered in results:
                assert answered is not None
                progress.add(answered)


async def _provider_events_retried(
    cycle: StreamedCycle,
    history: Sequence[Message],
    specs: Sequence[ToolSpec],
    added: Sequence[Message],
) -> AsyncGenerator[StreamEvent, None]:
    """The events of one provider stream, retried once through ``on_overflow``.

    Only a refusal before the first event is retried: after that, the reply
    has started and the error propagates.
    """
    started, first = False, not added
    try:
        async with contextlib.aclosing(_provider_events(cycle, history, specs, first)) as events:
            async for event in events:
                started = True
                yield event
        return
    except ContextWindowExceededError as exc:
        if started or cycle.on_overflow is None:
            raise
        retry = await cycle.on_overflow(exc, tuple(added))
    async with contextlib.aclosing(_provider_events(cycle, retry, specs, first)) as events:
        async for event in events:
            yield event


async def _provider_events(
    cycle: StreamedCycle, history: Sequence[Message], specs: Sequence[ToolSpec], first: bool
) -> AsyncGenerator[StreamEvent, None]:
    """Yield the events of one provider stream, closing it when done."""
    stream = cycle.provider.stream(cycle.request(history, specs, first=first))
    try:
        async for event in stream:
            yield event
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
