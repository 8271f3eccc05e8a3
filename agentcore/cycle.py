"""One model turn: call the provider, run the tools it asks for, call it again.

:class:`LlmCycle` holds the request settings and runs the loop;
:class:`CycleResult` is what a cycle produced, and :class:`CycleStream`
streams a cycle's events.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import attrs
from attrs import define, field, frozen

from agentcore.errors import (
    AgentCoreError,
    ConfigError,
    ContextWindowExceededError,
    MalformedResponseError,
)
from agentcore.llm import (
    CACHE_KEY,
    MAX_TOKENS,
    TEMPERATURE,
    LlmProvider,
    LlmRequest,
    LlmResponse,
    ResponseComplete,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
    is_llm_provider,
    stop_tuple,
)
from agentcore.messages import Message, ToolUseBlock
from agentcore.output import TOOL_CHOICE, OutputSpec, output_spec
from agentcore.tools import ToolCallHooks, ToolRegistry
from agentcore.usage import NO_USAGE, Usage
from agentcore.validators import POSITIVE_INT, STR


@frozen
class CycleResult:
    """What one cycle produced.

    ``new_messages`` holds every assistant message and tool result message of
    the cycle, in order; ``response`` is the last provider reply; ``usage``
    sums every provider call (a call that reported no usage counts as zero);
    ``calls`` is the number of provider calls. ``round_limit_reached`` is
    True when the tool loop stopped at its round limit, in which case the
    last assistant message's tool calls were answered with error results
    and never run.
    """

    new_messages: tuple[Message, ...]
    response: LlmResponse
    usage: Usage = field(factory=Usage)
    calls: int = 1
    round_limit_reached: bool = False

    @property
    def final_message(self) -> Message:
        """The last assistant message: the message of :attr:`response`."""
        return self.response.message


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


def round_limit_text(limit: int) -> str:
    """Return the error text that answers a tool call refused by the round limit."""
    return f"tool round limit ({limit}) reached; the call was not run"


_MODEL = STR.or_none()
_PURPOSE = STR.where(bool, "a non-empty str")


# The fields :meth:`LlmCycle.request` sets, in the class's order. A request class that
# gains a field is built through its constructor instead.
_REQUEST_FIELDS_KNOWN = tuple(f.name for f in attrs.fields(LlmRequest)) == (
    "messages",
    "tools",
    "model",
    "max_tokens",
    "purpose",
    "temperature",
    "stop",
    "cache_key",
    "tool_choice",
    "output",
)
_new = object.__new__
_set = object.__setattr__


def _check_provider(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not is_llm_provider(value):
        raise ConfigError(
            f"provider must implement LlmProvider (complete and stream), got {value!r}"
        )


@define
class _Progress:
    """The growing state of one cycle."""

    history: list[Message]
    new_messages: list[Message] = field(factory=list)
    usage: Usage = NO_USAGE
    calls: int = 0
    rounds: int = 0

    def add_response(self, response: LlmResponse) -> None:
        self.calls += 1
        if response.usage is not None:
            self.usage = self.usage + response.usage
        self.add(response.message)

    def add(self, message: Message) -> None:
        self.history.append(message)
        self.new_messages.append(message)

    async def refresh(self, prepare: PrepareCall | None) -> Sequence[Message]:
        """The messages of the next request, as ``prepare`` makes them when given.

        A tuple from ``prepare`` is used as it is (the request keeps it: no copy);
        any other sequence is copied, since its maker may change it later.
        """
        if prepare is not None:
            messages = await prepare(tuple(self.new_messages))
            return messages if type(messages) is tuple else tuple(messages)
        return self.history

    def result(self, response: LlmResponse, *, round_limit_reached: bool = False) -> CycleResult:
        return CycleResult(
            tuple(self.new_messages),
            response,
            self.usage,
            self.calls,
            round_limit_reached,
        )


PrepareCall = Callable[[Sequence[Message]], Awaitable[Sequence[Message]]]
"""Called before each provider call with the messages the cycle has added so far;
returns every message of the request: the context, then those added messages
(which it may shorten for the request; the cycle's result keeps them whole)."""

OverflowCall = Callable[
    [ContextWindowExceededError, Sequence[Message]], Awaitable[Sequence[Message]]
]
"""Called when the provider refused a request as too long for its window, with
the error and the messages the cycle has added so far; returns the messages of
the one retry, like :data:`PrepareCall`."""


def _refuse(calls: Sequence[ToolUseBlock], limit: int) -> list[Message]:
    text = round_limit_text(limit)
    return [Message.tool_result(call.id, text, is_error=True) for call in calls]


@frozen
class LlmCycle:
    """Runs model calls, and the tool loop, with fixed request settings.

    ``model`` overrides the provider's default model, ``max_tokens`` caps
    each reply, ``temperature`` and ``stop`` are sent when set, ``purpose``
    labels every request (``"turn"`` for a user's turn). ``max_tool_rounds``
    bounds :meth:`submit_with_tools`: after that many rounds of tool
    execution, tool calls are answered with error results instead of being
    run. ``prepare``, when given, is awaited before every provider call of the
    tool loop with the messages the cycle has added so far, and returns every
    message of the request (see :data:`PrepareCall`): it lets the caller
    shrink the context between rounds. ``cache_key`` goes on every request
    (:attr:`LlmRequest.cache_key`: a provider that routes prompt caches by a
    key sends it). ``on_overflow``, when given, answers a
    :class:`~agentcore.errors.ContextWindowExceededError` from the provider
    (raised before any reply event) with the messages of exactly one retry of
    that call; a second refusal propagates. ``tool_hooks``, when given, are
    awaited around every tool call (see :meth:`ToolRegistry.call`).
    ``tool_choice`` (see :attr:`LlmRequest.tool_choice`) goes on the first
    provider call; ``"required"`` and a tool's name then give way to the
    provider's default (``"auto"``), so the tool loop can end, while
    ``"none"`` and ``"auto"`` stay on every call. ``output`` (an
    :class:`~agentcore.output.OutputSpec`, a class or a JSON schema dict)
    goes on every call: the final reply is JSON of its schema. Invalid
    settings raise :class:`~agentcore.errors.ConfigError`.
    """

    provider: LlmProvider = field(validator=_check_provider)
    model: str | None = field(default=None, kw_only=True, validator=_MODEL)
    max_tokens: int | None = field(default=None, kw_only=True, validator=MAX_TOKENS)
    temperature: float | None = field(default=None, kw_only=True, validator=TEMPERATURE)
    stop: Sequence[str] = field(default=(), kw_only=True, converter=stop_tuple)
    purpose: str = field(default="turn", kw_only=True, validator=_PURPOSE)
    max_tool_rounds: int = field(default=8, kw_only=True, validator=POSITIVE_INT)
    prepare: PrepareCall | None = field(default=None, kw_only=True)
    tool_hooks: ToolCallHooks | None = field(default=None, kw_only=True)
    on_overflow: OverflowCall | None = field(default=None, kw_only=True)
    cache_key: str | None = field(default=None, kw_only=True, validator=CACHE_KEY)
    tool_choice: str | None = field(default=None, kw_only=True, validator=TOOL_CHOICE)
    output: OutputSpec[Any] | None = field(default=None, kw_only=True, converter=output_spec)

    def with_calls(
        self,
        provider: LlmProvider,
        *,
        prepare: PrepareCall | None,
        on_overflow: OverflowCall | None,
        tool_hooks: ToolCallHooks | None,
    ) -> LlmCycle:
        """A copy with another provider, ``prepare``, ``on_overflow`` and ``tool_hooks``.

        The other settings were checked when this cycle was made and are not checked
        again, as ``attrs.evolve`` would; ``provider`` is. For a caller that runs
        many cycles with the same settings (a session's turns, each with callbacks
        of its own): it makes one cycle and copies it for each.
        """
        _check_provider(self, _PROVIDER_FIELD, provider)
        cycle: LlmCycle = _new(LlmCycle)
        for name in _SETTING_FIELDS:
            _set(cycle, name, getattr(self, name))
        _set(cycle, "provider", provider)
        _set(cycle, "prepare", prepare)
        _set(cycle, "on_overflow", on_overflow)
        _set(cycle, "tool_hooks", tool_hooks)
        return cycle

    def request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] = (), *, first: bool = True
    ) -> LlmRequest:
        """Return the request this cycle sends for ``messages`` and ``tools``.

        ``first`` tells the cycle's first provider call from the later
        ones of its tool loop (see :attr:`tool_choice`).
        """
        choice = self.tool_choice
        if not first and choice not in (None, "auto", "none"):
            choice = None
        if _REQUEST_FIELDS_KNOWN:
            # Every setting was checked when the cycle was made: the request is built
            # without running the validators again (a turn makes one or more).
            request: LlmRequest = _new(LlmRequest)
            for name, value in (
                ("messages", tuple(messages)),
                ("tools", tuple(tools)),
                ("model", self.model),
                ("max_tokens", self.max_tokens),
                ("purpose", self.purpose),
                ("temperature", self.temperature),
                ("stop", self.stop),
                ("cache_key", self.cache_key),
                ("tool_choice", choice),
                ("output", self.output),
            ):
                _set(request, name, value)
            return request
        return LlmRequest(
            messages,
            tools,
            self.model,
            self.max_tokens,
            self.purpose,
            temperature=self.temperature,
            stop=self.stop,
            cache_key=self.cache_key,
            tool_choice=choice,
            output=self.output,
        )

    async def _complete(
        self, history: Sequence[Message], tools: Sequence[ToolSpec], added: Sequence[Message]
    ) -> LlmResponse:
        """One provider call, retried once through ``on_overflow`` when it overflows."""
        first = not added
        try:
            return await self.provider.complete(self.request(history, tools, first=first))
        except ContextWindowExceededError as exc:
            if self.on_overflow is None:
                raise
            retry = await self.on_overflow(exc, tuple(added))
        return await self.provider.complete(self.request(retry, tools, first=first))

    async def submit_messages(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()
    ) -> CycleResult:
        """Make exactly one provider call and return its reply; no tool runs.

        ``tools`` are offered to the model; tool calls in the reply are left
        for the caller to answer. Provider errors propagate.
        """
        progress = _Progress(list(messages))
        history = await progress.refresh(self.prepare)
        response = await self._complete(history, tools, progress.new_messages)
        progress.add_response(response)
        return progress.result(response)

    async def submit_with_tools(
        self, messages: Sequence[Message], registry: ToolRegistry
    ) -> CycleResult:
        """Call the model with the tools of ``registry`` and run the tools it asks for.

        While a reply holds tool calls, the calls are run (concurrently, see
        :meth:`ToolRegistry.call_all`), their results are appended after the
        assistant message in call order, and the model is called again with
        the grown conversation. Once ``max_tool_rounds`` rounds have run, the
        next reply's tool calls are answered with error results saying the
        limit was reached (so no call is ever left unanswered), no further
        provider call is made, and the result has ``round_limit_reached``
        set; its :attr:`CycleResult.final_message` is that last assistant
        message. Provider errors propagate and nothing is returned.
        """
        progress = _Progress(list(messages))
        specs = registry.specs()
        while True:
            history = await progress.refresh(self.prepare)
            response = await self._complete(history, specs, progress.new_messages)
            progress.add_response(response)
            calls = response.message.tool_calls
            if not calls:
                return progress.result(response)
            if progress.rounds >= self.max_tool_rounds:
                for message in _refuse(calls, self.max_tool_rounds):
                    progress.add(message)
                return progress.result(response, round_limit_reached=True)
            progress.rounds += 1
            for message in await registry.call_all(calls, hooks=self.tool_hooks):
                progress.add(message)

    def stream_with_tools(
        self, messages: Sequence[Message], registry: ToolRegistry | None = None
    ) -> CycleStream:
        """Stream the tool loop of :meth:`submit_with_tools`.

        Nothing happens until the returned :class:`CycleStream` is iterated.
        Without a ``registry`` no tools are offered and the cycle is a single
        streamed provider call.
        """
        return CycleStream(self, messages, registry)


_CYCLE_FIELDS = tuple(field.name for field in attrs.fields(LlmCycle))
"""Every field of :class:`LlmCycle`, copied by :meth:`LlmCycle.with_calls`."""
_PROVIDER_FIELD = attrs.fields(LlmCycle).provider
_SETTING_FIELDS = tuple(
    name
    for name in _CYCLE_FIELDS
    if name not in ("provider", "prepare", "on_overflow", "tool_hooks")
)
"""The fields :meth:`LlmCycle.with_calls` copies: every one but those it is given."""


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
        self, cycle: LlmCycle, messages: Sequence[Message], registry: ToolRegistry | None
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
        progress = _Progress(history)
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
                for call, message in zip(calls, _refuse(calls, cycle.max_tool_rounds), strict=True):
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
    cycle: LlmCycle,
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
    cycle: LlmCycle, history: Sequence[Message], specs: Sequence[ToolSpec], first: bool
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
