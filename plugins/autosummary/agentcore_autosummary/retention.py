r"""The retention check: identifiers of the summarized messages that a summary left out.

An identifier is any of (checked in this order, each match removed from the
text before the next kind is looked for):

- a URL: ``http://`` or ``https://`` up to the next space or quote, without
  trailing punctuation;
- an e-mail address;
- a UUID (8-4-4-4-12 hexadecimal digits);
- a file path: two or more ``/``-separated segments, optionally starting
  with ``~``, ``.`` or ``..`` (``/srv/app``, ``./src/main.py``), or a
  Windows path (``C:\Users\me``);
- an ISO date (``2024-05-01``);
- a ticket-like id: capital letters and digits, a hyphen, digits (``JIRA-1432``);
- a number with 3 or more digits (``4096``, ``12,500``, ``3.14159``).

Capitalized names are not identifiers here: too many ordinary words start a
sentence. A summary keeps an identifier when the identifier appears in it
verbatim (a number also counts when it appears without its thousands
separators).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence

from agentcore import Message
from agentcore.tokens import TokenCounter
from agentcore_autosummary.formatting import format_message

logger = logging.getLogger("agentcore.autosummary")

ALSO_MENTIONED = "Also mentioned:"
"""The start of the line ``retention_check="append"`` adds to a summary."""

MAX_APPENDED_IDENTIFIERS = 30
"""The most identifiers one "Also mentioned" line lists."""

_PATTERNS = (
    re.compile(r"https?://[^\s<>\"'`]+"),
    re.compile(r"[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"),
    re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b"),
    re.compile(r"(?<![\w/.~])(?:~|\.{1,2})?(?:/[\w.-]+){2,}/?|\b[A-Za-z]:\\[\w.\\ -]*[\w.]"),
    re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),
    re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d+\b"),
    re.compile(r"(?<![\w.])\d[\d,.]*\d(?![\w])"),
)
_TRAILING = ".,;:!?)]}"


def _clean(found: str) -> str:
    return found.rstrip(_TRAILING)


def find_identifiers(text: str) -> list[str]:
    """The identifiers in ``text`` without repeats, by kind in the module's order."""
    seen: dict[str, None] = {}
    rest = text
    for pattern in _PATTERNS:
        for match in pattern.finditer(rest):
            found = _clean(match.group())
            if pattern is _PATTERNS[-1] and sum(c.isdigit() for c in found) < 3:
                continue
            if found:
                seen.setdefault(found, None)
        rest = pattern.sub(" ", rest)
    return list(seen)


def holds(text: str, identifier: str) -> bool:
    """Whether ``text`` holds ``identifier`` verbatim (a number also without its separators)."""
    if identifier in text:
        return True
    plain = identifier.replace(",", "")
    return plain != identifier and plain in text


def missing_identifiers(
    summary: str,
    previous: str | None,
    messages: Iterable[Message],
    max_tool_result_chars: int,
) -> list[str]:
    """Identifiers of the summary's input (previous summary and messages) missing from it.

    Messages are read as the summary request read them: a tool result only
    in its first ``max_tool_result_chars`` characters.
    """
    texts = [previous or ""]
    texts.extend(format_message(message, max_tool_result_chars) for message in messages)
    found = find_identifiers("\n".join(texts))
    return [identifier for identifier in found if not holds(summary, identifier)]


def append_missing(
    summary: str, missing: Sequence[str], counter: TokenCounter, max_tokens: int
) -> str:
    """``summary`` with an "Also mentioned" line listing ``missing``.

    The line lists at most :data:`MAX_APPENDED_IDENTIFIERS` identifiers, and
    fewer when the summary would otherwise exceed ``max_tokens`` tokens.
    """
    listed = list(missing[:MAX_APPENDED_IDENTIFIERS])
    while listed:
        candidate = f"{summary}\n{ALSO_MENTIONED} {', '.join(listed)}"
        if counter.count_text(candidate) <= max_tokens:
            return candidate
        listed.pop()
    return summary


def log_missing(session_id: str, missing: Sequence[str]) -> None:
    """Log the identifiers a summary left out, as a warning."""
    logger.warning(
        "session %s: the summary leaves out %d identifier(s) of the messages it covers: %s",
        session_id,
        len(missing),
        ", ".join(missing),
    )
