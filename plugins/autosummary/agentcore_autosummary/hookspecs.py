"""The hooks autosummary adds to agentcore: the summary hooks (before, after, on error), recall.

The plugin declares them through the core's ``register_hookspecs`` hook, so
they exist only where autosummary is installed. Implement them with
:data:`agentcore.hookimpl` as any other hook; a plugin that should also load
without autosummary marks them ``@hookimpl(optionalhook=True)``. They are
called with keyword arguments, may be ``async def``, and a failing
implementation is logged on the ``agentcore`` logger, never raised: each is
declared ``@hook_policy(isolate=True)``, and called through
``agentcore_autosummary.hooks.SummaryHooks``.
"""

from __future__ import annotations

from collections.abc import Awaitable

from agentcore import TurnContext
from agentcore.plugin_api import hook_policy, hookspec
from agentcore_autosummary.keeping.summary_info import (
    RecallInfo,
    SummaryInfo,
    SummaryRequestInfo,
)

HOOK_NAMES = ("before_summary", "after_summary", "on_summary_error", "after_recall")
"""The hooks this module declares."""


@hookspec
@hook_policy(isolate=True)
def before_summary(ctx: TurnContext, request: SummaryRequestInfo) -> Awaitable[bool | None] | None:
    """A summary is about to be requested; the hook may edit or veto it.

    Fires once per summary (not per request of a summary made in chunks),
    after the plugin chose what to summarize and before any summary call.
    ``request`` is mutable: replace ``request.prompt`` (keeping its
    ``{messages}`` placeholder) or ``request.messages``, or veto the summary
    with ``request.vetoed = True``. When the summary is asked for in the
    prefix shape (``SummaryConfig.request_shape``), the summarizer reads the
    conversation's last turn request, then the prompt; a hook that replaces
    ``request.messages`` chose what it reads, and gets a transcript of them.

    An exception raised here is logged on the ``agentcore`` logger and does
    not stop the summary.

    :param ctx: The context of the turn (or of the ``compact`` call) the summary belongs to.
    :param request: The summary request, editable.
    :return: False to veto the summary; None or True to let it proceed.
    """


@hookspec
@hook_policy(isolate=True)
def after_summary(ctx: TurnContext, summary: SummaryInfo) -> Awaitable[None] | None:
    """A summary has been applied: stored in the slot and the session data.

    A pure notification, the place for a notice to the user or a metric:
    ``summary`` holds the text, the covered range, the context's tokens
    before and after, the usage and the duration. A summary dropped because
    a newer one was applied meanwhile does not fire it.

    An exception raised here is logged on the ``agentcore`` logger.

    :param ctx: The context of the turn (or of the ``compact`` call) the summary belongs to.
    :param summary: The applied summary.
    """


@hookspec
@hook_policy(isolate=True)
def on_summary_error(
    ctx: TurnContext, request: SummaryRequestInfo, error: BaseException
) -> Awaitable[None] | None:
    """A summary failed: its call raised, timed out, or its result was unusable.

    A pure notification; the session goes on with its context unchanged (an
    automatic summary is retried by the plugin's rules, ``compact`` raises).
    Not fired for a veto, nor when the task making the summary was cancelled.

    An exception raised here is logged on the ``agentcore`` logger.

    :param ctx: The context of the turn (or of the ``compact`` call) the summary belongs to.
    :param request: The summary request that failed, as the hooks left it.
    :param error: What went wrong.
    """


@hookspec
@hook_policy(isolate=True)
def after_recall(ctx: TurnContext, recall: RecallInfo) -> Awaitable[None] | None:
    """A recall searched what a summary left out (``SummaryConfig.recall``).

    Fires for every search: a ``recall_history`` call of the model, and each
    turn's automatic recall that searched (found or not). ``recall`` holds the
    query, the indices of the messages found and the tokens added. A pure
    notification; an exception raised here is logged on the ``agentcore`` logger.

    :param ctx: The context of the turn the recall served.
    :param recall: What was searched and found.
    """
