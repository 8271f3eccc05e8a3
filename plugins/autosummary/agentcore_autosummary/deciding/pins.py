"""Pinned messages: never summarized, always sent, and counted against the window."""

from __future__ import annotations

from collections.abc import Collection

from agentcore import ConfigError, ContextSlot, Message, SessionError, SlotConfig
from agentcore.plugin_api import SessionHandle, get_token_counter, reply_reservation
from agentcore_autosummary.config import SummaryConfig


def unpinned_indices(slot: ContextSlot, start: int, end: int) -> list[int]:
    """The raw indices ``start:end`` of ``slot`` that are not pinned: what a summary reads."""
    focused = slot.config.focused
    pinned = set(focused.pinned) if focused is not None else set()
    return [index for index in range(start, end) if index not in pinned]


def unpinned(slot: ContextSlot, start: int, end: int) -> tuple[Message, ...]:
    """Raw messages ``start:end`` of ``slot`` without the pinned ones: a summary's input.

    One slice of the loaded messages (a backlog of thousands is read in one step);
    where ``start`` lies before the loaded ones, message by message, so that only
    pinned messages (which the slot holds) may be older than what is loaded.
    """
    messages = slot.messages
    try:
        window = messages[start:end]
    except SessionError:
        return tuple(messages[index] for index in unpinned_indices(slot, start, end))
    focused = slot.config.focused
    pinned = set(focused.pinned) if focused is not None else set()
    if not pinned:
        return tuple(window)
    return tuple(message for index, message in enumerate(window, start) if index not in pinned)


def check_pins_fit(
    session: SessionHandle,
    slot: ContextSlot,
    config: SlotConfig,
    summary: SummaryConfig,
    kept: Collection[int] = (),
) -> None:
    """Raise :class:`ConfigError` when ``config``'s pins cannot fit the window.

    A request always carries the system prompt and every pinned message;
    with room for a summary (``max_summary_tokens``) and the reply
    reservation they must fit ``max_context_tokens``, or no turn could be
    sent once the rest is summarized. The pins of ``kept`` (those the plugin
    made to keep images, which a request that does not fit gives up) are not
    counted.
    """
    focused = config.focused
    if focused is None or not focused.pinned or not summary.window_guard:
        return
    agent = session.agent
    counter = agent.token_counter or get_token_counter(agent.model)
    count = slot.message_count()
    pins = [slot.messages[index] for index in focused.pinned if index < count and index not in kept]
    pinned_tokens = counter.count_messages(pins)
    system = (
        counter.count_messages([Message.system(agent.system_prompt)]) if agent.system_prompt else 0
    )
    window = summary.window
    reserve = reply_reservation(agent.max_tokens, window)
    needed = pinned_tokens + system + summary.summary_context_tokens + reserve
    if needed > window:
        raise ConfigError(
            f"the pinned messages need {pinned_tokens} tokens; with the system prompt "
            f"({system}), room for a summary (max_summary_tokens and its fence, "
            f"{summary.summary_context_tokens}) "
            f"and the reply reservation ({reserve}) a request needs {needed} tokens, over "
            f"max_context_tokens ({window}): unpin a message or raise max_context_tokens"
        )
