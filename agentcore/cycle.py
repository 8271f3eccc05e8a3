"""One model turn: call the provider, run the tools it asks for, call it again.

:class:`LlmCycle` holds the request settings and runs the loop;
:class:`CycleResult` is what a cycle produced, and :class:`CycleStream`
streams a cycle's events. The progress a cycle grows and its result are
written in :mod:`agentcore._cycle_progress`, the streamed loop in
:mod:`agentcore._cycle_stream`; their public names are importable from here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import attrs
from attrs import field, frozen

from agentcore._cycle_progress import (
    CycleResult,
    Overflow,
    Prepare,
    Progress,
    refused,
    round_limit_text,
)
from agentcore._cycle_stream import (
    CycleEvent,
    CycleStream,
    StreamNotFinishedError,
    ToolResultEvent,
)
from agentcore.errors import ConfigError, ContextWindowExceededError
from agentcore.llm import (
    CACHE_KEY,
    MAX_TOKENS,
    TEMPERATURE,
    LlmProvider,
    LlmRequest,
    LlmResponse,
    ToolSpec,
    is_llm_provider,
    stop_tuple,
)
from agentcore.messages import Message
from agentcore.output import TOOL_CHOICE, OutputSpec, output_spec
from agentcore.tools import ToolCallHooks, ToolRegistry
from agentcore.validators import POSITIVE_INT, STR, Rule

__all__ = [
    "CycleEvent",
    "CycleResult",
    "CycleStream",
    "LlmCycle",
    "OverflowCall",
    "PrepareCall",
    "StreamNotFinishedError",
    "ToolResultEvent",
    "round_limit_text",
]

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
    "extra_body",
    "cache_newest",
)
_new = object.__new__
_set = object.__setattr__


def _check_provider(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not is_llm_provider(value):
        raise ConfigError(
            f"provider must implement LlmProvider (complete and stream), got {value!r}"
        )


PrepareCall = Prepare
"""Called before each provider call with the messages the cycle has added so far;
returns every message of the request: the context, then those added messages
(which it may shorten for the request; the cycle's result keeps them whole)."""

RequestBody = Callable[[], Mapping[str, Any]]
"""Called as each request is made; returns the JSON fields added to its body."""

_NO_FIELDS: Mapping[str, Any] = MappingProxyType({})

CacheNewest = Callable[[], bool]
"""Called as each request is made; returns its :attr:`LlmRequest.cache_newest`."""

_CACHE_NEWEST = Rule(
    "True, False or a callable returning one",
    lambda value: isinstance(value, bool) or callable(value),
)

OverflowCall = Overflow
"""Called when the provider refused a request as too long for its window, with
the error and the messages the cycle has added so far; returns the messages of
the one retry, like :data:`PrepareCall`."""


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
    ``request_body``, when given, is called as each request is made: the
    fields it returns go on that request (:attr:`LlmRequest.extra_body`).
    ``tool_choice`` (see :attr:`LlmRequest.tool_choice`) goes on the first
    provider call; ``"required"`` and a tool's name then give way to the
    provider's default (``"auto"``), so the tool loop can end, while
    ``"none"`` and ``"auto"`` stay on every call. ``output`` (an
    :class:`~agentcore.output.OutputSpec`, a class or a JSON schema dict)
    goes on every call: the final reply is JSON of its schema.
    ``cache_newest`` (see :attr:`LlmRequest.cache_newest`) is a bool for
    every request, or a callable asked as each request is made (a turn's
    hooks decide it call by call). Invalid settings raise
    :class:`~agentcore.errors.ConfigError`.
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
    request_body: RequestBody | None = field(default=None, kw_only=True)
    cache_newest: bool | CacheNewest = field(default=True, kw_only=True, validator=_CACHE_NEWEST)

    def with_calls(
        self,
        provider: LlmProvider,
        *,
        prepare: PrepareCall | None,
        on_overflow: OverflowCall | None,
        tool_hooks: ToolCallHooks | None,
        request_body: RequestBody | None = None,
        cache_newest: bool | CacheNewest | None = None,
    ) -> LlmCycle:
        """A copy with another provider and other per-turn callbacks.

        ``prepare``, ``on_overflow``, ``tool_hooks`` and ``request_body`` are
        set as given; ``cache_newest`` when given (None keeps this cycle's).

        The other settings were checked when this cycle was made and are not checked
        again, as ``attrs.evolve`` would; ``provider`` is. For a caller that runs
        many cycles with the same settings (a session's turns, each with callbacks
        of its own): it makes one cycle and copies it for each.
        """
        _check_provider(self, _PROVIDER_FIELD, provider)
        cycle: LlmCycle = _new(LlmCycle)
        if _SETTINGS_KNOWN:  # the settings set one by one (a session's every turn makes one)
            _set(cycle, "model", self.model)
            _set(cycle, "max_tokens", self.max_tokens)
            _set(cycle, "temperature", self.temperature)
            _set(cycle, "stop", self.stop)
            _set(cycle, "purpose", self.purpose)
            _set(cycle, "max_tool_rounds", self.max_tool_rounds)
            _set(cycle, "cache_key", self.cache_key)
            _set(cycle, "tool_choice", self.tool_choice)
            _set(cycle, "output", self.output)
        else:  # pragma: no cover - a cycle with other settings
            for name in _SETTING_FIELDS:
                _set(cycle, name, getattr(self, name))
        _set(cycle, "provider", provider)
        _set(cycle, "prepare", prepare)
        _set(cycle, "on_overflow", on_overflow)
        _set(cycle, "tool_hooks", tool_hooks)
        _set(cycle, "request_body", request_body)
        if cache_newest is not None:
            _CACHE_NEWEST(cycle, _CACHE_NEWEST_FIELD, cache_newest)
        _set(cycle, "cache_newest", self.cache_newest if cache_newest is None else cache_newest)
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
        body = _NO_FIELDS if self.request_body is None else dict(self.request_body())
        newest = self.cache_newest
        cache_newest = newest if isinstance(newest, bool) else bool(newest())
        if _REQUEST_FIELDS_KNOWN:
            # Every setting was checked when the cycle was made: the request is built
            # without running the validators again (a turn makes one or more).
            request: LlmRequest = _new(LlmRequest)
            _set(request, "messages", tuple(messages))
            _set(request, "tools", tuple(tools))
            _set(request, "model", self.model)
            _set(request, "max_tokens", self.max_tokens)
            _set(request, "purpose", self.purpose)
            _set(request, "temperature", self.temperature)
            _set(request, "stop", self.stop)
            _set(request, "cache_key", self.cache_key)
            _set(request, "tool_choice", choice)
            _set(request, "output", self.output)
            _set(request, "extra_body", body)
            _set(request, "cache_newest", cache_newest)
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
            extra_body=body,
            cache_newest=cache_newest,
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
        progress = Progress(list(messages))
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
        progress = Progress(list(messages))
        specs = registry.specs()
        while True:
            history = await progress.refresh(self.prepare)
            response = await self._complete(history, specs, progress.new_messages)
            progress.add_response(response)
            calls = response.message.tool_calls
            if not calls:
                return progress.result(response)
            if progress.rounds >= self.max_tool_rounds:
                for message in refused(calls, self.max_tool_rounds):
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
_CACHE_NEWEST_FIELD = attrs.fields(LlmCycle).cache_newest
_SETTING_FIELDS = tuple(
    name
    for name in _CYCLE_FIELDS
    if name
    not in ("provider", "prepare", "on_overflow", "tool_hooks", "request_body", "cache_newest")
)
"""The fields :meth:`LlmCycle.with_calls` copies: every one but those it is given."""
_SETTINGS_KNOWN = _SETTING_FIELDS == (
    "model",
    "max_tokens",
    "temperature",
    "stop",
    "purpose",
    "max_tool_rounds",
    "cache_key",
    "tool_choice",
    "output",
)
"""Whether the settings are the ones :meth:`LlmCycle.with_calls` sets by name."""
