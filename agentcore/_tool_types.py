"""Schemas and converters of the structured parameter types of tools.

Dataclasses, attrs classes, TypedDicts, tuples, dates, datetimes and times,
and pydantic models (only when pydantic is already imported: a model class
exists only then, so pydantic is never imported here). Each type gives a JSON
schema and a converter from the model's JSON value back to the type; the
classes are built with one cattrs converter, so nested types, defaults and
``Optional`` fields follow cattrs' rules.
"""

from __future__ import annotations

import contextvars
import dataclasses
import datetime
import enum
import json
import sys
import typing
from collections.abc import Callable
from typing import Any, Union, get_args, get_origin

import attrs
import cattrs
from cattrs.strategies import configure_union_passthrough
from cattrs.v import format_exception

Convert = Callable[[Any], Any]
Derive = Callable[[Any], tuple[dict[str, Any], Convert]]


class ArgumentValueError(ValueError):
    """A JSON value that fits the schema but not the annotated type (a bad date, say)."""


class UnsupportedTypeError(Exception):
    """An annotation no schema can describe; ``reason`` says why when known."""

    def __init__(self, annotation: object, reason: str = "") -> None:
        super().__init__(reason)
        self.annotation = annotation
        self.reason = reason


def _parse_iso(kind: type[Any]) -> Callable[[Any, Any], Any]:
    def parse(value: Any, _: Any) -> Any:
        if isinstance(value, kind):
            return value
        if not isinstance(value, str):
            raise ArgumentValueError(f"expected an ISO 8601 string, got {value!r}")
        text = (
            value[:-1] + "+00:00"
            if value.endswith(("Z", "z")) and kind is not datetime.date
            else value
        )
        try:
            return kind.fromisoformat(text)
        except ValueError:
            raise ArgumentValueError(f"{value!r} is not an ISO 8601 {_ISO_WORDS[kind]}") from None

    return parse


_ISO_WORDS: dict[type[Any], str] = {
    datetime.datetime: "date and time (such as 2026-03-01T09:30:00+00:00)",
    datetime.date: "date (such as 2026-03-01)",
    datetime.time: "time (such as 09:30:00)",
}

_FORMATS: dict[type[Any], str] = {
    datetime.datetime: "date-time",
    datetime.date: "date",
    datetime.time: "time",
}


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True)
    for kind in _FORMATS:
        converter.register_structure_hook(kind, _parse_iso(kind))
    configure_union_passthrough(Union[str, int, float, bool, None], converter)  # noqa: UP007
    return converter


CONVERTER = _make_converter()
"""The cattrs converter that builds tool arguments of structured types."""


def structure(value: Any, annotation: Any) -> Any:
    """``value`` (JSON) built into ``annotation`` by :data:`CONVERTER`.

    Raises :class:`ArgumentValueError` saying what did not fit.
    """
    try:
        return CONVERTER.structure(value, annotation)
    except ArgumentValueError:
        raise
    except (cattrs.ClassValidationError, cattrs.IterableValidationError) as exc:
        messages = cattrs.transform_error(exc, path="$", format_exception=_format)
        raise ArgumentValueError("; ".join(messages)) from None
    except (TypeError, ValueError, KeyError) as exc:
        raise ArgumentValueError(str(exc) or type(exc).__name__) from None


def _format(exc: BaseException, kind: type[Any] | None) -> str:
    if isinstance(exc, ArgumentValueError):
        return str(exc)
    return format_exception(exc, kind)


def _pydantic_model(annotation: Any) -> bool:
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(annotation, type):
        return False
    return issubclass(annotation, pydantic.BaseModel)


def _is_typeddict(annotation: Any) -> bool:
    return isinstance(annotation, type) and typing.is_typeddict(annotation)


def is_structured(annotation: Any) -> bool:
    """Whether :func:`derive_structured` describes ``annotation``."""
    origin = get_origin(annotation)
    if origin is tuple:
        return True
    if origin is not None or not isinstance(annotation, type):
        return False
    return (
        annotation in _FORMATS
        or dataclasses.is_dataclass(annotation)
        or attrs.has(annotation)
        or _is_typeddict(annotation)
        or _pydantic_model(annotation)
    )


def derive_structured(annotation: Any, derive: Derive) -> tuple[dict[str, Any], Convert]:
    """The JSON schema of ``annotation`` and its converter; ``derive`` describes field types."""
    if get_origin(annotation) is tuple:
        return _tuple(annotation, derive)
    if annotation in _FORMATS:
        schema = {"type": "string", "format": _FORMATS[annotation]}
        return schema, lambda value: structure(value, annotation)
    if _pydantic_model(annotation):
        return _pydantic(annotation)
    return _class(annotation, derive), lambda value: structure(value, annotation)


def _tuple(annotation: Any, derive: Derive) -> tuple[dict[str, Any], Convert]:
    members = get_args(annotation)
    if not members or members == ((),):
        return {"type": "array", "maxItems": 0}, lambda value: ()
    if len(members) == 2 and members[1] is Ellipsis:
        item_schema, convert_item = derive(members[0])
        return {"type": "array", "items": item_schema}, lambda value: tuple(
            convert_item(item) for item in value
        )
    derived = [derive(member) for member in members]
    schema = {
        "type": "array",
        "prefixItems": [item for item, _ in derived],
        "minItems": len(derived),
        "maxItems": len(derived),
    }
    return schema, lambda value: tuple(
        convert(item) for (_, convert), item in zip(derived, value, strict=True)
    )


def _class_fields(annotation: type[Any]) -> list[tuple[str, Any, bool, Any]]:
    """``(key, type, required, default)`` of each field; ``default`` is MISSING when none."""
    hints = typing.get_type_hints(annotation, include_extras=True)
    fields: list[tuple[str, Any, bool, Any]] = []
    if attrs.has(annotation):
        for attribute in attrs.fields(annotation):
            if not attribute.init:
                continue
            default = attribute.default
            required = default is attrs.NOTHING
            value = dataclasses.MISSING if required or isinstance(default, _FACTORY) else default
            fields.append((attribute.name, hints.get(attribute.name, Any), required, value))
    elif dataclasses.is_dataclass(annotation):
        for item in dataclasses.fields(annotation):
            if not item.init:
                continue
            required = (
                item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
            )
            fields.append((item.name, hints.get(item.name, Any), required, item.default))
    else:  # A TypedDict.
        required_keys = annotation.__required_keys__
        for key, hint in hints.items():
            fields.append((key, _strip_required(hint), key in required_keys, dataclasses.MISSING))
    return fields


def _strip_required(hint: Any) -> Any:
    origin = get_origin(hint)
    names = {"Required", "NotRequired", "ReadOnly"}
    if origin is not None and getattr(origin, "_name", None) in names:
        return _strip_required(get_args(hint)[0])
    return hint


_ACTIVE: contextvars.ContextVar[frozenset[type[Any]]] = contextvars.ContextVar(
    "agentcore_tool_types_active", default=frozenset()
)
"""The classes whose schemas are being derived (a class met again refers to itself)."""
_FACTORY: type[Any] = type(attrs.Factory(list))


def _class(annotation: type[Any], derive: Derive) -> dict[str, Any]:
    active = _ACTIVE.get()
    if annotation in active:
        raise UnsupportedTypeError(annotation, "it refers to itself; give parameters= instead")
    token = _ACTIVE.set(active | {annotation})
    try:
        try:
            fields = _class_fields(annotation)
        except Exception as exc:
            raise UnsupportedTypeError(
                annotation, f"its field types cannot be resolved: {exc}"
            ) from None
        properties: dict[str, Any] = {}
        required: list[str] = []
        for key, hint, is_required, default in fields:
            schema, _ = derive(hint)
            if is_required:
                required.append(key)
            elif default is not dataclasses.MISSING:
                serializable, value = json_default(default)
                if serializable:
                    schema = {**schema, "default": value}
            properties[key] = schema
    finally:
        _ACTIVE.reset(token)
    result: dict[str, Any] = {
        "type": "object",
        "title": annotation.__name__,
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    doc = (annotation.__doc__ or "").strip()
    if doc and not doc.startswith(annotation.__name__ + "("):  # Not a dataclass's made-up doc.
        result["description"] = doc.split("\n\n")[0].replace("\n", " ")
    return result


def json_default(value: Any) -> tuple[bool, Any]:
    """``(True, value as JSON)`` when a default can appear in a schema, else ``(False, None)``."""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, (datetime.date, datetime.time)):
        value = value.isoformat()
    if isinstance(value, tuple):
        value = list(value)
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False, None
    return True, value


def _pydantic(model: type[Any]) -> tuple[dict[str, Any], Convert]:
    schema = inline_refs(model.model_json_schema())

    def convert(value: Any) -> Any:
        try:
            return model.model_validate(value)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError.
            errors = getattr(exc, "errors", None)
            if callable(errors):
                parts = [
                    f"{'.'.join(map(str, error.get('loc', ()))) or '$'}: {error.get('msg')}"
                    for error in errors()
                ]
                raise ArgumentValueError("; ".join(parts)) from None
            raise ArgumentValueError(str(exc)) from None

    return schema, convert


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every local ``#/$defs/...`` reference replaced by its definition.

    A tool's parameter schema nests each parameter's schema, where a
    reference to the parameter's own ``$defs`` would not resolve. A
    definition that refers to itself raises :class:`UnsupportedTypeError`.
    """
    definitions = schema.get("$defs", {})

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen or name not in definitions:
                raise UnsupportedTypeError(schema.get("title", ref), f"cannot inline {ref}")
            rest = {key: value for key, value in node.items() if key != "$ref"}
            return {**resolve(definitions[name], (*seen, name)), **resolve(rest, seen)}
        return {key: resolve(value, seen) for key, value in node.items() if key != "$defs"}

    resolved: dict[str, Any] = resolve(schema, ())
    return resolved
