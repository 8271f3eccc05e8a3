"""What a summary covers: which raw messages are summarized and which stay verbatim."""

from __future__ import annotations

from collections.abc import Sequence

from agentcore import Message
from agentcore.plugin_api import TokenCounter
from agentcore_autosummary.requesting.sizing import entry_tokens_async


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


async def chunk_end(
    messages: Sequence[Message],
    start: int,
    stop: int,
    budget: int,
    counter: TokenCounter,
    max_tool_result_chars: int,
) -> int:
    """End of the next span from ``start`` whose summary input fits in ``budget`` tokens.

    Entries are sized from their messages' stored counts
    (:func:`~agentcore_autosummary.requesting.sizing.entry_tokens_async`): the walk reads
    the messages of this span and one more, and tokenizes only those that
    have no count yet (a long one in a worker thread). Spans end before a
    message other than a tool result, so a tool call and its results are
    summarized together. The span holds at least one group even when that
    group alone is over the budget (the summary request then cuts its text
    in the middle, keeping head and tail, with a marker saying how many
    tokens were left out).
    """
    end, _ = await _chunk(messages, start, stop, budget, counter, max_tool_result_chars)
    return end


async def _chunk(
    messages: Sequence[Message],
    start: int,
    stop: int,
    budget: int,
    counter: TokenCounter,
    max_tool_result_chars: int,
) -> tuple[int, int]:
    """:func:`chunk_end`, and the estimated tokens of the span's entries (their sum)."""
    total = 0
    end = start
    sized = 0  # the tokens of the entries start:end
    for index in range(start, stop):
        total += await entry_tokens_async(counter, messages[index], max_tool_result_chars)
        at_boundary = index + 1 == stop or messages[index + 1].role != "tool"
        if total > budget and end > start:
            return end, sized
        if at_boundary:
            end, sized = index + 1, total
    return (end, sized) if end > start else (stop, total)


async def plan_chunks(
    messages: Sequence[Message],
    budget: int,
    counter: TokenCounter,
    max_tool_result_chars: int,
    *,
    max_chunks: int,
    sizes: list[int] | None = None,
) -> list[tuple[int, int]]:
    """Up to ``max_chunks`` consecutive spans of ``messages`` from 0, each fitting ``budget``.

    Spans are cut with :func:`chunk_end`. The last span returned ends before
    ``len(messages)`` when more spans would be needed: that rest is left
    for a later summary, and its messages are neither read nor counted.
    ``sizes``, when given, receives each span's estimated tokens (the sum of its
    entries', :func:`~agentcore_autosummary.requesting.sizing.transcript_tokens`),
    so the request of a span is not sized again.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(messages) and len(spans) < max_chunks:
        end, sized = await _chunk(
            messages, start, len(messages), budget, counter, max_tool_result_chars
        )
        spans.append((start, end))
        if sizes is not None:
            sizes.append(sized)
        start = end
    return spans


async def even_chunks(
    messages: Sequence[Message],
    budget: int,
    counter: TokenCounter,
    max_tool_result_chars: int,
    *,
    max_chunks: int,
    sizes: list[int],
) -> list[tuple[int, int]]:
    """:func:`plan_chunks`, but spans of about one size when more than one is needed.

    Filling each span to ``budget`` leaves the last with what is left over, as
    little as one message; when the spans cover every message, they are cut again
    to the mean of their sizes, raised by 3% at a time until as many spans hold
    them all, else kept as they were. ``sizes`` receives each span's tokens.
    """
    spans = await plan_chunks(
        messages, budget, counter, max_tool_result_chars, max_chunks=max_chunks, sizes=sizes
    )
    if len(spans) < 2 or spans[-1][1] < len(messages):
        return spans
    target = -(-sum(sizes) // len(spans))
    while target < budget:
        even: list[int] = []
        again = await plan_chunks(
            messages, target, counter, max_tool_result_chars, max_chunks=len(spans), sizes=even
        )
        if again[-1][1] == len(messages):
            sizes[:] = even
            return again
        target += max(1, target // 32)
    return spans
