"""Tools: Python callables a model may call, described by JSON schemas.

Register functions on a :class:`ToolRegistry`; it derives each tool's JSON
schema from the type hints and the docstring, hands the model the
:class:`~agentcore.llm.ToolSpec` list, and answers the model's tool calls
with tool result messages.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import inspect
import json
import logging
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, overload

from attrs import field, frozen

from agentcore.errors import ConfigError, ToolError
from agentcore.llm import ToolSpec
from agentcore.messages import Message, ToolUseBlock

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

_Convert = Callable[[Any], Any]

_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

_SUPPORTED = (
    "str, int, float, bool, None, list[X], dict[str, X], Literal[...], "
    "Enum subclasses and unions of these"
)

# --------------------------------------------------------------------------
# JSON values and the schema checks run on a call's arguments


_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
    "array": "an array",
    "object": "an object",
}


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _has_type(value: object, expected: str) -> bool:
    actual = _json_type(value)
    if expected == "number":
        return actual in ("integer", "number")
    if expected == "integer":
        return actual == "integer" or (isinstance(value, float) and value.is_integer())
    return actual == expected


def _same(value: object, allowed: object) -> bool:
    value_type, allowed_type = _json_type(value), _json_type(allowed)
    numbers = ("integer", "number")
    if value_type != allowed_type and not (value_type in numbers and allowed_type in numbers):
        return False
    return value == allowed


def _describe(value: object) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{_json_type(value)} {text}"


def _where(path: str) -> str:
    return f"argument {path!r}" if path else "the arguments"


def _problem(value: object, schema: Mapping[str, Any], path: str) -> str | None:
    """Why ``value`` does not fit ``schema``'s basic rules, or None when it does.

    Checked: ``type``, ``enum``, ``const``, ``anyOf``/``oneOf``, and for
    objects and arrays ``properties``, ``required``, ``additionalProperties``
    and ``items``. Other keywords are not enforced.
    """
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            schemas = [option for option in options if isinstance(option, Mapping)]
            if schemas and all(_problem(value, option, path) for option in schemas):
                return f"{_where(path)} matches none of the allowed types, got {_describe(value)}"
    expected = schema.get("type")
    if isinstance(expected, (str, list)):
        names = [expected] if isinstance(expected, str) else [str(name) for name in expected]
        if not any(_has_type(value, name) for name in names):
            wanted = " or ".join(_TYPE_WORDS.get(name, name) for name in names)
            return f"{_where(path)} must be {wanted}, got {_describe(value)}"
    if "const" in schema and not _same(value, schema["const"]):
        return f"{_where(path)} must be {json.dumps(schema['const'])}, got {_describe(value)}"
    allowed = schema.get("enum")
    if isinstance(allowed, list) and not any(_same(value, option) for option in allowed):
        choices = ", ".join(json.dumps(option, ensure_ascii=False) for option in allowed)
        return f"{_where(path)} must be one of {choices}, got {_describe(value)}"
    if isinstance(value, Mapping):
        return _object_problem(value, schema, path)
    items = schema.get("items")
    if isinstance(value, (list, tuple)) and isinstance(items, Mapping):
        for index, item in enumerate(value):
            problem = _problem(item, items, f"{path}[{index}]")
            if problem:
                return problem
    return None


def _object_problem(value: Mapping[Any, Any], schema: Mapping[str, Any], path: str) -> str | None:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        properties = {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else ():
        if name not in value:
            return f"missing required argument {_join(path, str(name))!r}"
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        where = _join(path, str(key))
        if key in properties and isinstance(properties[key], Mapping):
            problem = _problem(item, properties[key], where)
        elif extra is False:
            known = ", ".join(map(str, properties)) or "none"
            problem = f"unexpected argument {where!r} (expected: {known})"
        elif isinstance(extra, Mapping):
            problem = _problem(item, extra, where)
        else:
            problem = None
        if problem:
            return problem
    return None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --------------------------------------------------------------------------
# Schema derivation from type hints


class _UnsupportedError(Exception):
    def __init__(self, annotation: object, reason: str = "") -> None:
        super().__init__(reason)
        self.annotation = annotation
        self.reason = reason


def _identity(value: Any) -> Any:
    return value


def _to_int(value: Any) -> Any:
    return int(value) if isinstance(value, float) else value


def _to_float(value: Any) -> Any:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _type_name(annotation: object) -> str:
    if get_origin(annotation) is None and isinstance(annotation, type):
        return annotation.__qualname__
    return repr(annotation).replace("typing.", "")


def _scalar_enum(values: list[Any], annotation: object) -> dict[str, Any]:
    for value in values:
        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise _UnsupportedError(annotation, f"the value {value!r} is not a JSON scalar")
    schema: dict[str, Any] = {}
    kinds = {_json_type(value) for value in values}
    if len(kinds) == 1:
        schema["type"] = kinds.pop()
    schema["enum"] = values
    return schema


def _derive(annotation: Any) -> tuple[dict[str, Any], _Convert]:
    """Return the JSON schema of ``annotation`` and the converter from JSON to it."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _derive(get_args(annotation)[0])
    if annotation is None or annotation is type(None):
        return {"type": "null"}, _identity
    simple: dict[Any, tuple[str, _Convert]] = {
        str: ("string", _identity),
        bool: ("boolean", _identity),
        int: ("integer", _to_int),
        float: ("number", _to_float),
        list: ("array", _identity),
        dict: ("object", _identity),
    }
    if origin is None and isinstance(annotation, type) and annotation in simple:
        kind, convert = simple[annotation]
        return {"type": kind}, convert
    if origin is None and isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        members = list(annotation)
        if not members:
            raise _UnsupportedError(annotation, "the enum has no members")
        return _scalar_enum([member.value for member in members], annotation), annotation
    if origin is Literal:
        return _scalar_enum(list(get_args(annotation)), annotation), _identity
    if origin is list:
        if not get_args(annotation):
            return {"type": "array"}, _identity
        (item_type,) = get_args(annotation)
        item_schema, convert_item = _derive(item_type)
        return {"type": "array", "items": item_schema}, lambda value: [
            convert_item(item) for item in value
        ]
    if origin is dict:
        if not get_args(annotation):
            return {"type": "object"}, _identity
        key_type, value_type = get_args(annotation)
        if key_type is not str:
            raise _UnsupportedError(annotation, "dict keys must be str")
        value_schema, convert_value = _derive(value_type)
        return {"type": "object", "additionalProperties": value_schema}, lambda value: {
            key: convert_value(item) for key, item in value.items()
        }
    if origin is Union or origin is types.UnionType:
        return _derive_union(get_args(annotation))
    raise _UnsupportedError(annotation)


def _derive_union(members: tuple[Any, ...]) -> tuple[dict[str, Any], _Convert]:
    derived = [_derive(member) for member in members]
    schema: dict[str, Any]
    if all(set(item) == {"type"} and isinstance(item["type"], str) for item, _ in derived):
        schema = {"type": list(dict.fromkeys(item["type"] for item, _ in derived))}
    else:
        schema = {"anyOf": [item for item, _ in derived]}

    def convert(value: Any) -> Any:
        for member_schema, convert_member in derived:
            if _problem(value, member_schema, "") is None:
                return convert_member(value)
        return value

    return schema, convert


# --------------------------------------------------------------------------
# Docstrings


_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Returns?|Yields?|"
    r"Raises|Examples?|Notes?|Attributes|Warnings?|See Also|References|Todo):\s*$"
)
_ARG_SECTION = ("Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments")
_ARG_ENTRY = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into a description and argument descriptions.

    The description is the first paragraph, its lines joined by spaces. The
    argument descriptions come from the ``Args:`` section (also spelled
    ``Arguments:``, ``Parameters:``, ``Keyword Args:``), one entry per line as
    ``name: text`` or ``name (type): text``, with more-indented lines
    continuing the entry. ``doc`` is a cleaned docstring, as
    :func:`inspect.getdoc` returns it.
    """
    lines = (doc or "").splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        summary.append(line.strip())
    arguments: dict[str, str] = {}
    index = 0
    while index < len(lines):
        header = _SECTION.match(lines[index].strip())
        index += 1
        if not header or header.group(1) not in _ARG_SECTION:
            continue
        header_indent = _indent(lines[index - 1])
        entry_indent: int | None = None
        current: str | None = None
        while index < len(lines):
            line = lines[index]
            if not line.strip():
                index += 1
                continue
            indent = _indent(line)
            if indent <= header_indent:
                break
            if entry_indent is None:
                entry_indent = indent
            match = _ARG_ENTRY.match(line.strip())
            if indent <= entry_indent and match:
                current = match.group("name")
                arguments[current] = match.group("text").strip()
            elif current is not None:
                arguments[current] = f"{arguments[current]} {line.strip()}".strip()
            index += 1
    return " ".join(summary), arguments


# --------------------------------------------------------------------------
# Tools


def _unwrap(func: Callable[..., Any]) -> Callable[..., Any]:
    """Return the function whose annotations and docstring describe ``func``."""
    target: Any = func
    while isinstance(target, functools.partial):
        target = target.func
    if not (inspect.isroutine(target) or isinstance(target, type)) and callable(target):
        call = type(target).__call__
        if inspect.isfunction(call):
            return typing.cast(Callable[..., Any], call)
    return typing.cast(Callable[..., Any], target)


def _is_async(func: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(func):
        return True
    if inspect.isroutine(func) or isinstance(func, type):
        return False
    return inspect.iscoroutinefunction(type(func).__call__)


def _json_default(value: Any) -> tuple[bool, Any]:
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False, None
    return True, value


def _check_explicit(
    name: str, func: Callable[..., Any], parameters: object, signature: inspect.Signature | None
) -> dict[str, Any]:
    if not isinstance(parameters, Mapping):
        raise ToolError(f"tool {name!r}: parameters= must be a JSON schema mapping")
    if parameters.get("type") != "object":
        raise ToolError(f"tool {name!r}: parameters= must be an object schema ('type': 'object')")
    try:
        schema: dict[str, Any] = json.loads(json.dumps(parameters))
    except (TypeError, ValueError) as exc:
        raise ToolError(f"tool {name!r}: parameters= is not JSON-serializable: {exc}") from exc
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or not all(
        isinstance(value, dict) for value in properties.values()
    ):
        raise ToolError(f"tool {name!r}: 'properties' must map each parameter to a schema")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(item, str) for item in required):
        raise ToolError(f"tool {name!r}: 'required' must be a list of parameter names")
    for item in required:
        if item not in properties:
            raise ToolError(f"tool {name!r}: required parameter {item!r} is not in 'properties'")
    if signature is None:
        return schema
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolError(
                f"tool {name!r}: parameter {param.name!r} is positional-only; "
                "tools are called with keyword arguments"
            )
        if param.default is param.empty and param.name not in required:
            raise ToolError(
                f"tool {name!r}: parameter {param.name!r} has no default, "
                "so the schema must list it in 'required'"
            )
    for item in properties:
        if not accepts_any and item not in signature.parameters:
            raise ToolError(
                f"tool {name!r}: the schema's parameter {item!r} is not a parameter of the function"
            )
    return schema


def _derive_parameters(
    name: str, signature: inspect.Signature, hints: Mapping[str, Any], docs: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, _Convert]]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    converters: dict[str, _Convert] = {}
    for param in signature.parameters.values():
        where = f"tool {name!r}: parameter {param.name!r}"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolError(
                f"{where}: *args and **kwargs cannot be described by a schema; "
                "name each parameter or pass parameters="
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolError(f"{where} is positional-only; tools are called with keyword arguments")
        if param.name not in hints:
            raise ToolError(f"{where} has no type annotation; annotate it or pass parameters=")
        annotation = hints[param.name]
        try:
            schema, convert = _derive(annotation)
        except _UnsupportedError as exc:
            detail = f" ({exc.reason})" if exc.reason else ""
            raise ToolError(
                f"{where} has an unsupported annotation {_type_name(exc.annotation)}{detail}; "
                f"supported: {_SUPPORTED}, or pass parameters= with a JSON schema"
            ) from None
        description = docs.get(param.name) or _annotated_description(annotation)
        if description:
            schema = {"description": description, **schema}
        if param.default is param.empty:
            required.append(param.name)
        else:
            serializable, default = _json_default(param.default)
            if serializable:
                schema["default"] = default
        properties[param.name] = schema
        converters[param.name] = convert
    parameters = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return parameters, converters


def _annotated_description(annotation: Any) -> str:
    if get_origin(annotation) is typing.Annotated:
        for extra in annotation.__metadata__:
            if isinstance(extra, str):
                return extra
    return ""


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
    _converters: Mapping[str, _Convert] = field(factory=dict, repr=False, alias="converters")

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
        target = _unwrap(func)
        tool_name = name if name is not None else getattr(target, "__name__", None)
        if not isinstance(tool_name, str) or not _NAME_PATTERN.match(tool_name):
            raise ToolError(
                f"invalid tool name {tool_name!r} for {func!r}: use 1-64 letters, digits, "
                "'_' or '-' (pass name=)"
            )
        summary, docs = _parse_docstring(inspect.getdoc(target))
        try:
            signature: inspect.Signature | None = inspect.signature(func)
        except (TypeError, ValueError) as exc:
            if parameters is None:
                raise ToolError(f"tool {tool_name!r}: cannot read its signature: {exc}") from exc
            signature = None
        converters: dict[str, _Convert] = {}
        if parameters is not None:
            schema = _check_explicit(tool_name, func, parameters, signature)
        else:
            assert signature is not None
            try:
                hints = typing.get_type_hints(target, include_extras=True)
            except Exception as exc:
                raise ToolError(
                    f"tool {tool_name!r}: cannot resolve its type hints ({exc}); "
                    "define the types it names at module level"
                ) from exc
            schema, converters = _derive_parameters(tool_name, signature, hints, docs)
        return cls(
            tool_name,
            description if description is not None else summary,
            schema,
            func,
            converters=converters,
        )

    @property
    def spec(self) -> ToolSpec:
        """The tool as the model sees it."""
        return ToolSpec(self.name, self.description, self.parameters)

    def check_arguments(self, arguments: object) -> str | None:
        """Why ``arguments`` do not fit the schema, or None when they do."""
        if not isinstance(arguments, Mapping):
            return f"the arguments must be a JSON object, got {_describe(arguments)}"
        return _problem(arguments, self.parameters, "")

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        """Call the function with ``arguments`` and return what it returns.

        Arguments are converted to the annotated types first (enum members,
        floats). A synchronous function runs in a worker thread so it does
        not block the event loop. Exceptions propagate; call
        :meth:`check_arguments` first.
        """
        kwargs = {
            key: self._converters.get(key, _identity)(value) for key, value in arguments.items()
        }
        if _is_async(self.function):
            result = await self.function(**kwargs)
        else:
            result = await asyncio.to_thread(self.function, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        return result


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

    ``timeout`` bounds each call in seconds (None: no limit). A timed-out
    synchronous tool keeps running in its worker thread; its result is
    dropped. ``concurrent`` lets :meth:`call_all` run the calls of one
    assistant message at the same time; set it to False for tools that must
    run one after the other.
    """

    def __init__(self, *, timeout: float | None = None, concurrent: bool = True) -> None:
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
        ):
            raise ConfigError(
                f"timeout must be a positive number of seconds or None, got {timeout!r}"
            )
        self.timeout = timeout
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

    async def call(self, call: ToolUseBlock) -> Message:
        """Run the tool call ``call`` and return its tool result message.

        Tool problems never raise: an unknown tool, arguments that do not fit
        the schema, an exception from the tool, a timeout or a result that
        cannot be turned into JSON give a result with ``is_error=True`` that
        says what went wrong. Cancellation propagates.

        A ``str`` result is sent as is, None as ``""``, anything else as JSON.
        """
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return _error(call, f"unknown tool {call.name!r}; available tools: {known}")
        problem = tool.check_arguments(call.arguments)
        if problem is not None:
            return _error(call, f"invalid arguments for tool {call.name!r}: {problem}")
        try:
            result = await self._invoke(tool, call.arguments)
        except _TimedOutError:
            return _error(
                call, f"tool {call.name!r} did not finish within {self.timeout:g} seconds"
            )
        except Exception as exc:
            logger.info("tool %r raised", call.name, exc_info=exc)
            detail = f": {exc}" if str(exc) else ""
            return _error(call, f"tool {call.name!r} raised {type(exc).__name__}{detail}")
        if result is None:
            return Message.tool_result(call.id, "")
        if isinstance(result, str):
            return Message.tool_result(call.id, result)
        try:
            text = json.dumps(result, ensure_ascii=False, default=str)
        except (TypeError, ValueError) as exc:
            return _error(call, f"tool {call.name!r} returned a value that is not JSON: {exc}")
        return Message.tool_result(call.id, text)

    async def call_all(self, calls: Iterable[ToolUseBlock]) -> list[Message]:
        """Answer every call of ``calls`` and return the results in call order.

        The calls run concurrently unless :attr:`concurrent` is False.
        """
        pending = list(calls)
        if self.concurrent and len(pending) > 1:
            return list(await asyncio.gather(*(self.call(call) for call in pending)))
        return [await self.call(call) for call in pending]

    async def _invoke(self, tool: Tool, arguments: Mapping[str, Any]) -> Any:
        if self.timeout is None:
            return await tool.invoke(arguments)
        task = asyncio.ensure_future(tool.invoke(arguments))
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timeout)
        finally:
            if not task.done():
                task.cancel()
                task.add_done_callback(_discard_outcome)
        if not done:
            raise _TimedOutError
        return task.result()


def _error(call: ToolUseBlock, text: str) -> Message:
    return Message.tool_result(call.id, text, is_error=True)
