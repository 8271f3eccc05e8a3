"""Checked reads of decoded JSON: a missing or mistyped field is a MalformedResponseError."""

from __future__ import annotations

from typing import Any

from agentcore._bounded_json import NestedTooDeeplyError, loads_bounded
from agentcore.errors import MalformedResponseError
from agentcore.providers._text import valid_json, valid_text
from agentcore.validators import is_int


def expect_dict(value: Any, what: str) -> dict[str, Any]:
    """``value`` if it is a JSON object, else MalformedResponseError naming ``what``."""
    if not isinstance(value, dict):
        raise MalformedResponseError(f"{what} should be a JSON object, got {_kind(value)}")
    return value


def expect_list(value: Any, what: str) -> list[Any]:
    """``value`` if it is a JSON array, else MalformedResponseError naming ``what``."""
    if not isinstance(value, list):
        raise MalformedResponseError(f"{what} should be a JSON array, got {_kind(value)}")
    return value


def expect_str(value: Any, what: str) -> str:
    """``value`` if it is a string, else MalformedResponseError naming ``what``."""
    if not isinstance(value, str):
        raise MalformedResponseError(f"{what} should be a string, got {_kind(value)}")
    return value


def optional_str(value: Any, what: str) -> str | None:
    """``value`` if it is a string or null, else MalformedResponseError naming ``what``."""
    return None if value is None else expect_str(value, what)


def token_count(value: Any, what: str) -> int:
    """A token count: a non-negative integer, with null read as 0."""
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not is_int(value) or value < 0:
        raise MalformedResponseError(f"{what} should be a count >= 0, got {value!r}")
    return value


def tool_arguments(raw: str, tool_name: str) -> dict[str, Any]:
    """The arguments of a tool call from their JSON text (an empty text means none).

    Surrogate pairs split between fragments are joined and lone surrogates
    replaced, in the text and in the strings it decodes to. Arguments that
    are not a JSON object, or nest deeper than
    :data:`~agentcore._bounded_json.MAX_JSON_DEPTH`, are a
    MalformedResponseError.
    """
    raw = valid_text(raw)
    if not raw.strip():
        return {}
    try:
        value = valid_json(loads_bounded(raw))
    except NestedTooDeeplyError as exc:
        raise MalformedResponseError(
            f"the arguments of the call to tool {tool_name!r} are {exc}"
        ) from None
    except ValueError as exc:
        problem = str(exc)
    else:
        if isinstance(value, dict):
            return value
        raise MalformedResponseError(
            f"the arguments of the call to tool {tool_name!r} should be a JSON object, "
            f"got {_kind(value)}"
        )
    raise MalformedResponseError(
        f"the arguments of the call to tool {tool_name!r} are not valid JSON ({problem}): "
        f"{raw[:200]!r}"
    )


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
