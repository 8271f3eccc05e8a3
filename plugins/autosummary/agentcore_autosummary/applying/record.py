"""The record of attachments a summary carries: written by the plugin, never by the model.

Once a summary covers a message holding an image, a file or audio and the
request no longer sends that message, the summary ends with a list naming the
attachment (:class:`~agentcore_autosummary.keeping.attachments.AttachmentRecord`)::

    <the summary>

    Attachments of the summarized messages (no longer in this context):
    - image "cat.png" (image/png, 1,234 bytes), turn 2, message 4
    - file "report.pdf" (application/pdf, 52,100 bytes), turn 5, message 10

It is appended after the summary is judged (the gate, the quotes), so the
checks read the model's text alone, and :func:`without_record` takes it off
again wherever a summary is read back as the previous one: the summarizer
never rewrites the list, the plugin writes it whole each time from the state
(``SummaryState.attachments``). At most :func:`record_lines` lines name one
attachment each, the newest; the older ones are counted on one first line.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.keeping.attachments import AttachmentRecord, describe, place

RECORD_HEADING = "Attachments of the summarized messages (no longer in this context):"
"""The line that opens a summary's record of attachments."""

_ITEM = "- "
_RECORD = re.compile(r"(?:\A|\n\n)" + re.escape(RECORD_HEADING) + r"(?:\n- [^\n]*)*(?=\n\n|\n?\Z)")
_PLURALS = {"image": "images", "file": "files", "audio": "audio"}


def record_lines(config: SummaryConfig) -> int:
    """The most attachments a record names one by one: a line per 50 tokens of the cap, 3+."""
    return max(3, config.summary_tokens // 50)


def record_text(records: Sequence[AttachmentRecord], max_lines: int) -> str:
    """The record of ``records`` (oldest first), heading included; "" when there are none.

    The newest ``max_lines`` are named one per line; the older ones are counted on a
    first line (``- 12 earlier: 9 images, 3 files, messages 0 to 41``).
    """
    if not records:
        return ""
    lines = [RECORD_HEADING]
    named = list(records[-max_lines:]) if max_lines > 0 else []
    older = records[: len(records) - len(named)]
    if older:
        kinds: Counter[str] = Counter()
        for record in older:
            kinds[record.kind] += record.count
        counts = ", ".join(
            f"{count} {_PLURALS.get(kind, kind) if count > 1 else kind}"
            for kind, count in sorted(kinds.items())
        )
        first = min(record.index for record in older)
        last = max(record.index if record.last is None else record.last for record in older)
        total = sum(kinds.values())
        lines.append(f"{_ITEM}{total} earlier: {counts}, messages {first} to {last}")
    lines.extend(f"{_ITEM}{describe(record)}, {place(record)}" for record in named)
    return "\n".join(lines)


def with_record(summary: str, records: Sequence[AttachmentRecord], max_lines: int) -> str:
    """``summary`` followed by the record of ``records`` (``summary`` alone when none).

    A record already at its end (one the summarizer copied from the previous
    summary it read) is taken off first, so the summary carries one record: the
    plugin's.
    """
    text = record_text(records, max_lines)
    summary = without_record(summary)
    if not text:
        return summary
    return f"{summary}\n\n{text}" if summary else text


def without_record(text: str) -> str:
    """``text`` without any record of attachments; ``text`` itself when it holds none.

    A record is :data:`RECORD_HEADING` on a line of its own, at the start or after a
    blank line, and the lines right after it that start with ``"- "``, up to a blank
    line or the end: the plugin's own at the end, and one a summarizer copied from
    the previous summary it read, wherever it put it.
    """
    if RECORD_HEADING not in text:
        return text
    return _RECORD.sub("", text).strip("\n")
