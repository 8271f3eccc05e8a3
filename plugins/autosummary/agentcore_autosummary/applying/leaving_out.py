"""The degraded request: the oldest unsummarized messages left out of one request.

When a turn request cannot fit the window and no summary can make room (the
summarizer fails, times out, answers nothing usable, is vetoed, is backing
off, or is still catching up a backlog), the turn is still sent: its request
carries the system prompt, the summary made so far, the pinned messages, a
short note saying how many messages it leaves out, and the newest messages
that fit. Nothing stored is dropped; the next turn tries the summary again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs

from agentcore import ContextSlot, Message, TurnContext
from agentcore.plugin_api import TokenCounter, render_parts
from agentcore_autosummary.deciding.budget import TurnBudget
from agentcore_autosummary.log_names import at_turn, fields

logger = logging.getLogger("agentcore.autosummary")

_NOTE_SIZER = Message.system(
    "[9999999 earlier messages are still being summarized and are left out of this request.]"
)  # sizes the note, whatever its number and wording


def left_out_note(count: int, *, backlog: bool) -> Message:
    """The note a degraded request carries in place of ``count`` messages."""
    if backlog:
        return Message.system(
            f"[{count} earlier messages are still being summarized and are left out "
            "of this request.]"
        )
    return Message.system(
        f"[{count} earlier messages are not summarized yet and are left out of this request.]"
    )


def newest_that_fit(
    messages: Sequence[Message],
    start: int,
    room: int,
    counter: TokenCounter,
    pinned: frozenset[int],
) -> int:
    """Where the newest run of unpinned messages from ``start`` on that fits ``room`` begins.

    The pinned messages of the window are sent whatever happens, so their
    tokens are taken from ``room`` first. The run begins at a message other
    than a tool result, so a tool call and its results stay together.
    """
    room -= sum(counter.count_message(messages[i]) for i in pinned if start <= i < len(messages))
    best = len(messages)
    total = 0
    for index in range(len(messages) - 1, start - 1, -1):
        if index in pinned:
            continue
        total += counter.count_message(messages[index])
        if total > room:
            break
        if messages[index].role != "tool":
            best = index
    return best


async def leave_out_oldest(
    ctx: TurnContext, budget: TurnBudget, *, backlog: bool, why: str
) -> list[Message]:
    """The slot's context for this request with its oldest unsummarized messages left out.

    ``backlog``: the messages left out are being summarized (an info line);
    otherwise a warning names ``why`` no summary made room. When even the
    summary does not fit beside the pins and the turn's new input, the
    summary is left out of this request too.
    """
    slot = ctx.slot
    counter = budget.counter
    focused = slot.config.focused
    pinned = frozenset(focused.pinned) if focused is not None else frozenset()
    window = budget.correction.unapply(budget.model, budget.window - budget.reserve)
    window -= await counter.count_messages_async([_NOTE_SIZER, *ctx.messages])
    window -= counter.count_tools(budget.tools)
    configs = [slot.config]
    if focused is not None and focused.summary_override is not None:
        configs.append(attrs.evolve(slot.config, mode=attrs.evolve(focused, summary_override=None)))
    for number, config in enumerate(configs):
        before, start, after = render_parts(slot.system_prompt, slot.messages, config)
        room = window - await counter.count_messages_async([*before, *after])
        if room >= 0 or number == len(configs) - 1:
            break
    tail = newest_that_fit(slot.messages, start, max(0, room), counter, pinned)
    kept_pins = [slot.messages[i] for i in sorted(pinned) if start <= i < tail]
    count = tail - start - len(kept_pins)
    _log(ctx, slot, count, backlog=backlog, why=why, summary_kept=config is slot.config)
    note = left_out_note(count, backlog=backlog)
    return [*before, note, *kept_pins, *slot.raw_messages(tail), *after]


def _log(
    ctx: TurnContext, slot: ContextSlot, count: int, *, backlog: bool, why: str, summary_kept: bool
) -> None:
    if backlog:
        logger.info(
            "%s: %d messages await their summary; this request leaves them out",
            at_turn(ctx),
            count,
        )
        return
    logger.warning(
        "%s: the request does not fit the window and %s: it leaves "
        "out the %d oldest messages the summary does not cover%s (nothing stored is dropped; "
        "the summary is tried again on a later turn)",
        fields(ctx, slot.id, ctx.turn_index),
        why,
        count,
        "" if summary_kept else ", and the summary itself",
    )
