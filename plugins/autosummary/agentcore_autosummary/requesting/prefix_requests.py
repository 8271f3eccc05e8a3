"""Summary requests that ride the prompt cache: the last turn request, then the instruction.

When the summarizer is the turns' own provider and model
(``SummaryConfig.request_shape``), a summary request sends exactly what the
conversation's last turn request sent (system prompt, tools, messages, in
the same order) followed by the model's reply to it, and appends the
summary instruction as a final user message. A provider that cached that
prefix for the turn bills it again as cache reads: only the instruction and
the reply's tokens are new. The summary that comes back is checked by the
gate and applied exactly as a transcript summary is.
"""

from __future__ import annotations

import functools
import logging

from agentcore import Message, TurnContext
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.pins import unpinned
from agentcore_autosummary.deciding.plan import Plan
from agentcore_autosummary.requesting.prompt import (
    DEFAULT_SUMMARY_PROMPT,
    MESSAGES_PLACEHOLDER,
    PREFIX_NEW_MESSAGES_INSTRUCTION,
    PREFIX_SUMMARY_INSTRUCTION,
    PREVIOUS_PLACEHOLDER,
    summary_words,
)
from agentcore_autosummary.requesting.sent import SentRequest, position_of

logger = logging.getLogger("agentcore.autosummary")


def _kept_verbatim(kept: int) -> str:
    """The words saying that the last ``kept`` messages stay verbatim after the summary."""
    return f"except its last {kept} messages, which stay verbatim after the summary"


def prefix_note(kept: int) -> str:
    """What replaces ``{messages}`` in the instruction of a prefix-shaped summary request.

    ``kept`` is how many messages at the end of the conversation stay
    verbatim after the summary, so the summary need not cover them.
    """
    scope = "all of it" if kept == 0 else _kept_verbatim(kept)
    return (
        "(The material to summarize is the conversation above this message, with the "
        f"earlier summary in it if there is one: {scope}. Reply with the summary only, "
        "and call no tool.)"
    )


PREVIOUS_IN_PREFIX = "(the earlier summary at the start of the conversation above)"
"""What replaces ``{previous}`` in a prefix-shaped request's instruction."""


def prefix_instruction(template: str, kept: int, cap: int, *, new_only: bool = False) -> str:
    """The summary instruction of a prefix-shaped request: ``template`` pointing above.

    For the default prompt, :data:`PREFIX_SUMMARY_INSTRUCTION`, asking for at
    most :func:`summary_words` of ``cap`` words (with ``new_only``,
    :data:`PREFIX_NEW_MESSAGES_INSTRUCTION`: the messages after the earlier
    summary alone). For a prompt of your own,
    ``{messages}`` in ``template`` is replaced by :func:`prefix_note`, and a
    ``{previous}`` by :data:`PREVIOUS_IN_PREFIX` (the earlier summary is
    already part of the conversation above); the rest of the prompt is the
    same as in a transcript request.
    """
    if template == DEFAULT_SUMMARY_PROMPT:
        scope = "" if kept == 0 else f", {_kept_verbatim(kept)}"
        words = summary_words(cap)
        if new_only:
            return PREFIX_NEW_MESSAGES_INSTRUCTION.format(scope=scope, words=words)
        return PREFIX_SUMMARY_INSTRUCTION.format(scope=scope, words=words)
    instruction = template.replace(MESSAGES_PLACEHOLDER, prefix_note(kept))
    return instruction.replace(PREVIOUS_PLACEHOLDER, PREVIOUS_IN_PREFIX).strip()


def wants_prefix(ctx: TurnContext, config: SummaryConfig) -> bool:
    """Whether the summaries of ``ctx`` are asked for in the prefix shape.

    ``request_shape="auto"``: when no ``summary_provider`` is set and the
    ``summary_model``, if set, is the agent's model.
    """
    if config.request_shape != "auto":
        return config.request_shape == "prefix"
    if config.summary_provider is not None:
        return False
    return config.summary_model is None or config.summary_model == ctx.session.agent.model


def prefix_messages(
    sent: SentRequest, plan: Plan, template: str, cap: int, *, new_only: bool = False
) -> list[Message] | None:
    """The messages of a prefix-shaped request for ``plan``, or None when it cannot be one.

    ``sent``'s messages, then the instruction made of ``template`` for a
    summary capped at ``cap`` tokens (:func:`prefix_instruction`). None when
    ``sent`` does not hold every message of the plan (the request predates
    them), when a ``before_summary``
    hook replaced the plan's messages (it chose what the summary reads),
    or when its reply asked for tools or said nothing (an instruction cannot
    follow it on the wire). ``new_only`` asks for the messages after the
    earlier summary alone; only the default prompt has that instruction (None
    for a prompt of your own).
    """
    if new_only and template != DEFAULT_SUMMARY_PROMPT:
        return None
    if plan.messages != unpinned(plan.slot, plan.start, plan.end):
        return None  # a before_summary hook chose what the summary reads: a transcript
    reply = sent.reply
    if reply.tool_calls or not reply.text.strip():
        return None
    messages = sent.messages
    end = position_of(messages, plan.messages)
    if end is None:
        return None
    kept = len(messages) - end
    instruction = prefix_instruction(template, kept, cap, new_only=new_only)
    return [*messages, instruction_message(instruction)]


@functools.lru_cache(maxsize=64)
def instruction_message(instruction: str) -> Message:
    """The user message of a prefix-shaped request's ``instruction``, one object per text.

    A session's instructions repeat (the same prompt, cap and kept messages), and a
    message keeps its token counts: the same object is counted once per counter.
    """
    return Message.user(instruction)
