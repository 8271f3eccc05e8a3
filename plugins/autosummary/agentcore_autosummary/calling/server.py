"""Letting the provider's server compact the conversation (``strategy="server"``).

OpenAI's Responses API compacts on its server when a request carries
``context_management: [{"type": "compaction", "compact_threshold": N}]`` and
the request's input passes N tokens: the reply then starts with a
``compaction`` item, encrypted, which carries what came before it into later
requests. The core keeps that item on the assistant's message as an
:class:`~agentcore.OpaqueBlock` and the Responses provider sends it back.

Under ``strategy="server"`` the plugin asks for that at its own trigger
(:func:`ask_server`), and when a reply brings an item it becomes the slot's
summary (:func:`take_server_item`): the item's message starts the slot's
window, the messages before it are covered (they stay in the store, as
after any summary) and the record says the summary cannot be read. On any
other provider, or when the server answered a request past the threshold
without an item (a compatible server that ignores the field), the plugin
makes its own summaries, as ``"incremental"`` does.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import attrs

from agentcore import (
    ConflictError,
    Message,
    OpaqueBlock,
    TurnContext,
)
from agentcore_autosummary.applying.storing import context_size_now
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.hooks import after_summary
from agentcore_autosummary.keeping.runtime import SessionRuntime, load_state
from agentcore_autosummary.keeping.state import state_key, state_to_json
from agentcore_autosummary.keeping.summary_info import SummaryInfo
from agentcore_autosummary.log_names import fields, session_name

logger = logging.getLogger("agentcore.autosummary")

SERVER_API = "openai-responses"
"""The API whose server compacts: the ``api`` of the provider and of its items."""

ITEM_TYPE = "compaction"
"""The ``type`` of the item the server returns when it compacted."""

THRESHOLD_FIELD = "context_management"
"""The request body field that asks the server to compact."""


def server_note(covers: int) -> str:
    """The text that stands for a server's item where a summary's text would be."""
    return (
        f"[The provider's server compacted messages 0..{covers - 1} into an encrypted item, "
        "sent back with every request; its content cannot be read.]"
    )


def server_compacts(ctx: TurnContext, config: SummaryConfig) -> bool:
    """Whether the turn's provider is asked to compact: ``strategy="server"`` on its API."""
    return config.strategy == "server" and getattr(ctx.provider, "api", None) == SERVER_API


def ask_server(ctx: TurnContext, config: SummaryConfig) -> None:
    """Ask this call's server to compact past the plugin's trigger (``ctx.request_body``)."""
    if server_compacts(ctx, config):
        threshold = {"type": ITEM_TYPE, "compact_threshold": config.trigger_tokens}
        ctx.request_body[THRESHOLD_FIELD] = [threshold]


def server_item_index(ctx: TurnContext) -> int | None:
    """Raw index of the newest message of this turn that holds a server's compaction item."""
    messages = ctx.slot.messages
    first = max(len(messages) - len(ctx.messages), 0)
    for index in range(len(messages) - 1, first - 1, -1):
        if holds_server_item(messages[index]):
            return index
    return None


def holds_server_item(message: Message) -> bool:
    """Whether ``message`` holds a compaction item of :data:`SERVER_API`."""
    return message.role == "assistant" and any(
        isinstance(block, OpaqueBlock) and block.api == SERVER_API and block.item_type == ITEM_TYPE
        for block in message.content
    )


def carries_server_item(ctx: TurnContext, config: SummaryConfig) -> bool:
    """Whether the turn's request carried a server's item (``strategy="server"`` only).

    Its tokens are estimated from its encrypted JSON, so a request that carries
    one teaches the token correction nothing about text: the plugin learns only
    from the others.
    """
    return config.strategy == "server" and any(
        holds_server_item(message) for message in ctx.slot.load_messages()
    )


def server_declined(ctx: TurnContext, runtime: SessionRuntime, config: SummaryConfig) -> bool:
    """Whether the turn's last call passed the threshold and came back without an item.

    The plugin then summarizes itself; the first time, it warns that the
    server does not compact.
    """
    usage = ctx.response.usage if ctx.response is not None else None
    declined = usage is not None and usage.input_tokens >= config.trigger_tokens
    if declined and not runtime.told_server:
        runtime.told_server = True
        logger.warning(
            "the server did not compact a request of %d input tokens past its threshold of "
            "%d (%s): autosummary makes its own summaries there",
            usage.input_tokens if usage is not None else 0,
            config.trigger_tokens,
            session_name(ctx.session),
        )
    return declined


async def take_server_item(
    ctx: TurnContext, config: SummaryConfig, runtime: SessionRuntime
) -> SummaryInfo | None:
    """Make the server's compaction item of this turn the slot's summary, if it sent one.

    The slot's window then starts at the item's message (``summary_covers``)
    and sends no summary text; the plugin's state counts it as a summary
    (its turn, what it covers, one more generation) and ``after_summary``
    gets a :class:`SummaryInfo` whose ``summary`` is :func:`server_note`,
    with the turn's usage (the server bills its compaction in that call).
    Returns None when this turn brought no item, or when a newer config was
    written meanwhile (the item stays in the window, sent back either way).
    """
    index = server_item_index(ctx)
    slot = ctx.slot
    focused = slot.config.focused
    if index is None or focused is None or index <= focused.summary_covers:
        return None
    started = time.perf_counter()
    before = ctx.response.usage if ctx.response is not None else None
    state = await load_state(ctx, runtime)
    # The plugin's pins and its record of attachments stay: the item covers what they name.
    new_state = attrs.evolve(
        state,
        last_summary_turn=ctx.turn_index,
        last_attempt_turn=ctx.turn_index,
        covered=index,
        generation=state.generation + 1,
        summary=None,
        failures=0,
        segments=(),
    )
    note = server_note(index)
    new_focused = attrs.evolve(focused, summary_override=None, summary_covers=index)
    data: dict[str, Any] = {config.memory_key: note, state_key(slot.id): state_to_json(new_state)}
    try:
        async with runtime.lock:
            await ctx.session.write_slot_config(
                slot.id,
                attrs.evolve(slot.config, mode=new_focused),
                expected_version=slot.version,
                data=data,
                purpose="summary",
            )
            runtime.states[slot.id] = new_state
    except ConflictError:
        logger.info(
            "the server's item of %s: a newer config was written", session_name(ctx.session)
        )
        return None
    logger.info(
        "the server compacted (%s): its item covers messages 0..%d",
        fields(ctx, slot.id, ctx.turn_index),
        index - 1,
    )
    after = await context_size_now(ctx, config, slot.id)
    info = SummaryInfo(
        slot_id=slot.id,
        turn_index=ctx.turn_index,
        reason="server",
        summary=note,
        start=focused.summary_covers,
        end=index,
        covers=index,
        tokens_before=before.input_tokens if before is not None else after.tokens,
        tokens_after=after.tokens,
        usage=before,
        duration=time.perf_counter() - started,
        tokens_estimated=after.estimated,
    )
    await after_summary(ctx, info)
    return info
