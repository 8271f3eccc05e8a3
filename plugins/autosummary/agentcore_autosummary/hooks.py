"""Firing the summary hooks: ``before_summary``, ``after_summary``, ``on_summary_error``."""

from __future__ import annotations

import logging

from agentcore import TurnContext
from agentcore.plugin_api import call_each
from agentcore_autosummary.prompt import MESSAGES_PLACEHOLDER
from agentcore_autosummary.summary_info import SummaryInfo, SummaryRequestInfo

logger = logging.getLogger("agentcore.autosummary")

INSTRUCTIONS_HEADING = "Additional instructions for this summary:"
"""Introduces the focus instructions of ``compact`` in the summary prompt."""


def with_instructions(prompt: str, instructions: str | None) -> str:
    """``prompt`` with the focus ``instructions`` placed before the conversation.

    The instructions go right before ``{messages}``, so a prompt that ends
    with the conversation keeps it last, as the model expects.
    """
    if instructions is None:
        return prompt
    head, _, tail = prompt.partition(MESSAGES_PLACEHOLDER)
    focus = f"{INSTRUCTIONS_HEADING} {instructions.strip()}"
    return f"{head.rstrip()}\n\n{focus}\n\n{MESSAGES_PLACEHOLDER}{tail}"


async def before_summary(ctx: TurnContext, request: SummaryRequestInfo) -> bool:
    """Fire ``before_summary``; True unless a hook vetoed the summary."""
    results = await call_each(
        ctx.session.bundle.plugin_manager, "before_summary", isolate=True, ctx=ctx, request=request
    )
    if any(result is False for result in results):
        request.vetoed = True
    return not request.vetoed


async def after_summary(ctx: TurnContext, summary: SummaryInfo) -> None:
    """Fire ``after_summary``; a failing implementation is logged."""
    await call_each(
        ctx.session.bundle.plugin_manager, "after_summary", isolate=True, ctx=ctx, summary=summary
    )


async def summary_error(
    ctx: TurnContext, request: SummaryRequestInfo, error: BaseException
) -> None:
    """Fire ``on_summary_error``; a failing implementation is logged."""
    await call_each(
        ctx.session.bundle.plugin_manager,
        "on_summary_error",
        isolate=True,
        ctx=ctx,
        request=request,
        error=error,
    )
