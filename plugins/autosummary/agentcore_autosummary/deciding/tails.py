"""Counting by messages: the message trigger, the message tail and the slot's window.

A Focused slot with ``max_recent_messages=N`` sends at most the newest N raw
messages after its summary. Messages that slide out of that window while the
summary does not cover them yet would leave the context unsummarized; the
plugin summarizes them first (:func:`window_drops`), and keeps its verbatim
tail inside the window (:func:`tail_cap`).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentcore import ContextSlot, Message
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.keeping.state import SummaryState


def unsummarized(slot: ContextSlot, covered: int) -> int:
    """How many raw messages of ``slot`` the summary does not cover yet."""
    return max(0, slot.message_count() - covered)


def messages_due(config: SummaryConfig, state: SummaryState, turn_index: int, pending: int) -> bool:
    """True when ``pending`` unsummarized messages reached ``trigger_messages``.

    The debounce window applies as it does to the token trigger.
    """
    if config.trigger_messages is None or pending < config.trigger_messages:
        return False
    last = state.last_attempt_turn
    return last is None or turn_index - last >= config.debounce_turns


def window_drops(slot: ContextSlot, covered: int) -> bool:
    """True when the slot's next request would leave out messages no summary covers.

    That is a Focused slot with ``max_recent_messages`` holding more
    unsummarized messages than its window.
    """
    focused = slot.config.focused
    if focused is None or focused.max_recent_messages is None:
        return False
    return unsummarized(slot, covered) > focused.max_recent_messages


def tail_cap(config: SummaryConfig, slot: ContextSlot) -> int | None:
    """The most messages the verbatim tail may hold (None: no cap by count).

    ``keep_recent_messages`` when set; in a slot with ``max_recent_messages=N``
    also at most half the window (at least one message), so the tail fits the
    window with room for the next turns before messages would leave it again.
    """
    caps: list[int] = []
    if config.keep_recent_messages is not None:
        caps.append(config.keep_recent_messages)
    focused = slot.config.focused
    if focused is not None and focused.max_recent_messages is not None:
        caps.append(max(1, focused.max_recent_messages // 2))
    return min(caps) if caps else None


def cap_tail(messages: Sequence[Message], tail: int, cap: int | None) -> int:
    """The tail start ``tail`` moved forward so the tail holds at most ``cap`` messages.

    The tail still begins at a message other than a tool result, so a tool
    call stays with its results.
    """
    if cap is None:
        return tail
    start = max(tail, len(messages) - cap)
    while start < len(messages) and messages[start].role == "tool":
        start += 1
    return start
