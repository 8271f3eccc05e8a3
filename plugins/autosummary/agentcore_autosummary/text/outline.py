"""The lines of an indented output (``kubectl describe``, YAML, pretty JSON), each with its keys.

A tool's output says what a value is by where it sits: ``memory:  1280Mi`` under
``Limits:`` under ``app:`` is the app container's memory limit, and ``memory:
672Mi`` a few lines down, under ``Requests:``, is another fact. Read line by line,
the two look alike and neither names a limit. :func:`outline` gives each line with
the keys of the lines it is indented under (``Containers > app > Limits > memory:
1280Mi``), so a search for "memory limit" finds the one line that holds both words,
and the line is one clause: read as a statement (see
:mod:`~agentcore_autosummary.text.statements`), its subject is its whole path, and
``Limits > memory`` and ``Requests > memory`` are two subjects.
"""

from __future__ import annotations

import re

__all__ = ["outline"]

_KEY = re.compile(r"""["']?([^\s:"'][^:"']{0,39}?)["']?\s*:(?=\s|$)""")
"""A line's key: up to 40 characters before a colon that ends the line or precedes a space."""


def outline(text: str) -> list[str]:
    """The lines of ``text`` that hold more than a key, each after the keys above it.

    The lines ``Containers:``, ``  app:``, ``    Limits:`` and ``      memory:  1280Mi``
    give ``Containers > app > Limits > memory: 1280Mi``: a line that holds a key
    alone heads the lines indented under it, a line with a key and a value heads
    its continuation lines (``Labels: app=quotes``, then ``Labels > pod-template-hash=...``)
    and is given itself. Runs of white space become one space; blank lines go.
    """
    heads: list[tuple[int, str]] = []
    given: list[str] = []
    for line in text.splitlines():
        body = " ".join(line.split())
        if not body:
            continue
        indent = len(line) - len(line.lstrip())
        while heads and heads[-1][0] >= indent:
            heads.pop()
        key = _KEY.match(body)
        if key is None or key.end() < len(body):
            given.append(" > ".join([*(head for _, head in heads), body]))
        if key is not None:
            heads.append((indent, key.group(1)))
    return given
