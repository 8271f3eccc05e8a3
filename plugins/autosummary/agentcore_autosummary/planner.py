"""What a summary covers: which raw messages are summarized and which stay verbatim."""

from __future__ import annotations

from collections.abc import Sequence

from agentcore import Message
from agentcore.plugin_api import INLINE_COUNT_CHARS, TokenCounter
from agentcore_autosummary.formatting import format_message


def recent_tail_start(
    messages: Sequence[Message], start: int, budget: int, counter: TokenCounter
) -> int:
    """Index where the recent tail kept verbatim begins.

    The tail is the longest run of newest messages, from ``start`` on, whose
    tokens fit in ``budget`` and that begins at a message other than a tool
    result: an assistant message with tool calls and all of its results
    stay on the same side. The walk stops once the budget is spent, so its
    cost depends on the budget, not on the length of the history.
    """
    best = len(messages)
    total = 0
    for index in range(len(messages) - 1, start - 1, -1):
        total += counter.count_message(messages[index])
        if total > budget:
            break
        if messages[index].role != "tool":
            best = index
    return best


def chunk_end(
    messages: Sequence[Message],
    start: int,
    stop: int,
    budget: int,
    counter: TokenCounter,
    max_tool_result_chars: int,
) -> int:
    """End of the next span from ``start`` whose summary input fits in ``budget`` tokens.

    Spans end before a message other than a tool result, so a tool call and
    its results are summarized together. The span holds at least one group
    even when that group alone is over the budget (the summary request then
    cuts its text in the middle, keeping head and tail, with a marker saying
    how many tokens were left out).
    """
    total = 0
    end = start
    for index in range(start, stop):
        entry = format_message(messages[index], max_tool_result_chars)
        if len(entry) > INLINE_COUNT_CHARS:
            # A long entry is measured by its message's cached count, so planning
            # never encodes a large text on the event loop; it is cut to fit later.
            total += counter.count_message(messages[index]) + 2
        else:
            total += counter.count_text(entry) + 2
        at_boundary = index + 1 == stop or messages[index + 1].role != "tool"
        if total > budget and end > start:
            return end
        if at_boundary:
            end = index + 1
    return end if end > start else stop


def plan_chunks(
    messages: Sequence[Message],
    budget: int,
    counter: TokenCounter,
    max_tool_result_chars: int,
    *,
    max_chunks: int,
) -> list[tuple[int, int]]:
    """Up to ``max_chunks`` consecutive spans of ``messages`` from 0, each fitting ``budget``.

    Spans are cut with :func:`chunk_end`. The last span returned ends before
    ``len(messages)`` when more spans would be needed: that rest is left
    for a later summary.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(messages) and len(spans) < max_chunks:
        end = chunk_end(messages, start, len(messages), budget, counter, max_tool_result_chars)
        spans.append((start, end))
        start = end
    return spans
