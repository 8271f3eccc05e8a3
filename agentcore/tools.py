"""Tools: Python callables a model may call, described by JSON schemas.

Register functions on a :class:`ToolRegistry`; it derives each tool's JSON
schema from the type hints and the docstring, hands the model the
:class:`~agentcore.llm.ToolSpec` list, and answers the model's tool calls
with tool result messages.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar, overload

import attrs
from attrs import field, frozen

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
    parse_docstring,
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


@frozen
class Tool:
    """A Python callable a model may call.

    ``parameters`` is the JSON schema of the keyword arguments. Build tools
    with :meth:`from_function` or :meth:`ToolRegistry.register`.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    function: Callable[..., Any] = field(repr=False)
    _converters: Mapping[str, Convert] = field(factory=dict, repr=False, alias="converters")
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
    ) -> Tool:
        """Describe ``func`` as a tool.

        ``name`` defaults to the function's name. The description defaults to
        the first paragraph of the docstring; parameter descriptions come from
        its ``Args:`` section (or from ``Annotated[X, "text"]``). The schema
        is derived from the type hints unless ``parameters`` gives one.
        Raises :class:`~agentcore.errors.ToolError` when the function cannot
        be described.
        """
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
        :meth:`convert_arguments`). A synchronous function runs in a worker
        thread so it does not block the event loop. Exceptions propagate;
        call :meth:`check_arguments` first.
        """
        return await self._call(self.convert_arguments(arguments))

    async def _call(self, kwargs: Mapping[str, Any]) -> Any:
        if is_async(self.function):
            result = await self.function(**kwargs)
        else:
            result = await asyncio.to_thread(self.function, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        return result


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


class _TimedOutError(Exception):
    pass


def _discard_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class ToolRegistry:
    """The tools a model may call, and the code that answers its calls.

    Register callables with :meth:`register` or the :meth:`tool` decorator.
    :meth:`call` answers one tool call with a tool result message and never
    raises for a tool problem: unknown tools, bad arguments, failures and
    timeouts become error results the model can read.

    ``timeout`` bounds each call in seconds: :data:`DEFAULT_TOOL_TIMEOUT`
    (60 s) unless given; pass None explicitly for no limit. A timed-out call
    is answered with an error result that says so. A timed-out synchronous
    tool keeps running in its worker thread; its result is dropped.
    ``concurrent`` lets :meth:`call_all` run the calls of one assistant
    message at the same time; set it to False for tools that must run one
    after the other.
    """

    def __init__(
        self, *, timeout: float | None = DEFAULT_TOOL_TIMEOUT, concurrent: bool = True
    ) -> None:
        self.timeout = _TIMEOUT.check("ToolRegistry timeout", timeout)
        """Seconds each call may take, or None."""
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
    ) -> Tool:
        """Register ``func`` as a tool and return it.

        See :meth:`Tool.from_function` for the arguments. Raises
        :class:`~agentcore.errors.ToolError` for an invalid definition or a
        name already registered.
        """
        tool = Tool.from_function(func, name=name, description=description, parameters=parameters)
        if tool.name in self._tools:
            raise ToolError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        return tool

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
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        func: F | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> F | Callable[[F], F]:
        """Register a function as a tool: ``@registry.tool`` or ``@registry.tool(name=...)``.

        The decorated function is returned unchanged.
        """

        def decorate(function: F) -> F:
            self.register(function, name=name, description=description, parameters=parameters)
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

        A ``str`` result is sent as is, None as ``""``, anything else as JSON.
        ``hooks``, when given, are awaited before and after the call with a
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

    async def _answer(self, call: ToolUseBlock) -> tuple[Message, BaseException | None]:
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return _error(call, f"unknown tool {call.name!r}; available tools: {known}"), None
        problem = tool.check_arguments(call.arguments)
        if problem is None:
            try:
                kwargs = tool.convert_arguments(call.arguments)
            except ToolArgumentError as exc:
                problem = str(exc)
        if problem is not None:
            return _error(call, f"invalid arguments for tool {call.name!r}: {problem}"), None
        try:
            result = await self._invoke(tool, kwargs)
        except _TimedOutError:
            text = f"tool {call.name!r} did not finish within {self.timeout:g} seconds"
            return _error(call, text), TimeoutError(text)
        except Exception as exc:
            logger.info("tool %r raised", call.name, exc_info=exc)
            detail = f": {exc}" if str(exc) else ""
            return _error(call, f"tool {call.name!r} raised {type(exc).__name__}{detail}"), exc
        if result is None:
            return Message.tool_result(call.id, ""), None
        if isinstance(result, str):
            return Message.tool_result(call.id, result), None
        try:
            text = json.dumps(result, ensure_ascii=False, default=str)
        except (TypeError, ValueError) as exc:
            message = f"tool {call.name!r} returned a value that is not JSON: {exc}"
            return _error(call, message), exc
        return Message.tool_result(call.id, text), None

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

    async def _invoke(self, tool: Tool, kwargs: Mapping[str, Any]) -> Any:
        if self.timeout is None:
            return await tool._call(kwargs)
        task = asyncio.ensure_future(tool._call(kwargs))
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timeout)
        finally:
            if not task.done():
                task.cancel()
                task.add_done_callback(_discard_outcome)
        if not done:
            raise _TimedOutError
        return task.result()


def _finished(
    info: ToolCallInfo, result: Message | None, error: BaseException | None, start: float
) -> ToolCallInfo:
    return attrs.evolve(info, result=result, error=error, duration=time.perf_counter() - start)


def _error(call: ToolUseBlock, text: str) -> Message:
    return Message.tool_result(call.id, text, is_error=True)
