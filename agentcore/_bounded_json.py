"""JSON decoded with its nesting bounded: too deep is a ValueError, never a RecursionError.

A model server that answers with arrays or objects nested thousands of
levels deep (or a model whose text, or tool call arguments, nest that deep)
would make :func:`json.loads` raise ``RecursionError``, and a value a little
less deep would make any later walk over it (making its text valid, checking
it against a schema, storing it) raise the same. :func:`loads_bounded` reads
no document deeper than :data:`MAX_JSON_DEPTH` and raises
:class:`NestedTooDeeplyError`, a :class:`ValueError` like the error of invalid
JSON, so a caller that handles one handles both. The bound is fixed, not the
interpreter's recursion limit, so whether a document is read does not depend
on how deep the caller's stack already is.
"""

from __future__ import annotations

import json
from typing import Any

MAX_JSON_DEPTH = 128
"""The deepest nesting of arrays and objects read in one JSON document.

The whole document counts: a tool call's input inside a reply has the
reply's own levels above it, while arguments sent as a JSON string are a
document of their own.
"""


class NestedTooDeeplyError(ValueError):
    """A JSON document nests arrays and objects deeper than :data:`MAX_JSON_DEPTH`."""

    def __init__(self) -> None:
        super().__init__(
            f"nested too deeply: more than {MAX_JSON_DEPTH} levels of arrays and objects"
        )


def loads_bounded(text: str | bytes) -> Any:
    """``text`` decoded as JSON, refused when it nests deeper than :data:`MAX_JSON_DEPTH`.

    Invalid JSON raises :class:`json.JSONDecodeError`, JSON nested too
    deeply :class:`NestedTooDeeplyError`; both are :class:`ValueError`.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestedTooDeeplyError() from None
    _check_depth(value)
    return value


def _check_depth(value: Any) -> None:
    """Raise :class:`NestedTooDeeplyError` if ``value`` nests too deeply (without recursion)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            raise NestedTooDeeplyError()
        pending.extend((child, depth + 1) for child in children)
