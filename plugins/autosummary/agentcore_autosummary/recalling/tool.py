"""``recall_history``: the tool that lets the model search what a summary left out."""

from __future__ import annotations

import re

from agentcore import TurnContext
from agentcore.plugin_api import Tool
from agentcore_autosummary.deciding.budget import counter_for, turn_model
from agentcore_autosummary.deciding.windows import effective_config
from agentcore_autosummary.hooks import after_recall
from agentcore_autosummary.keeping.runtime import enabled_config
from agentcore_autosummary.keeping.summary_info import RecallInfo
from agentcore_autosummary.recalling.history import (
    MAX_RECALLED,
    best_sentences,
    current_hits,
    find_summarized,
    render_hits,
    summarized_part,
)

RECALL_TOOL_NAME = "recall_history"
"""The name the model calls the recall tool by."""


async def recall_tools(ctx: TurnContext) -> list[Tool]:
    """The recall tool for this turn, when ``recall`` asks for it and messages are summarized."""
    config = enabled_config(ctx.config)
    if config is None or config.recall not in ("tool", "both"):
        return []
    if await summarized_part(ctx) is None:
        return []
    room = (await effective_config(ctx, config)).recall_room
    counter = counter_for(ctx, turn_model(ctx))

    async def recall_history(query: str, limit: int = 5, turns: str = "") -> str:
        """Search the earlier part of this conversation, which a summary replaced, word for word.

        Use it when the summary lacks a detail that was said before (a name, a number,
        a path, a decision): the messages that best match are returned with the turn
        they were said in and who wrote them, each by its sentences that hold the
        most words of the query.

        :param query: The words to look for: names, numbers, what was said.
        :param limit: How many messages to return, 1 to 10.
        :param turns: Only messages of these turns, as the summary's parts name them:
            "7" or "7-12" (empty: any turn).
        """
        span = turn_range(turns)
        if isinstance(span, str):
            return span
        hits = await find_summarized(ctx, query, max(1, min(limit, MAX_RECALLED)), span) or []
        newest = ctx.messages[0].text if ctx.messages and ctx.messages[0].role == "user" else ""
        best = [best_sentences(query, hit) for hit in hits]
        best = await current_hits(ctx, best, newest)
        if best:
            answer = await render_hits(best, counter, room)
        elif hits:
            answer = (
                f"No earlier message of this conversation matches {query!r} with a value "
                "still current: later messages changed those that match."
            )
        elif span is not None:
            answer = f"No earlier message of turns {turns.strip()} matches {query!r}."
        else:
            answer = f"No earlier message of this conversation matches {query!r}."
        found = tuple(hit.index for hit in best)
        tokens = counter.count_text(answer)
        await after_recall(
            ctx, RecallInfo(ctx.slot.id, ctx.turn_index, "tool", query, found, tokens)
        )
        return answer

    return [Tool.from_function(recall_history, name=RECALL_TOOL_NAME)]


_TURNS = re.compile(r"\s*(\d+)\s*(?:(?:-|to|\.\.)\s*(\d+)\s*)?")


def turn_range(text: str) -> tuple[int, int] | str | None:
    """The turns ``text`` names ("7", "7-12"): None for any; a str says what is wrong."""
    if not text.strip():
        return None
    found = _TURNS.fullmatch(text)
    if found is None:
        return f"turns must be a turn or a range of turns, such as 7 or 7-12, not {text!r}."
    first = int(found.group(1))
    last = int(found.group(2)) if found.group(2) is not None else first
    return (first, last) if first <= last else (last, first)
