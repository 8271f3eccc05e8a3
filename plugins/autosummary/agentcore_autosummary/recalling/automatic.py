"""Automatic recall: the summarized messages that match the user's new message, in its request.

For a model without tool calls. Before each model call of a turn whose slot has
summarized messages, the user's new message is searched for among them (once per
turn); the matches that hold at least two of its words (or its only word) are added
at the end of the request's context, before the turn's messages, as one message
under :data:`RECALL_LABEL`: after the summary and the verbatim tail, so the cached
prefix of the request stays as it was. It has the summary's role: a user message
by default (what users wrote is never promoted to system instructions), then the
assistant's :data:`RECALL_ACKNOWLEDGEMENT` so roles keep alternating; a system
message when the slot sends its summary as one. The block takes at most
``SummaryConfig.recall_room`` tokens, and no more than the turn's first request
leaves of the window; it is left out of a later call of the turn (a tool round)
that it would push past the window.

The block names the attachments its messages held; a user-role block also brings
back their images themselves (after its text), best match first, while they take at
most half its room, unless ``SummaryConfig.keep_images`` is 0. Files and audio are
named only, and a system block sends text alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcore import ImageBlock, Message, TextBlock, TurnContext
from agentcore.plugin_api import (
    MessageHit,
    StashKey,
    TokenCounter,
    matching_terms,
    system_message,
)
from agentcore_autosummary.deciding.budget import counter_for, turn_budget, turn_model
from agentcore_autosummary.deciding.windows import effective_config
from agentcore_autosummary.hooks import after_recall
from agentcore_autosummary.keeping.runtime import enabled_config, runtime_of, session_correction
from agentcore_autosummary.keeping.summary_info import RecallInfo
from agentcore_autosummary.recalling.history import find_summarized, hit_heading, render_hits

RECALL_LABEL = (
    "Recalled from earlier in this conversation (messages a summary replaced, found by "
    "the user's new message; where they differ from newer messages, the newer win):"
)
"""The first line of the block automatic recall adds to a request."""

RECALL_ACKNOWLEDGEMENT = "OK."
"""The assistant's reply paired with a user-role recalled block."""

RECALLED = StashKey[tuple[Message, ...]]("autosummary recalled block")
"""The turn's recalled block (empty: nothing to add), made at its first model call."""

_MARGIN_TOKENS = 16
_MIN_TOKENS = 48

MIN_MATCHED_TERMS = 2
"""Words of the user's message a recalled message must hold (all of them, when fewer)."""


async def add_recalled(ctx: TurnContext) -> None:
    """Add the turn's recalled block to the request about to be sent, if it fits."""
    config = enabled_config(ctx.config)
    if config is None or config.recall not in ("auto", "both") or not config.window_guard:
        return
    config = await effective_config(ctx, config)
    runtime = runtime_of(ctx.session)
    budget = turn_budget(ctx, config, await session_correction(ctx, runtime))
    if RECALLED not in ctx.stash:
        # The room this request leaves (the first of the turn; a later one may have less).
        left = budget.room - await budget.turn_local(ctx) - _MARGIN_TOKENS
        room = min(config.recall_room, left)
        ctx.stash[RECALLED] = await _recalled_block(ctx, room) if room >= _MIN_TOKENS else ()
    block = ctx.stash[RECALLED]
    if not block:
        return
    before = ctx.context
    base = list(before) if before is not None else list(ctx.slot.load_messages())
    ctx.context = [*base, *block]
    if await budget.turn_size(ctx, exact=False) > budget.window:
        ctx.context = before  # this call has no room for it: sent as it was
        return
    runtime.sent[ctx.slot.id] = await budget.turn_local(ctx)


def image_tokens(counter: TokenCounter, image: ImageBlock) -> int:
    """What ``image`` adds to a message's token count."""
    return counter.count_messages([Message.user([image])]) - counter.count_messages(
        [Message.user([])]
    )


def recalled_images(
    hits: Sequence[MessageHit], counter: TokenCounter, max_tokens: int
) -> list[tuple[int, ImageBlock]]:
    """The images of ``hits`` the block brings back (raw index, image): best hit first.

    While they fit ``max_tokens`` together (half the recall's room); files and audio
    are named only.
    """
    chosen: list[tuple[int, ImageBlock]] = []
    used = 0
    for hit in hits:
        for block in hit.message.content:
            if isinstance(block, ImageBlock):
                cost = image_tokens(counter, block)
                if used + cost <= max_tokens:
                    chosen.append((hit.index, block))
                    used += cost
    return chosen


async def _recalled_block(ctx: TurnContext, max_tokens: int) -> tuple[Message, ...]:
    """The block of the summarized messages that match the user's message (may be empty)."""
    query = ctx.messages[0].text if ctx.messages else ""
    config = enabled_config(ctx.config)
    if not query.strip() or config is None:
        return ()
    hits = await find_summarized(ctx, query, config.recall_limit)
    if hits is None:
        return ()  # nothing to search: no recall, no hook
    wanted = len(matching_terms(query, Message.user(query)))
    needed = min(MIN_MATCHED_TERMS, wanted)
    hits = [hit for hit in hits if needed and len(matching_terms(query, hit.message)) >= needed]
    counter = counter_for(ctx, turn_model(ctx))
    focused = ctx.slot.config.focused
    as_system = focused is not None and focused.summary_role == "system"
    images: list[tuple[int, ImageBlock]] = []
    if not as_system and config.keep_images > 0:
        images = recalled_images(hits, counter, max_tokens // 2)
    room = max_tokens - counter.count_text(RECALL_LABEL) - 8
    room -= sum(image_tokens(counter, image) for _, image in images)
    text = ""
    if hits:
        text = await render_hits(hits, counter, room, frozenset(index for index, _ in images))
    block: tuple[Message, ...] = ()
    if text and as_system:
        block = (system_message(f"{RECALL_LABEL}\n{text}"),)
    elif text:
        lines = {hit.index: hit_heading(hit) for hit in hits}
        # An image goes with its message's line: one the room left out takes its image along.
        shown = [image for index, image in images if f"\n{lines[index]} " in f"\n{text}"]
        user = Message.user([TextBlock(f"{RECALL_LABEL}\n{text}"), *shown])
        block = (user, Message.assistant(RECALL_ACKNOWLEDGEMENT))
    found = tuple(hit.index for hit in hits) if block else ()
    tokens = await counter.count_messages_async(block) if block else 0
    recall = RecallInfo(ctx.slot.id, ctx.turn_index, "auto", query, found, tokens)
    await after_recall(ctx, recall)
    return block
