"""Tools: Python callables a model may call, described by JSON schemas.

Register functions on a :class:`ToolRegistry`; it derives each tool's JSON
schema from the type hints and the docstring, hands the model the
:class:`~agentcore.llm.ToolSpec` list, and answers the model's tool calls
with tool result messages.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, overload

import attrs
from attrs import field, frozen

from agentcore._daemon_thread import start_daemon_thread
from agentcore._docstrings import parse_docstring
from agentcore._tool_results import (
    MAX_RESULT_CHARS,
    NotJsonError,
    Rendered,
    bounded,
    call_rendered,
    is_small,
    render_bounded,
)
from agentcore._tool_timeout import ToolTimedOutError, run_within
from agentcore._tool_types import ArgumentValueError
from agentcore.calls import ToolCallInfo
from agentcore.errors import ToolArgumentError, ToolError
from agentcore.llm import ToolSpec
from agentcore.messages import Message, ToolUseBlock
from agentcore.tool_schema import (
    NAME_PATTERN,
    Convert,
    argument_problem,
    check_explicit_schema,
    derive_parameters,
    describe_value,
    identity,
    is_async,
    unwrap,
)
from agentcore.validators import POSITIVE_NUMBER

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

_TIMEOUT = POSITIVE_NUMBER.or_none().named(
    "a positive, finite number of seconds or None (no limit)"
)

DEFAULT_TOOL_TIMEOUT = 60.0
"""Seconds a tool call may take when a :class:`ToolRegistry` is made without ``timeout``."""

DEFAULT_MAX_RESULT_CHARS = 100_000
"""Characters a tool result may hold when a :class:`ToolRegistry` is made without
``max_result_chars`` and the tool has no limit of its own.

About 25,000 tokens of English or JSON: a long file or web page fits whole,
and a result never takes more than a fifth of a 128,000-token window.
"""


@frozen
class Tool:
    """A Python callable a model may call.

    ``parameters`` is the JSON schema of the keyword arguments. Build tools
    with :meth:`from_function` or :meth:`ToolRegistry.register`.
    ``max_result_chars`` bounds this tool's results in characters (see
    :meth:`ToolRegistry.call`); None leaves it to the registry's limit.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any] = field(repr=False)
    _converters: Mapping[str, Convert] = field(factory=dict, repr=False, alias="converters")
    max_result_chars: int | None = field(default=None, validator=MAX_RESULT_CHARS, kw_only=True)
    _spec: ToolSpec = field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        # One spec per tool, so counts cached by spec (TokenCounter.count_tools) hit.
        object.__setattr__(self, "_spec", ToolSpec(self.name, self.description, self.parameters))

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        max_result_chars: int | None = None,
    ) -> Tool:
        """Describe ``func`` as a tool.

        ``name`` defaults to the function's name. The description defaults to
        the first paragraph of the docstring; parameter descriptions come from
        its ``Args:`` section (or from ``Annotated[X, "text"]``). The schema
        is derived from the type hints unless ``parameters`` gives one.
        Raises :class:`~agentcore.errors.ToolError` when the function cannot
        be described, and :class:`~agentcore.errors.ConfigError` for a
        ``max_result_chars`` that is not an int >= 256 or None.
        """
        MAX_RESULT_CHARS.check("max_result_chars", max_result_chars)
        if not callable(func):
            raise ToolError(f"a tool must be callable, got {func!r}")
        target = unwrap(func)
        tool_name = name if name is not None else getattr(target, "__name__", None)
        if not isinstance(tool_name, str) or not NAME_PATTERN.match(tool_name):
            raise ToolError(
                f"invalid tool name {tool_name!r} for {func!r}: use 1-64 letters, digits, "
                "'_' or '-' (pass name=)"
            )
        summary, docs = parse_docstring(inspect.getdoc(target))
        try:
            signature: inspect.Signature | None = inspect.signature(func)
        except (TypeError, ValueError) as exc:
            if parameters is None:
                raise ToolError(f"tool {tool_name!r}: cannot read its signature: {exc}") from exc
            signature = None
        converters: dict[str, Convert] = {}
        if parameters is not None:
            schema = check_explicit_schema(tool_name, func, parameters, signature)
        else:
            assert signature is not None
            try:
                hints = typing.get_type_hints(target, include_extras=True)
            except Exception as exc:
                raise ToolError(
                    f"tool {tool_name!r}: cannot resolve its type hints ({exc}); "
                    "define the types it names at module level"
                ) from exc
            schema, converters = derive_parameters(tool_name, signature, hints, docs)
        return cls(
            tool_name,
            description if description is not None else summary,
            schema,
            func,
            converters=converters,
            max_result_chars=max_result_chars,
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool as the model sees it (the same object on every read)."""
        return self._spec

    def check_arguments(self, arguments: object) -> str | None:
        """Why ``arguments`` do not fit the schema, or None when they do."""
        if not isinstance(arguments, Mapping):
            return f"the arguments must be a JSON object, got {describe_value(arguments)}"
        return argument_problem(arguments, self.parameters, "")

    def convert_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """``arguments`` (JSON values) converted to the annotated types.

        Enum members, floats, tuples, dates and datetimes (ISO 8601 strings),
        dataclasses, attrs classes, TypedDicts and pydantic models. Call
        :meth:`check_arguments` first. Raises
        :class:`~agentcore.errors.ToolArgumentError` naming the parameter
        when a value fits the schema but not its type (``"2026-02-30"`` for a
        date, say).
        """
        kwargs: dict[str, Any] = {}
        for key, value in arguments.items():
            try:
                kwargs[key] = self._converters.get(key, identity)(value)
            except ArgumentValueError as exc:
                raise ToolArgumentError(f"argument {key!r}: {exc}") from None
        return kwargs

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        """Call the function with ``arguments`` and return what it returns.

        Arguments are converted to the annotated types first (see
        :meth:`convert_arguments`). A synchronous function runs in a daemon
        thread (with the caller's context variables) so it does not block the
        event loop, and a call that never returns cannot keep the process
        from exiting. Exceptions propagate; call :meth:`check_arguments`
        first. The result is returned as is, not bounded.
        """
        kwargs = self.convert_arguments(arguments)
        if is_async(self.function):
            return await self.function(**kwargs)
        result = await start_daemon_thread(_apply, self.function, kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def _text(self, kwargs: Mapping[str, Any], limit: int | None) -> str:
        """Call the function and return its result as bounded text (see :meth:`ToolRegistry.call`).

        A synchronous function's result is rendered and cut in its thread;
        an async function's result on the loop when it is small, else in a
        thread, which also frees it. Raises :class:`NotJsonError`.
        """
        if is_async(self.function):
            result = await self.function(**kwargs)
        else:
            outcome = await start_daemon_thread(call_rendered, self.function, kwargs, limit)
            if isinstance(outcome, Rendered):
                return outcome.text
            result = await outcome
            del outcome
        if isinstance(result, str) or result is None or is_small(result):
            return render_bounded(result, limit)
        pending = start_daemon_thread(render_bounded, result, limit)
        del result  # the thread holds the last reference: a large result is freed there
        return await pending


ToolCallHook = Callable[[ToolCallInfo], Awaitable[None]]
"""Called with a :class:`~agentcore.calls.ToolCallInfo`; its result is awaited."""


@frozen
class ToolCallHooks:
    """What :meth:`ToolRegistry.call` awaits around each call.

    ``before`` gets the call before it runs, ``after`` the finished call
    with its result or error and duration. A session passes hooks that fire
    the ``before_tool_call`` and ``after_tool_call`` plugin hooks.
    """

    before: ToolCallHook
    after: ToolCallHook


def _apply(func: Callable[..., Any], kwargs: Mapping[str, Any]) -> Any:
    return func(**kwargs)


class ToolRegistry:
    """The tools a model may call, and the code that answers its calls.

    Register callables with :meth:`register` or the :meth:`tool` decorator.
    :meth:`call` answers one tool call with a tool result message and never
    raises for a tool problem: unknown tools, bad arguments, failures and
    timeouts become error results the model can read.

    ``timeout`` bounds each call in seconds: :data:`DEFAULT_TOOL_TIMEOUT`
    (60 s) unless given; pass None explicitly for no limit. A timed-out call
    is answered with an error result that says so. A timed-out synchronous
    tool keeps running in its daemon thread, which does not keep the
    process from exiting; its result is dropped.
    ``max_result_chars`` bounds each result in characters:
    :data:`DEFAULT_MAX_RESULT_CHARS` (100,000) unless
    given, None for no limit; a tool registered with a limit of its own
    uses that one. A longer result keeps its head and tail around a notice
    saying how much was left out (see :meth:`call`).
    ``concurrent`` lets :meth:`call_all` run the calls of one assistant
    message at the same time; set it to False for tools that must run one
    after the other.
    """

    def __init__(
        self,
        *,
        timeout: float | None = DEFAULT_TOOL_TIMEOUT,
        concurrent: bool = True,
        max_result_chars: int | None = DEFAULT_MAX_RESULT_CHARS,
    ) -> None:
        self.timeout = _TIMEOUT.check("ToolRegistry timeout", timeout)
        """Seconds each call may take, or None."""
        self.max_result_chars = MAX_RESULT_CHARS.check(
            "ToolRegistry max_result_chars", max_result_chars
        )
        """Characters a result of a tool without a limit of its own may hold, or None."""
        self.concurrent = concurrent
        """Whether :meth:`call_all` runs calls concurrently."""
        self._tools: dict[str, Tool] = {}

    def register(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        max_result_chars: int | None = None,
    ) -> Tool:
        """Register ``func`` as a tool and return it.

        See :meth:`Tool.from_function` for the arguments; ``max_result_chars``
        bounds this tool's results instead of the registry's
        :attr:`max_result_chars` (None: the registry's). Raises
        :class:`~agentcore.errors.ToolError` for an invalid definition or a
        name already registered, :class:`~agentcore.errors.ConfigError` for
        a ``max_result_chars`` that is not an int >= 256 or None.
        """
        tool = Tool.from_function(
            func,
            name=name,
            description=description,
            parameters=parameters,
            max_result_chars=max_result_chars,
        )
        if tool.name in self._tools:
            raise ToolError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

    def with_tools(self, tools: Sequence[Tool]) -> ToolRegistry:
        """A new registry with this one's settings and tools, and ``tools`` besides.

        Raises :class:`~agentcore.errors.ToolError` for a name already taken.
        """
        registry = ToolRegistry(
            timeout=self.timeout,
            concurrent=self.concurrent,
            max_result_chars=self.max_result_chars,
        )
        registry._tools = dict(self._tools)
        for tool in tools:
            if tool.name in registry._tools:
                raise ToolError(f"a tool named {tool.name!r} is already registered")
            registry._tools[tool.name] = tool
        return registry

    @overload
    def tool(self, func: F, /) -> F: ...

    @overload
    def tool(
        self,
        func: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        max_result_chars: int | None = None,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        func: F | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        max_result_chars: int | None = None,
    ) -> F | Callable[[F], F]:
        """Register a function as a tool: ``@registry.tool`` or ``@registry.tool(name=...)``.

        Takes the arguments of :meth:`register`; the decorated function is
        returned unchanged.
        """
        MAX_RESULT_CHARS.check("max_result_chars", max_result_chars)

        def decorate(function: F) -> F:
            self.register(
                function,
                name=name,
                description=description,
                parameters=parameters,
                max_result_chars=max_result_chars,
            )
            return function

        return decorate if func is None else decorate(func)

    def specs(self) -> list[ToolSpec]:
        """Return the tools as the model sees them, in registration order."""
        return [tool.spec for tool in self._tools.values()]

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The registered tools, in registration order."""
        return tuple(self._tools.values())

    def get(self, name: str) -> Tool | None:
        """Return the tool called ``name``, or None."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(f"no tool named {name!r}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({list(self._tools)!r})"

    async def call(self, call: ToolUseBlock, *, hooks: ToolCallHooks | None = None) -> Message:
        """Run the tool call ``call`` and return its tool result message.

        Tool problems never raise: an unknown tool, arguments that do not fit
        the schema, an exception from the tool, a timeout or a result that
        cannot be turned into JSON give a result with ``is_error=True`` that
        says what went wrong. Cancellation propagates.

        A ``str`` result is sent as is, None as ``""``, anything else as JSON
        (turned into JSON off the event loop unless it is small). A text
        longer than the tool's limit (its ``max_result_chars``, else the
        registry's) is cut before anything else sees it, hooks, token
        counting and the store included: its head and tail are kept around
        a notice, inside the text, saying how many of how many characters
        were left out; the whole is at most the limit. Error texts are
        bounded the same way. ``hooks``, when given, are awaited before and after the call with a
        :class:`~agentcore.calls.ToolCallInfo` (also when it is cancelled).
        """
        info = ToolCallInfo(call, time.time())
        start = time.perf_counter()
        if hooks is not None:
            await hooks.before(info)
        try:
            result, error = await self._answer(call)
        except BaseException as exc:
            if hooks is not None:
                await hooks.after(_finished(info, None, exc, start))
            raise
        if hooks is not None:
            await hooks.after(_finished(info, result, error, start))
        return result

    def limit_of(self, tool: Tool) -> int | None:
        """The characters a result of ``tool`` may hold here: its own limit, else the registry's."""
        return self.max_result_chars if tool.max_result_chars is None else tool.max_result_chars

    async def _answer(self, call: ToolUseBlock) -> tuple[Message, BaseException | None]:
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            text = f"unknown tool {call.name!r}; available tools: {known}"
            return _error(call, bounded(text, self.max_result_chars)), None
        limit = self.limit_of(tool)
        problem = tool.check_arguments(call.arguments)
        if problem is None:
            try:
                kwargs = tool.convert_arguments(call.arguments)
            except ToolArgumentError as exc:
                problem = str(exc)
        if problem is not None:
            text = f"invalid arguments for tool {call.name!r}: {problem}"
            return _error(call, bounded(text, limit)), None
        try:
            result = await self._invoke(tool, kwargs, limit)
        except ToolTimedOutError:
            text = f"tool {call.name!r} did not finish within {self.timeout:g} seconds"
            return _error(call, text), TimeoutError(text)
        except NotJsonError as exc:
            text = f"tool {call.name!r} returned a value that is not JSON: {exc}"
            return _error(call, bounded(text, limit)), exc.cause
        except Exception as exc:
            logger.info("tool %r raised", call.name, exc_info=exc)
            detail = f": {exc}" if str(exc) else ""
            text = f"tool {call.name!r} raised {type(exc).__name__}{detail}"
            return _error(call, bounded(text, limit)), exc
        return Message.tool_result(call.id, result), None

    async def call_all(
        self, calls: Iterable[ToolUseBlock], *, hooks: ToolCallHooks | None = None
    ) -> list[Message]:
        """Answer every call of ``calls`` and return the results in call order.

        The calls run concurrently unless :attr:`concurrent` is False;
        ``hooks`` are passed to :meth:`call`.
        """
        pending = list(calls)
        if self.concurrent and len(pending) > 1:
            return list(await asyncio.gather(*(self.call(call, hooks=hooks) for call in pending)))
        return [await self.call(call, hooks=hooks) for call in pending]

    async def _invoke(self, tool: Tool, kwargs: Mapping[str, Any], limit: int | None) -> str:
        return await run_within(tool._text(kwargs, limit), self.timeout)


def _finished(
    info: ToolCallInfo, result: Message | None, error: BaseException | None, start: float
) -> ToolCallInfo:
    return attrs.evolve(info, result=result, error=error, duration=time.perf_counter() - start)


def _error(call: ToolUseBlock, text: str) -> Message:
    return Message.tool_result(call.id, text, is_error=True)
