"""Tool calls and their results put where the APIs want them, before a request is encoded.

Both OpenAI's Chat Completions and Anthropic's Messages API refuse a request
in which a tool result does not directly follow the assistant message that
made the call, or in which a call has no result. A request built from part
of a conversation (after a plugin rewrote it, a cut, or a plugin's own selection) can
hold either. :func:`pair_tool_results` repairs the list without dropping
anything:

- the results of an assistant message's calls found later in the list are
  moved to directly after it, in the order of the calls;
- a tool result whose call is not in the list becomes a user message that
  says which call it answers (:data:`ORPHAN_RESULT`), its content kept;
- a call that has no result anywhere in the list becomes text in its
  assistant message (:data:`UNANSWERED_CALL`), name and arguments kept.

A list that is already valid comes back unchanged (the same objects, in the
same order).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from agentcore.messages import ContentBlock, Message, TextBlock, ToolUseBlock

ORPHAN_RESULT = "[Result of tool call {id}{error}, whose call is not part of this request]"
"""The text put before the content of a tool result sent without its call."""

UNANSWERED_CALL = "[Call of tool {name} with arguments {arguments}; it has no recorded result]"
"""The text a tool call sent without its result becomes."""


def pair_tool_results(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every tool result directly after its call (see the module docstring)."""
    claimed: set[int] = set()
    placed: list[Message] = []
    for position, message in enumerate(messages):
        if position in claimed:
            continue
        if message.role == "tool":
            placed.append(_orphan(message))
            continue
        calls = message.tool_calls if message.role == "assistant" else ()
        if not calls:
            placed.append(message)
            continue
        results: dict[str, int] = {}
        wanted = {call.id for call in calls}
        for later in range(position + 1, len(messages)):
            candidate = messages[later]
            if (
                later not in claimed
                and candidate.role == "tool"
                and candidate.tool_call_id in wanted
                and candidate.tool_call_id not in results
            ):
                results[candidate.tool_call_id or ""] = later
        claimed.update(results.values())
        placed.append(_without_unanswered(message, results))
        placed.extend(messages[results[call.id]] for call in calls if call.id in results)
    return placed


def _orphan(message: Message) -> Message:
    error = ", which failed" if message.is_error else ""
    note = TextBlock(ORPHAN_RESULT.format(id=message.tool_call_id, error=error))
    return Message("user", [note, *message.content])


def _without_unanswered(message: Message, answered: dict[str, int]) -> Message:
    if all(call.id in answered for call in message.tool_calls):
        return message
    blocks: list[ContentBlock] = []
    for block in message.content:
        if isinstance(block, ToolUseBlock) and block.id not in answered:
            arguments = json.dumps(dict(block.arguments), ensure_ascii=False, sort_keys=True)
            blocks.append(TextBlock(UNANSWERED_CALL.format(name=block.name, arguments=arguments)))
        else:
            blocks.append(block)
    return Message("assistant", blocks)
