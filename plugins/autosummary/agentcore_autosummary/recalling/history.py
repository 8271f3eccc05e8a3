"""The search behind recall: the summarized part of a slot's stored history, and its text."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import attrs

from agentcore import ContentBlock, ImageBlock, Message, TextBlock, TurnContext
from agentcore.plugin_api import (
    MessageHit,
    SearchableStore,
    TokenCounter,
    matching_terms,
    window_start,
)
from agentcore_autosummary.calling.off_loop import cut_middle
from agentcore_autosummary.judging.pruning import TAIL_CHARS, newest_tail, without_superseded
from agentcore_autosummary.judging.quoting import written_text
from agentcore_autosummary.keeping.attachments import attachments, describe, record_of
from agentcore_autosummary.log_names import at_turn
from agentcore_autosummary.text.outline import outline
from agentcore_autosummary.text.sentences import sentences
from agentcore_autosummary.text.subjects import word_uses
from agentcore_autosummary.text.words import folded

logger = logging.getLogger("agentcore.autosummary")

MAX_RECALLED = 10
"""The most messages one recall returns."""


NARROWED_CANDIDATES = 100
"""How many of the best matches a recall narrowed to some turns looks among."""


async def summarized_part(ctx: TurnContext) -> tuple[int, frozenset[int]] | None:
    """Where the slot's request starts in its raw history, and its pinned messages before it.

    The messages before that start are those a summary replaced (and, with
    ``max_recent_messages``, those the window dropped). None when the request
    carries every message (a Full slot, nothing summarized yet), or the store
    cannot search.
    """
    focused = ctx.slot.config.focused
    if focused is None or not isinstance(ctx.store, SearchableStore):
        return None
    start = window_start(ctx.slot.config, ctx.slot.message_count())
    if start <= 0:
        return None
    return start, frozenset(index for index in focused.pinned if index < start)


async def find_summarized(
    ctx: TurnContext, query: str, limit: int, turns: tuple[int, int] | None = None
) -> list[MessageHit] | None:
    """The summarized messages of the slot that best match ``query``, best first.

    Never a message the request still carries (the verbatim tail, a pinned message),
    never another slot's or session's. With ``turns`` (first, last), only the
    messages those turns wrote (:attr:`MessageHit.turn_index`), among the best
    :data:`NARROWED_CANDIDATES`. None when there is nothing to search (see
    :func:`summarized_part`): no search was made.
    """
    part = await summarized_part(ctx)
    if part is None or not isinstance(ctx.store, SearchableStore):
        return None
    covered, pinned = part
    limit = max(1, min(limit, MAX_RECALLED))
    wanted = NARROWED_CANDIDATES if turns is not None else 2 * limit + len(pinned)
    hits = await ctx.store.search_messages(
        ctx.session_id, query, slot_id=ctx.slot.id, before=covered, limit=wanted
    )
    found = [hit for hit in hits if hit.index not in pinned and not _recalled(hit.message)]
    found = _distinct(query, found)
    if turns is not None:
        first, last = turns
        found = [
            hit for hit in found if hit.turn_index is not None and first <= hit.turn_index <= last
        ]
    found = found[:limit]
    logger.info(
        "%s: recall of %r found %d summarized message(s)%s",
        at_turn(ctx),
        query[:80],
        len(found),
        f" ({', '.join(str(hit.index) for hit in found)})" if found else "",
    )
    return found


def _distinct(query: str, hits: list[MessageHit]) -> list[MessageHit]:
    """``hits`` less those that say only what ``query`` or a better hit says, word for word.

    A hit says what its sentences that match ``query`` best say (see
    :func:`best_sentences`, what a recall shows of it). A user who asks again ("What
    should the error pages say?") would be shown their own earlier questions, and
    advice given three times would come back three times: the request grows, and
    nothing new is in it.
    """
    seen = {folded(query)}
    kept = []
    for hit in hits:
        key = folded(best_sentences(query, hit).message.text)
        if key and key in seen and not hit.message.tool_calls and not attachments(hit.message):
            continue
        seen.add(key)
        kept.append(hit)
    return kept


def _place(hit: MessageHit) -> str:
    """Where ``hit`` was said: its turn, else its place in the slot's history."""
    return f"turn {hit.turn_index}" if hit.turn_index is not None else f"message {hit.index}"


def _recalled(message: Message) -> bool:
    """Whether ``message`` is a recall itself (a call of the tool, or its answer): a copy."""
    if message.role == "tool":
        return message.text.startswith(
            ("[turn ", "[message ", "No earlier message of this conversation")
        )
    calls = message.tool_calls
    return bool(calls) and all(call.name == "recall_history" for call in calls) and not message.text


def _line(message: Message, shown: bool = False) -> str:
    """What ``message`` says, on its own: its text, its tool calls, its attachments named.

    ``shown``: its images come with the recalled block (automatic recall).
    """
    parts = [message.text] if message.text else []
    for call in message.tool_calls:
        arguments = json.dumps(dict(call.arguments), ensure_ascii=False)
        parts.append(f"(called {call.name} with {arguments})")
    for block in attachments(message):
        below = ", shown below" if shown and isinstance(block, ImageBlock) else ""
        parts.append(f"[attached {describe(record_of(block, 0, None))}{below}]")
    return " ".join(parts) or "(no text)"


def hit_heading(hit: MessageHit) -> str:
    """The start of ``hit``'s line: where it was said and who wrote it (``[turn 4, user]``)."""
    return f"[{_place(hit)}, {hit.message.role}]"


def best_sentences(query: str, hit: MessageHit) -> MessageHit:
    """``hit`` with only the sentences of its text that match ``query`` best.

    A message that states several facts of one pattern (three owners, ten ports)
    would put each beside the one asked for; the sentences holding the most words
    of the query stand for it, in their order, ``…`` between those apart. A tool
    result is read by its lines, each with the keys it sits under (see
    :func:`~agentcore_autosummary.text.outline.outline`: ``Containers > app > Limits >
    memory: 1280Mi``), those kept joined by ``;``. Its attachments stay.
    """
    text = hit.message.text
    tool = hit.message.role == "tool"
    parts = outline(text) if tool else sentences(text)
    if len(parts) < 2:
        return hit
    scores = [len(matching_terms(query, Message.user(part))) for part in parts]
    best = max(scores)
    if best == 0:
        return hit
    kept: list[str] = []
    for at, (part, score) in enumerate(zip(parts, scores, strict=True)):
        if score == best:
            if kept and scores[at - 1] != best:
                kept.append("…")
            kept.append(part)
    joined = "; ".join(kept).replace("; …; ", " … ") if tool else " ".join(kept)
    others = [block for block in hit.message.content if not isinstance(block, TextBlock)]
    message = attrs.evolve(hit.message, content=(TextBlock(joined), *others))
    return attrs.evolve(hit, message=message)


_CHUNK_MESSAGES = 200
"""Messages read from the store at a time, newest first, for what came after a recalled one."""


async def written_after(ctx: TurnContext, first: int) -> tuple[int, list[str]]:
    """What the user and the assistant wrote in the slot's messages from index ``first`` on.

    Returns the index of the oldest message read and the texts, oldest first. Read
    newest first, as far as :data:`~agentcore_autosummary.judging.pruning.TAIL_CHARS`
    reach: the messages the slot holds, then, when those are all read, the store's
    before them, :data:`_CHUNK_MESSAGES` at a time. The work is bounded whatever the
    length of the history; a store that cannot be read ends the reading, logged.
    """
    slot = ctx.slot
    held = newest_tail(slot.messages, max(first, slot.offset))
    base = slot.message_count() - len(held)
    texts = [written_text(message) for message in held]
    size = sum(len(message.text or "") for message in held)
    if base > slot.offset:  # the bound was reached among the messages the slot holds
        return base, texts
    while first < base and size <= TAIL_CHARS:
        start = max(first, base - _CHUNK_MESSAGES)
        try:
            chunk = await ctx.store.load_messages(ctx.session_id, slot.id, start, base)
        except Exception as exc:
            logger.warning("%s: recall read no message before %d: %s", at_turn(ctx), base, exc)
            break
        if not chunk:
            break
        older: list[str] = []
        for message in reversed(chunk):
            size += len(message.text or "")
            if size > TAIL_CHARS:
                break
            older.append(written_text(message))
        texts = [*reversed(older), *texts]
        base -= len(older)
        if len(older) < len(chunk):
            break
    return base, texts


async def current_hits(
    ctx: TurnContext, hits: Sequence[MessageHit], newest: str = ""
) -> list[MessageHit]:
    """``hits`` less the values that what was written after them replaced or withdrew.

    A recalled message is read against what the user and the assistant wrote after it
    (:func:`written_after`; the words' uses are counted from :data:`_CHUNK_MESSAGES`
    messages before the first hit on), the later tool results among ``hits`` as recall
    shows them, and ``newest``, the user's new message: its sentences whose
    value a later one changed ("the budget is now 76,000") or withdrew go, as they go
    from an older summary part (see
    :func:`~agentcore_autosummary.judging.pruning.without_superseded`). A hit left with
    neither text nor attachment is dropped: recall never states beside the new value,
    as if it were current, a value the conversation changed.
    """
    if not hits:
        return []
    # The messages before the hits too, for how often the conversation says each word:
    # the words of a pattern ("note", "service") must count as such, not as a topic.
    base, texts = await written_after(ctx, max(0, min(hit.index for hit in hits) - _CHUNK_MESSAGES))
    uses = word_uses("\n".join([*texts, newest]))
    kept: list[MessageHit] = []
    for hit in hits:
        # What the user and the assistant wrote after it, and the later tool results
        # recalled beside it (a newer ``describe`` of the same pod).
        shown_after = [
            other.message.text
            for other in hits
            if other.index > hit.index and other.message.role == "tool"
        ]
        later = "\n".join([*texts[max(0, hit.index + 1 - base) :], *shown_after, newest])
        text = hit.message.text
        pruned = without_superseded(text, later, uses) if text and later.strip() else text
        if pruned == text:
            kept.append(hit)
            continue
        content: tuple[ContentBlock, ...] = tuple(
            block for block in hit.message.content if not isinstance(block, TextBlock)
        )
        if pruned.strip():
            content = (TextBlock(pruned), *content)
        if content:
            kept.append(attrs.evolve(hit, message=attrs.evolve(hit.message, content=content)))
    return kept


async def render_hits(
    hits: list[MessageHit],
    counter: TokenCounter,
    max_tokens: int,
    shown: frozenset[int] = frozenset(),
) -> str:
    """The hits in the conversation's order, one per line, within ``max_tokens`` tokens.

    Each line names where the message was said and who wrote it (``[turn 4, user] ...``;
    ``[message 12, user]`` for one no turn wrote, such as an imported history) and the
    attachments it held (``[attached image "cat.png" (image/png, 1,234 bytes)]``; those of
    the hits whose raw index is in ``shown`` are said to be shown below); a long message is
    cut in the middle to its share: an even share of the room, and what the shorter
    messages leave of theirs (see :func:`fair_shares`).
    """
    ordered = sorted(hits, key=lambda hit: hit.index)
    texts = [_line(hit.message, hit.index in shown) for hit in ordered]
    sizes = [counter.count_text(text) for text in texts]
    headings = sum(counter.count_text(f"{hit_heading(hit)} ") + 1 for hit in ordered)
    shares = fair_shares(sizes, max_tokens - headings)
    lines = []
    for hit, text, size, share in zip(ordered, texts, sizes, shares, strict=True):
        if size > share:
            text = await cut_middle(counter, text, max(16, share))
        lines.append(f"{hit_heading(hit)} {text}")
    while lines and counter.count_text("\n".join(lines)) > max_tokens:
        lines.pop()  # the newest go last: what is left still fits
    return "\n".join(lines)


def fair_shares(sizes: Sequence[int], room: int) -> list[int]:
    """Each of ``sizes``' share of ``room``: the size, or an even share of what smaller ones left.

    Water-filling: the smallest sizes take what they need while it is no more than
    an even share of the room left; the others split the rest evenly.
    """
    shares = [0] * len(sizes)
    left = max(0, room)
    for rank, at in enumerate(sorted(range(len(sizes)), key=lambda at: sizes[at])):
        shares[at] = min(sizes[at], left // (len(sizes) - rank))
        left -= shares[at]
    return shares
