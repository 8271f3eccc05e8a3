"""Automatic recall: the summarized messages that match the user's new message, in its request.

For a model without tool calls. Before each model call of a turn whose slot has
summarized messages, the user's new message is searched for among them (once per
turn); the matches that hold at least two of its words (or its only word) are put
at the start of that message, in this request only (the turn stores the message as
the user wrote it): under :data:`RECALL_LABEL`, then :data:`NEW_MESSAGE_LABEL`
before the user's own words. No message is added and no role changes, so a chat
template sees the turn it expects (a small model given an extra user message and
an acknowledgement before the turn's own answered nothing), nothing the user wrote
is promoted to system instructions, and the cached prefix of the request (the
summary and the verbatim tail) stays as it was. The recalled part takes at most
``SummaryConfig.recall_room`` tokens, and no more than the turn's first request
leaves of the window; it is left out of a later call of the turn (a tool round)
that it would push past the window.

The recalled part names the attachments its messages held, and also brings back
their images themselves (after its text), best match first, while they take at
most half its room, unless ``SummaryConfig.keep_images`` is 0. Files and audio are
named only.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from agentcore import ContentBlock, ImageBlock, Message, TextBlock, TurnContext
from agentcore.plugin_api import (
    MessageHit,
    StashKey,
    TokenCounter,
    matching_terms,
)
from agentcore_autosummary.applying.fitting import summarize_for_room
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.budget import TurnBudget, counter_for, turn_budget, turn_model
from agentcore_autosummary.deciding.windows import effective_config
from agentcore_autosummary.hooks import after_recall
from agentcore_autosummary.keeping.runtime import enabled_config, runtime_of, session_correction
from agentcore_autosummary.keeping.summary_info import RecallInfo
from agentcore_autosummary.recalling.history import (
    best_sentences,
    current_hits,
    find_summarized,
    hit_heading,
    render_hits,
)
from agentcore_autosummary.requesting.sent import SENT_AS

RECALL_LABEL = (
    "Recalled from earlier in this conversation (messages a summary replaced, found by "
    "the user's new message; where they differ from newer messages, the newer win):"
)
"""The first line of what automatic recall puts at the start of a user's message."""

NEW_MESSAGE_LABEL = "The user's new message:"
"""The line between the recalled messages and the user's own words."""

RECALLED = StashKey[Message | None]("autosummary recalled message")
"""The turn's user message opened by its recalled part (None: nothing to add), made at
its first model call and sent by each call of the turn that has room for it."""

_MARGIN_TOKENS = 16
_MIN_TOKENS = 48
"""The least room a recalled part is made for: below it, a summary makes room first."""

MIN_MATCHED_TERMS = 2
"""Words of the user's message a recalled message must hold (all of them, when fewer)."""


async def add_recalled(ctx: TurnContext) -> None:
    """Put the turn's recalled part at the start of its user message, if the request has room.

    At the turn's first call, matching messages that the request has no room for at all
    (less than :data:`_MIN_TOKENS` left: the context is a few tokens short of the
    window) make the summary the window would soon need now
    (:func:`~agentcore_autosummary.applying.fitting.summarize_for_room`), so the
    question a user asks of an old fact is not the one turn that cannot recall it. A
    request with less room than the part wants sends it shortened to that room.

    The call whose newest message is that copy asks for no prompt-cache entry at its
    end (:attr:`~agentcore.TurnContext.cache_newest`): later turns send the message
    without its part.
    """
    config = enabled_config(ctx.config)
    if config is None or config.recall not in ("auto", "both") or not config.window_guard:
        return
    if not ctx.messages or ctx.messages[0].role != "user":
        return
    config = await effective_config(ctx, config)
    runtime = runtime_of(ctx.session)
    budget = turn_budget(ctx, config, await session_correction(ctx, runtime))
    if RECALLED not in ctx.stash:
        ctx.stash[RECALLED] = await _first_recall(ctx, config, budget)
    copy = ctx.stash[RECALLED]
    if copy is None:
        return
    before = ctx.messages
    ctx.messages = [copy, *before[1:]]
    if await budget.turn_size(ctx, exact=False) > budget.window:
        ctx.messages = before  # this call has no room for it: sent as it was
        return
    ctx.stash.setdefault(SENT_AS, {})[id(copy)] = (copy, before[0])
    runtime.sent[ctx.slot.id] = await budget.turn_local(ctx)
    if len(ctx.messages) == 1:
        # Its newest message is the copy, which the next turns send without the part:
        # a prompt-cache entry written at its end would never be read.
        ctx.cache_newest = False


async def _first_recall(
    ctx: TurnContext, config: SummaryConfig, budget: TurnBudget
) -> Message | None:
    """The turn's user message opened by its recalled part, made at its first call.

    Within the room this request leaves (a later call of the turn may have less), and
    at most :attr:`~agentcore_autosummary.config.SummaryConfig.recall_room`; when no
    part fits, a summary is made first if one may be (see :func:`add_recalled`).
    """
    original = ctx.messages[0]
    hits = await _matching_hits(ctx, original.text, config)
    if hits is None:
        return None  # nothing to search: no recall, no hook
    left = budget.room - await budget.turn_local(ctx) - _MARGIN_TOKENS
    if hits and left < _MIN_TOKENS:
        _, tokens = await _opened(ctx, original, hits, config, config.recall_room)
        if tokens and await summarize_for_room(ctx, config, tokens - max(0, left)):
            hits = await _matching_hits(ctx, original.text, config) or []
            left = budget.room - await budget.turn_local(ctx) - _MARGIN_TOKENS
    room = min(config.recall_room, left)
    if room < _MIN_TOKENS:
        return None  # no room: no recall, no hook
    copy, tokens = (None, 0)
    if hits:
        copy, tokens = await _opened(ctx, original, hits, config, room)
    found = tuple(hit.index for hit in hits) if copy is not None else ()
    recall = RecallInfo(ctx.slot.id, ctx.turn_index, "auto", original.text, found, tokens)
    await after_recall(ctx, recall)
    return copy


def with_recalled(message: Message, recalled: Sequence[ContentBlock]) -> Message:
    """``message`` with ``recalled`` before its own content, under :data:`NEW_MESSAGE_LABEL`.

    A message of one text, with a recalled part of text alone, stays one text.
    """
    head, *images = recalled
    if not isinstance(head, TextBlock):
        raise TypeError("a recalled part starts with its text")
    own = message.content
    if not images and len(own) == 1 and isinstance(own[0], TextBlock):
        joined = f"{head.text}\n\n{NEW_MESSAGE_LABEL}\n{own[0].text}"
        return attrs.evolve(message, content=(TextBlock(joined),))
    return attrs.evolve(message, content=(head, *images, TextBlock(NEW_MESSAGE_LABEL), *own))


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


async def _matching_hits(
    ctx: TurnContext, query: str, config: SummaryConfig
) -> list[MessageHit] | None:
    """The summarized messages that match ``query``, as recall shows them (None: no search).

    Each holds at least :data:`MIN_MATCHED_TERMS` of its words (all, when fewer), cut to
    its sentences that match best, less the values later messages replaced.
    """
    if not query.strip():
        return None
    hits = await find_summarized(ctx, query, config.recall_limit)
    if hits is None:
        return None
    wanted = len(matching_terms(query, Message.user(query)))
    needed = min(MIN_MATCHED_TERMS, wanted)
    hits = [hit for hit in hits if needed and len(matching_terms(query, hit.message)) >= needed]
    hits = [best_sentences(query, hit) for hit in hits]
    return await current_hits(ctx, hits, query)


async def _opened(
    ctx: TurnContext,
    original: Message,
    hits: list[MessageHit],
    config: SummaryConfig,
    max_tokens: int,
) -> tuple[Message | None, int]:
    """``original`` opened by ``hits`` in at most ``max_tokens`` more, and what it adds.

    (None, 0) when none of them fits.
    """
    counter = counter_for(ctx, turn_model(ctx))
    images: list[tuple[int, ImageBlock]] = []
    if config.keep_images > 0:
        images = recalled_images(hits, counter, max_tokens // 2)
    room = max_tokens - counter.count_text(f"{RECALL_LABEL}\n{NEW_MESSAGE_LABEL}") - 8
    room -= sum(image_tokens(counter, image) for _, image in images)
    text = await render_hits(hits, counter, room, frozenset(index for index, _ in images))
    if not text:
        return None, 0
    lines = {hit.index: hit_heading(hit) for hit in hits}
    # An image goes with its message's line: one the room left out takes its image along.
    shown = [image for index, image in images if f"\n{lines[index]} " in f"\n{text}"]
    copy = with_recalled(original, (TextBlock(f"{RECALL_LABEL}\n{text}"), *shown))
    tokens = await counter.count_messages_async([copy]) - await counter.count_messages_async(
        [original]
    )
    return copy, tokens
