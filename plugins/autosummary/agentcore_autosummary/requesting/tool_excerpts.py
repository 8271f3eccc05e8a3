"""What a summary request carries of a long tool result: what it holds, not its first characters.

A tool's output puts its values anywhere: a ``kubectl describe`` states its
memory limit 545 characters in, a log its error on the last line. The first
``max_tool_result_chars`` characters of it would leave those out. An excerpt
keeps the head and the tail of the output and, between them, the lines that
hold a value (a digit, or a ``key: value`` / ``key=value`` pair), in their
order, as many as the limit holds, and once each: a line that differs from
one already kept only in its digits (a repeated log line) is left out; each
gap is marked ``[…]``.
"""

from __future__ import annotations

import functools
import re

GAP = "[…]"
"""Marks the lines an excerpt leaves out."""

MAX_LINE_CHARS = 240
"""A value line longer than this is cut to it (its head) in an excerpt."""

_VALUE_LINE = re.compile(r"\d|\w\s*[:=]\s*\S")
_DIGITS = re.compile(r"\d+")


@functools.lru_cache(maxsize=256)
def tool_result_excerpt(text: str, limit: int) -> str:
    """``text`` whole when it has at most ``limit`` characters, else its excerpt.

    The excerpt holds at most ``limit`` characters, gap marks included: a
    quarter for the head, a quarter for the tail (each of whole lines, or
    one cut line), the rest for the value lines between them.
    """
    if len(text) <= limit:
        return text
    if limit < 8 * len(GAP):
        return text[:limit]
    lines = text.splitlines()
    head, first = _lines_within(lines, limit // 4)
    tail, last = _lines_within(lines[first:][::-1], limit // 4, from_end=True)
    tail.reverse()
    middle = lines[first : len(lines) - last]
    room = limit - _size(head) - _size(tail) - 2 * (len(GAP) + 1)
    picked: list[str] = []
    shapes: set[str] = set()
    skipped = False
    for line in middle:
        value = line.strip()
        shape = _DIGITS.sub("#", value)
        if not value or not _VALUE_LINE.search(value) or shape in shapes:
            skipped = True
            continue
        value = value[:MAX_LINE_CHARS]
        cost = len(value) + 1 + (len(GAP) + 1 if skipped and picked else 0)
        if cost > room:
            skipped = True
            continue
        if skipped and picked:
            picked.append(GAP)
        picked.append(value)
        shapes.add(shape)
        room -= cost
        skipped = False
    parts = [*head, GAP, *picked, GAP, *tail] if picked else [*head, GAP, *tail]
    return "\n".join(parts)[:limit]


def _lines_within(lines: list[str], room: int, *, from_end: bool = False) -> tuple[list[str], int]:
    """The first of ``lines`` within ``room`` characters (or the first one cut), and how many.

    ``from_end``: ``lines`` run backwards (a tail), so a line cut keeps its end.
    """
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > room:
            break
        kept.append(line)
        size += len(line) + 1
    if not kept and lines:
        width = max(room - 1, 0)
        return [lines[0][-width:] if from_end and width else lines[0][:width]], 1
    return kept, len(kept)


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)
