"""Google-style docstrings read for a tool: its description and its arguments' descriptions."""

from __future__ import annotations

import re

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Returns?|Yields?|"
    r"Raises|Examples?|Notes?|Attributes|Warnings?|See Also|References|Todo):\s*$"
)
_ARG_SECTION = ("Args", "Arguments", "Parameters", "Params", "Keyword Args", "Keyword Arguments")
_ARG_ENTRY = re.compile(r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
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
