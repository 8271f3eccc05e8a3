"""Text from data made safe to print: no control characters reach the terminal."""

from __future__ import annotations

import json
import re
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but tab and newline, DEL, and the C1 controls (``\\x9b`` is a CSI too)."""

_CONTROL_OR_NEWLINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")

_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u2028\u2029]")
"""What ``json.dumps(..., ensure_ascii=False)`` leaves raw but a terminal may act on."""


def printable(text: str, *, multiline: bool = True) -> str:
    r"""``text`` with every control character shown as an escape such as ``\x1b``.

    ESC, BEL, carriage return, DEL and the C1 controls can move the cursor,
    rewrite the screen or ring the bell when printed; session ids, slot texts
    and messages come from data and may hold them. Tab and newline are kept
    when ``multiline`` is true, escaped otherwise (for one-line fields).
    """
    pattern = _CONTROL if multiline else _CONTROL_OR_NEWLINE
    return pattern.sub(_escape, text)


def strip_controls(text: str) -> str:
    """``text`` without control characters but tab and newline (for typed input)."""
    return _CONTROL.sub("", text)


def dumps(data: Any, *, indent: int | None = None) -> str:
    r"""JSON of ``data`` that is safe to print on a terminal.

    :func:`json.dumps` already escapes C0 controls; DEL, the C1 controls and
    the line separators are escaped here too (``\u009b``), which keeps the
    text valid JSON that decodes to the same data.
    """
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 turn``, ``2 turns`` (``many`` for irregular plurals)."""
    form = word if count == 1 else (many if many is not None else word + "s")
    return f"{count:,} {form}"


def _escape(match: re.Match[str]) -> str:
    return repr(match.group())[1:-1]
