"""The retention check: identifiers of the summarized messages that a summary left out.

The identifiers are those :func:`~agentcore_autosummary.text.identifiers.find_identifiers` finds
(links, paths, dates and times, amounts and sizes, versions, codes, names,
long numbers); a summary keeps one when it :func:`~agentcore_autosummary.text.identifiers.holds` it,
verbatim or in another spelling of the same value.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from agentcore import Message
from agentcore.plugin_api import TokenCounter
from agentcore_autosummary.requesting.formatting import format_message
from agentcore_autosummary.text.identifiers import find_identifiers, holds

__all__ = [
    "ALSO_MENTIONED",
    "MAX_APPENDED_IDENTIFIERS",
    "append_missing",
    "log_missing",
    "missing_identifiers",
]

logger = logging.getLogger("agentcore.autosummary")

ALSO_MENTIONED = "Also mentioned:"
"""The start of the line ``retention_check="append"`` adds to a summary."""

MAX_APPENDED_IDENTIFIERS = 30
"""The most identifiers one "Also mentioned" line lists."""


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


def log_missing(where: str, missing: Sequence[str]) -> None:
    """Log the identifiers a summary of ``where`` left out, as a warning.

    ``where`` names the conversation (:mod:`agentcore_autosummary.log_names`).
    """
    logger.warning(
        "%s: the summary leaves out %d identifier(s) of the messages it covers: %s",
        where,
        len(missing),
        ", ".join(missing),
    )
