"""Firing the summary hooks: ``before_summary``, ``after_summary``, ``on_summary_error``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agentcore import TurnContext
from agentcore.plugin_api import call_hook
from agentcore_autosummary.keeping.summary_info import (
    RecallInfo,
    SummaryInfo,
    SummaryRequestInfo,
)
from agentcore_autosummary.requesting.prompt import MESSAGES_PLACEHOLDER

if TYPE_CHECKING:
    import pluggy

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


class SummaryHooks:
    """autosummary's hooks of one plugin manager, as typed keyword-only methods.

    Each fires the hook of its name (:mod:`agentcore_autosummary.hookspecs`)
    through :func:`agentcore.hook_calls.call_hook`, under the policy its spec
    declares (isolated: a failing implementation is logged); wrappers run
    around them.
    """

    def __init__(self, plugin_manager: pluggy.PluginManager) -> None:
        self._pm = plugin_manager

    async def before_summary(self, *, ctx: TurnContext, request: SummaryRequestInfo) -> list[bool]:
        """A summary is about to be requested; the non-None answers (False vetoes)."""
        results: list[bool] = await call_hook(
            self._pm.hook.before_summary, ctx=ctx, request=request
        )
        return results

    async def after_summary(self, *, ctx: TurnContext, summary: SummaryInfo) -> None:
        """A summary has been applied."""
        await call_hook(self._pm.hook.after_summary, ctx=ctx, summary=summary)

    async def on_summary_error(
        self, *, ctx: TurnContext, request: SummaryRequestInfo, error: BaseException
    ) -> None:
        """A summary failed with ``error``."""
        await call_hook(self._pm.hook.on_summary_error, ctx=ctx, request=request, error=error)

    async def after_recall(self, *, ctx: TurnContext, recall: RecallInfo) -> None:
        """A recall searched what a summary left out."""
        await call_hook(self._pm.hook.after_recall, ctx=ctx, recall=recall)


async def before_summary(ctx: TurnContext, request: SummaryRequestInfo) -> bool:
    """Fire ``before_summary``; True unless a hook vetoed the summary."""
    hooks = SummaryHooks(ctx.session.bundle.plugin_manager)
    results = await hooks.before_summary(ctx=ctx, request=request)
    if any(result is False for result in results):
        request.vetoed = True
    return not request.vetoed


async def after_summary(ctx: TurnContext, summary: SummaryInfo) -> None:
    """Fire ``after_summary``; a failing implementation is logged."""
    await SummaryHooks(ctx.session.bundle.plugin_manager).after_summary(ctx=ctx, summary=summary)


async def summary_error(
    ctx: TurnContext, request: SummaryRequestInfo, error: BaseException
) -> None:
    """Fire ``on_summary_error``; a failing implementation is logged."""
    hooks = SummaryHooks(ctx.session.bundle.plugin_manager)
    await hooks.on_summary_error(ctx=ctx, request=request, error=error)


async def after_recall(ctx: TurnContext, recall: RecallInfo) -> None:
    """Fire ``after_recall``; a failing implementation is logged."""
    await SummaryHooks(ctx.session.bundle.plugin_manager).after_recall(ctx=ctx, recall=recall)
