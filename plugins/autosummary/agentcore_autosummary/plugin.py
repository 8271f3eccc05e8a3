"""The hook implementations: the summary checkpoint after every turn, and the CLI's additions."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

from agentcore import (
    ContextSlot,
    ModelCallInfo,
    PluginSetting,
    SlotConfig,
    TurnContext,
    hookimpl,
)
from agentcore.plugin_api import SessionHandle, Tool
from agentcore_autosummary import hookspecs
from agentcore_autosummary.applying.fitting import ATTEMPTED_KEY, fit_request
from agentcore_autosummary.applying.full_mode import focus_full_slot
from agentcore_autosummary.applying.tail_pruning import prune_to_tail
from agentcore_autosummary.calling.pipeline import catch_up, summarize_quietly
from agentcore_autosummary.calling.server import (
    ask_server,
    carries_server_item,
    server_compacts,
    server_declined,
    take_server_item,
)
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.budget import (
    counter_for,
    turn_model,
)
from agentcore_autosummary.deciding.pins import check_pins_fit
from agentcore_autosummary.deciding.plan import plan_next, start_attempt
from agentcore_autosummary.deciding.seed_rule import cumulative_due
from agentcore_autosummary.deciding.tails import (
    messages_due,
    unsummarized,
    window_drops,
)
from agentcore_autosummary.deciding.trigger import is_due, may_retry, measure
from agentcore_autosummary.deciding.windows import effective_config, known_config
from agentcore_autosummary.keeping.attachment_turns import note_attachment_turns
from agentcore_autosummary.keeping.runtime import (
    SETTING,
    covered_of,
    enabled_config,
    learn,
    load_state,
    note_turn_start,
    runtime_of,
    session_correction,
)
from agentcore_autosummary.recalling.automatic import add_recalled
from agentcore_autosummary.recalling.tool import recall_tools
from agentcore_autosummary.requesting.provider import check_summary_provider
from agentcore_autosummary.requesting.sent import record_sent

if TYPE_CHECKING:
    import argparse

    from agentcore.cli.plugin_api import ChatSetup, CommandGroup

logger = logging.getLogger("agentcore.autosummary")

# -- hooks ------------------------------------------------------------------------


@hookimpl
def register_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Declare the summary hooks (:mod:`agentcore_autosummary.hookspecs`)."""
    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def register_settings() -> Sequence[PluginSetting]:
    """Declare ``summary_config``: a :class:`SummaryConfig` or a dict of its fields.

    At build, a ``summary_provider`` name is checked against the providers
    the bundle's plugins register (:func:`check_summary_provider`).
    """
    return [
        PluginSetting(
            SETTING,
            SummaryConfig.coerce,
            "Automatic conversation summaries (autosummary).",
            check=check_summary_provider,
        )
    ]


@hookimpl
def check_slot_config(session: SessionHandle, slot: ContextSlot, config: SlotConfig) -> None:
    """Refuse pins that cannot fit ``max_context_tokens`` (see :func:`check_pins_fit`).

    The pins the plugin keeps images with are not counted, when this live session
    has read the slot's state: they give way to a request that does not fit.
    """
    summary_config = enabled_config(session.bundle.config)
    if summary_config is not None:
        summary_config = known_config(session.bundle, summary_config)
        state = runtime_of(session).states.get(slot.id)
        kept = state.kept if state is not None else ()
        check_pins_fit(session, slot, config, summary_config, kept)


@hookimpl
async def before_model_call(ctx: TurnContext) -> None:
    """Keep the request about to be sent inside ``max_context_tokens`` (see :func:`fit_request`).

    A Full slot is switched to the Focused mode first, unless the app chose
    the mode (see :mod:`agentcore_autosummary.applying.full_mode`). With
    ``recall="auto"`` the summarized messages that match the user's message are
    added last (see :mod:`agentcore_autosummary.recalling.automatic`). Under
    ``strategy="server"`` the request asks the server to compact past the trigger
    (see :mod:`agentcore_autosummary.calling.server`).
    """
    config = enabled_config(ctx.config)
    effective = None
    if config is not None:
        await focus_full_slot(ctx)
        effective = await effective_config(ctx, config)
        ask_server(ctx, effective)
    await fit_request(ctx, effective)
    await add_recalled(ctx)


@hookimpl
async def offer_tools(ctx: TurnContext) -> list[Tool]:
    """Offer ``recall_history`` once messages are summarized (``recall="tool"``)."""
    return await recall_tools(ctx)


@hookimpl
def after_model_call(ctx: TurnContext, call: ModelCallInfo) -> None:
    """Remember the turn request just sent, the prefix a summary request reuses (sent.py)."""
    if enabled_config(ctx.config) is not None:
        record_sent(ctx, call)


@hookimpl
async def post_turn_end(ctx: TurnContext) -> None:
    """The summary checkpoint: learn from the reply's usage, summarize at the watermark.

    First the turn of the attachments the turn sent is noted, for the record of a
    later summary (:mod:`agentcore_autosummary.keeping.attachment_turns`).
    """
    config = enabled_config(ctx.config)
    if config is None:
        return
    config = await effective_config(ctx, config)
    runtime = runtime_of(ctx.session)
    slot = ctx.slot
    note_turn_start(ctx, runtime)
    await note_attachment_turns(ctx, runtime)
    sent = runtime.sent.pop(slot.id, None)
    usage = ctx.response.usage if ctx.response is not None else None
    if sent is not None and usage is not None and not carries_server_item(ctx, config):
        await learn(ctx, runtime, turn_model(ctx), sent, usage.input_tokens)
    correction = await session_correction(ctx, runtime)
    model = turn_model(ctx)
    tokens = await measure(ctx, config, counter_for(ctx, model), correction.factor(model))
    if server_compacts(ctx, config) and await take_server_item(ctx, config, runtime) is not None:
        return
    pending = runtime.pending.get(slot.id)
    if pending is not None and not pending.done():
        return
    attempted = ctx.stash.get(ATTEMPTED_KEY, None)
    if attempted is not None and slot.id in attempted:
        return  # this turn already tried before a call
    state = await load_state(ctx, runtime)
    covered = covered_of(slot, state)
    if (
        server_compacts(ctx, config)
        and not server_declined(ctx, runtime, config)
        and not window_drops(slot, covered)
    ):
        return  # the server compacts when a request passes the trigger
    if config.trigger == "cumulative":
        due = await cumulative_due(ctx, config) or window_drops(slot, covered)
    else:
        due = may_retry(state, ctx.turn_index) and (  # else wait out the failures' backoff
            is_due(config, state, ctx.turn_index, tokens)
            or messages_due(config, state, ctx.turn_index, unsummarized(slot, covered))
            or window_drops(slot, covered)
        )
    if not due:
        await prune_to_tail(ctx, config, runtime, state)
        return
    plan = (await plan_next(ctx, config, runtime)).plan
    if plan is None:
        return
    start_attempt(ctx, runtime, state)
    if config.mode == "inline":
        await summarize_quietly(ctx, config, runtime, plan, "watermark")
    else:
        work = catch_up(ctx, config, runtime, plan, "watermark")
        runtime.pending[slot.id] = ctx.session.run_in_background(work)


# -- the command line (agentcore_autosummary.cli, imported only when the CLI runs) ----------


@hookimpl
def register_commands(commands: CommandGroup, sessions: CommandGroup) -> None:
    """Add ``agentcore demo`` and ``agentcore sessions compact``."""
    from agentcore_autosummary.cli import demo_command, sessions_compact

    demo_command.register(commands)
    sessions_compact.register(sessions)


@hookimpl
def register_chat_options(parser: argparse.ArgumentParser) -> None:
    """Add the summary options to ``agentcore chat``."""
    from agentcore_autosummary.cli.chat import add_chat_options

    add_chat_options(parser)


@hookimpl
def register_chat_commands(chat: ChatSetup) -> None:
    """Enable summaries in the chat, with ``/compact``, ``/summary`` and their notices."""
    from agentcore_autosummary.cli.chat import setup_chat

    setup_chat(chat)
