"""Attachments across a summary: what the request keeps sending, and the record of the rest.

When a summary is applied, every attachment (image, file, audio) of the messages it
newly covers, and every image the plugin kept before, either stays in the request or
is named in the summary's record (:mod:`agentcore_autosummary.applying.record`):

- the newest images stay, ``SummaryConfig.keep_images`` of them with those of the
  verbatim tail, while they fit :func:`~agentcore_autosummary.deciding.kept_images.image_room`:
  the plugin pins the messages holding them (with their tool call and results), and
  remembers those pins as its own (``SummaryState.kept``), apart from the user's;
- an image kept before that a newer one pushes out, or that the user unpinned, is
  unpinned and recorded; files and audio are recorded;
- a message the user pinned is sent anyway: its attachments are neither kept nor
  recorded.

With the record and the new pins in place, the summary must still leave a smaller
context; the oldest kept images are given up (recorded) until it does. And a request
that does not fit the window once a summary was tried gives up every kept image
(:func:`release_kept_images`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs
from attrs import frozen

from agentcore import ConflictError, ContextSlot, Message, SessionError, TurnContext
from agentcore.plugin_api import JsonValue, TokenCounter, pin_group, system_message
from agentcore_autosummary.applying.fencing import fence_summary
from agentcore_autosummary.applying.record import record_lines, record_text, with_record
from agentcore_autosummary.calling.summarizer import SummaryFailedError
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.budget import counter_for, turn_model
from agentcore_autosummary.deciding.context_size import summary_change
from agentcore_autosummary.deciding.kept_images import KeepUnit, choose_kept, image_room
from agentcore_autosummary.deciding.plan import Plan
from agentcore_autosummary.keeping.attachments import (
    AttachmentRecord,
    folded,
    has_attachments,
    image_count,
    records_of,
)
from agentcore_autosummary.keeping.runtime import (
    SessionRuntime,
    load_state,
    previous_summary,
    session_correction,
)
from agentcore_autosummary.keeping.state import (
    SummaryState,
    state_from_json,
    state_key,
    state_to_json,
)
from agentcore_autosummary.log_names import at_turn

logger = logging.getLogger("agentcore.autosummary")


@frozen
class Settled:
    """A summary with its attachments settled: what the apply writes.

    :param text: The summary followed by its record of attachments.
    :param pinned: The slot's pins with the summary: the user's and the plugin's.
    :param kept: The plugin's own pins (``SummaryState.kept``).
    :param attachments: The record (``SummaryState.attachments``), oldest first.
    :param turns: The turns of attachments the record may name later (``SummaryState.turns``).
    """

    text: str
    pinned: tuple[int, ...]
    kept: tuple[int, ...]
    attachments: tuple[AttachmentRecord, ...]
    turns: tuple[tuple[int, int], ...]


async def settle_attachments(
    ctx: TurnContext,
    config: SummaryConfig,
    runtime: SessionRuntime,
    plan: Plan,
    summary: str,
    state: SummaryState,
    pending: Sequence[Message] = (),
) -> Settled:
    """Keep the newest images of what ``plan`` covers, record the other attachments (module).

    ``pending``: the turn's messages not stored yet, which its request carries beside
    the slot's context (a summary made for a request that does not fit): the room of
    the kept images leaves them out.

    Raises :class:`SummaryFailedError` when the summary with its record leaves no
    smaller context even with no image kept.
    """
    slot = plan.slot
    focused = slot.config.focused
    if focused is None:  # a Full slot sends every message: nothing leaves the request
        return Settled(summary, (), state.kept, state.attachments, state.turns)
    pinned = set(focused.pinned)
    own = set(state.kept)
    user = pinned - own
    still = sorted(own & pinned)
    fresh = [index for index in range(focused.summary_covers, plan.covers) if index not in user]
    turns = dict(state.turns)
    messages: dict[int, Message] = {}
    for index in (*still, *fresh):
        message = await _message(ctx, slot, index)
        if has_attachments(message):
            messages[index] = message
    gone = {index: await _message(ctx, slot, index) for index in sorted(own - pinned)}
    counter = counter_for(ctx, turn_model(ctx))
    units = await _units(slot, messages, still, plan.covers, user, counter)
    records = [
        record
        for index, message in sorted({**messages, **gone}.items())
        for record in records_of(message, index, turns.get(index))
    ]
    worst = sorted((*state.attachments, *records), key=lambda record: record.index)
    fixed = [*([system_message(slot.system_prompt)] if slot.system_prompt else [])]
    fixed += [slot.messages[index] for index in sorted(user) if index < plan.covers]
    fixed += pending
    if worst:
        fixed.append(Message.user(record_text(worst, record_lines(config))))
    tail = sum(image_count(message) for message in slot.raw_messages(plan.covers))
    kept_units: list[KeepUnit] = []
    if config.keep_images > 0:
        correction = await session_correction(ctx, runtime)
        fixed_tokens = await counter.count_messages_async(fixed)
        room = image_room(config, correction, turn_model(ctx), fixed_tokens)
        kept_units = choose_kept(units, max(0, config.keep_images - tail), room)
    while True:
        settled = _settled(config, summary, state, user, kept_units, {**messages, **gone}, turns)
        if settled.text == summary and settled.pinned == focused.pinned:
            return settled  # as the summary was checked to shrink the context
        applied = attrs.evolve(
            focused,
            summary_override=fence_summary(settled.text),
            summary_covers=plan.covers,
            summary_role=config.summary_role or focused.summary_role,
            summary_position=config.summary_position or focused.summary_position,
            pinned=settled.pinned,
        )
        replaced, replacing = await summary_change(slot, counter, applied)
        if replacing < replaced:
            return settled
        if not kept_units:
            raise SummaryFailedError(
                f"the summary with its record of attachments would not shrink the context: "
                f"{replacing} tokens, no fewer than the {replaced} it replaces: not applied"
            )
        given_up = kept_units.pop(0)
        logger.info(
            "summary of %s: the image of message %d is recorded, not kept: with it the "
            "context would not shrink",
            at_turn(ctx, plan.turn_index),
            given_up.image,
        )


def _settled(
    config: SummaryConfig,
    summary: str,
    state: SummaryState,
    user: set[int],
    kept_units: Sequence[KeepUnit],
    leaving: dict[int, Message],
    turns: dict[int, int],
) -> Settled:
    """The record and the pins with ``kept_units`` kept and the rest of ``leaving`` recorded.

    ``leaving``: by raw index, the messages holding attachments that the summary
    covers now, and those of the images kept before.
    """
    kept = sorted({index for unit in kept_units for index in unit.indices})
    records = list(state.attachments)
    for index, message in sorted(leaving.items()):
        if index not in kept:
            records.extend(records_of(message, index, turns.get(index)))
    records.sort(key=lambda record: record.index)
    records = list(folded(tuple(records)))  # a bounded state, however long the history
    # The turns of what is recorded now are in the record; those of kept images stay.
    left = tuple(
        sorted(item for item in turns.items() if item[0] not in leaving or item[0] in kept)
    )
    return Settled(
        text=with_record(summary, records, record_lines(config)),
        pinned=tuple(sorted(user | set(kept))),
        kept=tuple(kept),
        attachments=tuple(records),
        turns=left,
    )


async def _units(
    slot: ContextSlot,
    messages: dict[int, Message],
    still: Sequence[int],
    covers: int,
    user: set[int],
    counter: TokenCounter,
) -> list[KeepUnit]:
    """A :class:`KeepUnit` for each group of messages holding an image (one per group)."""
    units: list[KeepUnit] = []
    seen: set[tuple[int, ...]] = set()
    for index, message in sorted(messages.items()):
        if not image_count(message):
            continue
        if index in still:
            indices = _run(still, index)
        else:
            indices = [i for i in _group(slot, index) if i < covers and i not in user]
        if tuple(indices) in seen:
            continue  # another image of the same group: counted with it
        seen.add(tuple(indices))
        group = [messages.get(i) or slot.messages[i] for i in indices]
        images = sum(image_count(member) for member in group)
        tokens = await counter.count_messages_async(group)
        units.append(KeepUnit(index, tuple(indices), images, tokens))
    return units


def _run(indices: Sequence[int], index: int) -> list[int]:
    """The run of consecutive ``indices`` (sorted) holding ``index``: a group pinned together."""
    members = set(indices)
    start = stop = index
    while start - 1 in members:
        start -= 1
    while stop + 1 in members:
        stop += 1
    return list(range(start, stop + 1))


def _group(slot: ContextSlot, index: int) -> range:
    """The indices pinned with ``index`` (its tool call and results); itself when not loaded."""
    try:
        return pin_group(slot.messages, index)
    except SessionError:
        return range(index, index + 1)


async def _message(ctx: TurnContext, slot: ContextSlot, index: int) -> Message:
    """Raw message ``index`` of ``slot``: held, else read from the store."""
    try:
        return slot.messages[index]
    except SessionError:
        stored = await ctx.store.load_messages(ctx.session_id, slot.id, index, index + 1)
        return stored[0]


async def release_kept_images(
    ctx: TurnContext, config: SummaryConfig, runtime: SessionRuntime
) -> bool:
    """Unpin the images the plugin keeps in ``ctx.slot`` and record them; whether it did.

    What a request that does not fit the window gives up once no summary made room:
    the plugin's own pins go, the summary's record names their attachments, in one
    conditional slot-config write (with the state and the ``memory_key`` snapshot).
    Nothing is released when the slot holds none, or when another write landed first.
    """
    slot = ctx.slot
    focused = slot.config.focused
    async with runtime.lock:
        state = await load_state(ctx, runtime)
        if focused is None or focused.summary_override is None or not state.kept:
            return False
        leaving = {index: await _message(ctx, slot, index) for index in state.kept}
        user = set(focused.pinned) - set(state.kept)
        summary = previous_summary(focused.summary_override) or ""
        settled = _settled(config, summary, state, user, (), leaving, dict(state.turns))
        released = attrs.evolve(
            focused, summary_override=fence_summary(settled.text), pinned=settled.pinned
        )
        new_state = attrs.evolve(
            state, attachments=settled.attachments, kept=(), turns=settled.turns
        )
        data: dict[str, JsonValue] = {
            config.memory_key: settled.text,
            state_key(slot.id): state_to_json(new_state),
        }
        try:
            await ctx.session.write_slot_config(
                slot.id,
                attrs.evolve(slot.config, mode=released),
                expected_version=slot.version,
                data=data,
                purpose="summary",
            )
        except ConflictError:
            stored = await ctx.memory.get(state_key(slot.id))
            runtime.states[slot.id] = state_from_json(stored, slot_id=slot.id)
            return False
        runtime.states[slot.id] = new_state
    logger.info(
        "%s: the request does not fit the window: the %d kept image message(s) are "
        "recorded in the summary and no longer sent",
        at_turn(ctx),
        len([index for index, message in leaving.items() if image_count(message)]),
    )
    return True
