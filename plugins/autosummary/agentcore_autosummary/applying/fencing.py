r"""The summary as data: the fence a summary is sent in, and its exact reversal.

A Focused slot sends its summary as ``"{summary_label} {summary_override}"``
(``agentcore.slots``), as a user or a system message. The summarizer's reply
is model output: it may imitate the end of the label, a transcript's role
lines (``"user: ..."``, ``"Assistant: ..."``) or a chat template's tokens
(``<|im_start|>``, ``<|eot_id|>``, ``[INST]``), and with
``summary_role="system"`` that text would read as system instructions. So the
plugin stores the summary fenced (:func:`fence_summary`)::

    <summary>
    ...the summary, escaped...
    </summary>

Inside the fence:

- an ``&`` that starts one of the escapes below (``&amp;``, ``&lt;``,
  ``&#91;``) becomes ``&amp;``, so the escaping can be undone exactly; any
  other ``&`` stays (``"Q&A"``, ``"A & B"``), so a summarizer that reads a
  fenced summary back (the prefix request shape) and copies it has no
  escapes to copy in plain prose;
- a ``<`` that could open a tag or a template token (one followed by
  anything but whitespace, a digit, ``=``, ``-``, ``<`` or ``>``) becomes
  ``&lt;``: no ``</summary>`` can end the fence early, and ``<|im_start|>``,
  ``<|eot_id|>``, ``<start_of_turn>``, ``<s>`` or ``<<SYS>>`` are no longer
  tokens;
- the ``[`` of a bracket token (:data:`BRACKET_TOKENS`: ``[INST]``,
  ``[/INST]``, ``[SYSTEM_PROMPT]``...) becomes ``&#91;``;
- a line that starts with a role name (after optional spaces; a word such
  as ``user``, ``assistant`` or ``system`` in any case, :data:`ROLE_NAMES`),
  a role line (``"user: ..."``) or a template's turn header
  (``"assistant"`` alone) alike, and any line that starts with ``>``, is
  quoted with ``"> "``: no line of the fenced text starts with a role name.

:func:`unfence_summary` undoes all of it: ``unfence_summary(fence_summary(x))
== x`` for every text ``x``. A text that is not fenced (a summary stored
before the fence existed) is returned unchanged, so it is read, and sent,
as it was stored. Lines are the ones :meth:`str.splitlines` finds (``\r``,
``\u2028`` and the other separators end a line too).

The fence costs :data:`FENCE_TOKENS` tokens in the context, at most, on top
of the summary; escaping adds a few more only to a summary that holds such
text.
"""

from __future__ import annotations

import re

__all__ = [
    "BRACKET_TOKENS",
    "FENCE_TOKENS",
    "ROLE_NAMES",
    "SUMMARY_CLOSE",
    "SUMMARY_OPEN",
    "fence_summary",
    "is_fenced",
    "unfence_summary",
]

SUMMARY_OPEN = "<summary>"
"""The line that opens a fenced summary."""

SUMMARY_CLOSE = "</summary>"
"""The line that closes a fenced summary."""

FENCE_TOKENS = 8
"""Tokens the fence adds to a summary, at most (``<summary>``, ``</summary>`` and two
line ends: 7 with ``cl100k_base`` and ``o200k_base``; one more for another tokenizer)."""

ROLE_NAMES = (
    "system",
    "user",
    "assistant",
    "human",
    "ai",
    "model",
    "developer",
    "tool",
    "function",
    "ipython",
)
"""The role names a line of a fenced summary may not start with (any case): it is quoted."""

BRACKET_TOKENS = (
    "INST",
    "SYS",
    "SYSTEM_PROMPT",
    "AVAILABLE_TOOLS",
    "TOOL_CALLS",
    "TOOL_RESULTS",
    "TOOL_CONTENT",
)
"""Chat-template tokens written in square brackets (``[INST]``, ``[/INST]``...), escaped."""

_HEAD = SUMMARY_OPEN + "\n"
_TAIL = "\n" + SUMMARY_CLOSE
_QUOTE = "> "
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_START = f"(?<![^{_BREAKS}])"  # the text's start, or right after a line break
_BLANK = f"[^\\S{_BREAKS}]*"  # whitespace within the line
_ROLES = "|".join(ROLE_NAMES)
_BRACKETS = "|".join(BRACKET_TOKENS)
_ESCAPES = re.compile(
    r"&(?=amp;|lt;|#91;)|<(?![\s\d=<>-]|\Z)|\[(?=/?(?:" + _BRACKETS + r")\])",
)
_QUOTED_LINE = re.compile(
    _LINE_START + "(?=>|" + _BLANK + "(?:" + _ROLES + r")\b)",
    re.IGNORECASE,
)
_ENTITIES = {"&": "&amp;", "<": "&lt;", "[": "&#91;"}
_UNESCAPES = re.compile("&(?:amp|lt|#91);")
_DECODED = {entity: char for char, entity in _ENTITIES.items()}
_UNQUOTED_LINE = re.compile(_LINE_START + re.escape(_QUOTE))


def fence_summary(summary: str) -> str:
    """``summary`` escaped and fenced as ``<summary>`` ... ``</summary>`` (see the module).

    The result starts with ``<summary>`` and a line end, ends with a line end
    and ``</summary>``, holds no other ``</summary>`` and no line that starts
    with a role name. :func:`unfence_summary` gives ``summary`` back.
    """
    escaped = _ESCAPES.sub(lambda match: _ENTITIES[match.group()], summary)
    quoted = _QUOTED_LINE.sub(_QUOTE, escaped)
    return f"{_HEAD}{quoted}{_TAIL}"


def is_fenced(text: str) -> bool:
    """Whether ``text`` is a fenced summary (:func:`fence_summary`'s form)."""
    return text.startswith(_HEAD) and text.endswith(_TAIL) and len(text) >= len(_HEAD + _TAIL)


def unfence_summary(text: str) -> str:
    """The summary ``text`` holds: :func:`fence_summary` undone, or ``text`` when not fenced.

    A summary stored without the fence (before it existed) is returned as it
    is, so reading it back never changes it.
    """
    if not is_fenced(text):
        return text
    body = text[len(_HEAD) : len(text) - len(_TAIL)]
    unquoted = _UNQUOTED_LINE.sub("", body)
    return _UNESCAPES.sub(lambda match: _DECODED[match.group()], unquoted)
