"""JSON schemas for tools: derived from type hints and docstrings, and checked against arguments."""

from __future__ import annotations

import enum
import functools
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union, get_args, get_origin

from agentcore._tool_types import UnsupportedTypeError as _UnsupportedError
from agentcore._tool_types import derive_structured, is_structured, json_default
from agentcore.errors import ToolError

Convert = Callable[[Any], Any]

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

_SUPPORTED = (
    "str, int, float, bool, None, list[X], dict[str, X], tuple[X, ...], Literal[...], "
    "Enum subclasses, datetime.date, datetime.datetime, datetime.time, dataclasses, "
    "attrs classes, TypedDicts, pydantic models and unions of these"
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


def describe_value(value: object) -> str:
    """A short description of ``value`` for error messages."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{_json_type(value)} {text}"


def _where(path: str) -> str:
    return f"argument {path!r}" if path else "the arguments"


def argument_problem(value: object, schema: Mapping[str, Any], path: str) -> str | None:
    """Why ``value`` does not fit ``schema``'s basic rules, or None when it does.

    Checked: ``type``, ``enum``, ``const``, ``anyOf``/``oneOf``, and for
    objects and arrays ``properties``, ``required``, ``additionalProperties``,
    ``items``, ``prefixItems``, ``minItems`` and ``maxItems``. Other keywords
    (``format``, ``pattern``...) are not enforced here; a tool's converters
    check dates and pydantic's constraints.
    """
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            schemas = [option for option in options if isinstance(option, Mapping)]
            problems = [argument_problem(value, option, path) for option in schemas]
            if schemas and all(problems):
                # One option of the value's own JSON type (an object for Point | None): its
                # problem says more than "none matches".
                same_kind = [
                    problem
                    for option, problem in zip(schemas, problems, strict=True)
                    if isinstance(option.get("type"), str) and _has_type(value, option["type"])
                ]
                if len(same_kind) == 1:
                    return same_kind[0]
                return (
                    f"{_where(path)} matches none of the allowed types, got {describe_value(value)}"
                )
    expected = schema.get("type")
    if isinstance(expected, (str, list)):
        names = [expected] if isinstance(expected, str) else [str(name) for name in expected]
        if not any(_has_type(value, name) for name in names):
            wanted = " or ".join(_TYPE_WORDS.get(name, name) for name in names)
            return f"{_where(path)} must be {wanted}, got {describe_value(value)}"
    if "const" in schema and not _same(value, schema["const"]):
        return f"{_where(path)} must be {json.dumps(schema['const'])}, got {describe_value(value)}"
    allowed = schema.get("enum")
    if isinstance(allowed, list) and not any(_same(value, option) for option in allowed):
        choices = ", ".join(json.dumps(option, ensure_ascii=False) for option in allowed)
        return f"{_where(path)} must be one of {choices}, got {describe_value(value)}"
    if isinstance(value, Mapping):
        return _object_problem(value, schema, path)
    if isinstance(value, (list, tuple)):
        return _array_problem(value, schema, path)
    return None


def _array_problem(
    value: list[Any] | tuple[Any, ...], schema: Mapping[str, Any], path: str
) -> str | None:
    low = schema.get("minItems")
    high = schema.get("maxItems")
    low = low if isinstance(low, int) else None
    high = high if isinstance(high, int) else None
    if (low is not None and len(value) < low) or (high is not None and len(value) > high):
        if low == high:
            count = f"exactly {low}"
        elif high is None:
            count = f"at least {low}"
        elif low is None:
            count = f"at most {high}"
        else:
            count = f"{low} to {high}"
        return f"{_where(path)} must have {count} items, got {len(value)}"
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list):
        for index, (item, item_schema) in enumerate(zip(value, prefix, strict=False)):
            if isinstance(item_schema, Mapping):
                problem = argument_problem(item, item_schema, f"{path}[{index}]")
                if problem:
                    return problem
    items = schema.get("items")
    if isinstance(items, Mapping):
        start = len(prefix) if isinstance(prefix, list) else 0
        for index, item in enumerate(value[start:], start):
            problem = argument_problem(item, items, f"{path}[{index}]")
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
            problem = argument_problem(item, properties[key], where)
        elif extra is False:
            known = ", ".join(map(str, properties)) or "none"
            problem = f"unexpected argument {where!r} (expected: {known})"
        elif isinstance(extra, Mapping):
            problem = argument_problem(item, extra, where)
        else:
            problem = None
        if problem:
            return problem
    return None


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --------------------------------------------------------------------------
# Schema derivation from type hints


def identity(value: Any) -> Any:
    """Return ``value`` unchanged (the converter of types that need none)."""
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


def _derive(annotation: Any) -> tuple[dict[str, Any], Convert]:
    """Return the JSON schema of ``annotation`` and the converter from JSON to it."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _derive(get_args(annotation)[0])
    if annotation is None or annotation is type(None):
        return {"type": "null"}, identity
    simple: dict[Any, tuple[str, Convert]] = {
        str: ("string", identity),
        bool: ("boolean", identity),
        int: ("integer", _to_int),
        float: ("number", _to_float),
        list: ("array", identity),
        dict: ("object", identity),
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
        return _scalar_enum(list(get_args(annotation)), annotation), identity
    if origin is list:
        if not get_args(annotation):
            return {"type": "array"}, identity
        (item_type,) = get_args(annotation)
        item_schema, convert_item = _derive(item_type)
        return {"type": "array", "items": item_schema}, lambda value: [
            convert_item(item) for item in value
        ]
    if origin is dict:
        if not get_args(annotation):
            return {"type": "object"}, identity
        key_type, value_type = get_args(annotation)
        if key_type is not str:
            raise _UnsupportedError(annotation, "dict keys must be str")
        value_schema, convert_value = _derive(value_type)
        return {"type": "object", "additionalProperties": value_schema}, lambda value: {
            key: convert_value(item) for key, item in value.items()
        }
    if origin is Union or origin is types.UnionType:
        return _derive_union(get_args(annotation))
    if is_structured(annotation):
        return derive_structured(annotation, _derive)
    raise _UnsupportedError(annotation)


def schema_of(annotation: Any) -> tuple[dict[str, Any], Convert]:
    """The JSON schema of ``annotation`` and the converter from a JSON value to it.

    The types tool parameters take (see :data:`_SUPPORTED`); the converter
    raises ``agentcore._tool_types.ArgumentValueError`` for a value that
    fits the schema but not the type. Raises ValueError naming an
    annotation that is not supported.
    """
    try:
        return _derive(annotation)
    except _UnsupportedError as exc:
        detail = f" ({exc.reason})" if exc.reason else ""
        raise ValueError(
            f"unsupported annotation {_type_name(exc.annotation)}{detail}; supported: {_SUPPORTED}"
        ) from None


def _derive_union(members: tuple[Any, ...]) -> tuple[dict[str, Any], Convert]:
    derived = [_derive(member) for member in members]
    schema: dict[str, Any]
    if all(set(item) == {"type"} and isinstance(item["type"], str) for item, _ in derived):
        schema = {"type": list(dict.fromkeys(item["type"] for item, _ in derived))}
    else:
        schema = {"anyOf": [item for item, _ in derived]}

    def convert(value: Any) -> Any:
        for member_schema, convert_member in derived:
            if argument_problem(value, member_schema, "") is None:
                return convert_member(value)
        return value

    return schema, convert


# --------------------------------------------------------------------------
# Tools


def unwrap(func: Callable[..., Any]) -> Callable[..., Any]:
    """Return the function whose annotations and docstring describe ``func``."""
    target: Any = func
    while isinstance(target, functools.partial):
        target = target.func
    if not (inspect.isroutine(target) or isinstance(target, type)) and callable(target):
        call = type(target).__call__
        if inspect.isfunction(call):
            return typing.cast(Callable[..., Any], call)
    return typing.cast(Callable[..., Any], target)


def is_async(func: Callable[..., Any]) -> bool:
    """True when calling ``func`` returns an awaitable."""
    if inspect.iscoroutinefunction(func):
        return True
    if inspect.isroutine(func) or isinstance(func, type):
        return False
    return inspect.iscoroutinefunction(type(func).__call__)


def check_explicit_schema(
    name: str, func: Callable[..., Any], parameters: object, signature: inspect.Signature | None
) -> dict[str, Any]:
    """Check an explicit ``parameters`` schema against the function's signature."""
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


def derive_parameters(
    name: str, signature: inspect.Signature, hints: Mapping[str, Any], docs: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, Convert]]:
    """The JSON schema of ``func``'s parameters and the converters of their values."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    converters: dict[str, Convert] = {}
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
        description = docs.get(param.name) or annotated_description(annotation)
        if description:
            schema = {"description": description, **schema}
        if param.default is param.empty:
            required.append(param.name)
        else:
            serializable, default = json_default(param.default)
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


def annotated_description(annotation: Any) -> str:
    """The description an ``Annotated[X, "text"]`` annotation carries, or ``""``."""
    if get_origin(annotation) is typing.Annotated:
        for extra in annotation.__metadata__:
            if isinstance(extra, str):
                return extra
    return ""
