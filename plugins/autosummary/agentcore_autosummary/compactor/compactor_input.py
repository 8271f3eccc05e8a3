"""What a compactor reads from its caller: the checks of its arguments, where the turn begins."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentcore import ConfigError, Message
from agentcore.plugin_api import NON_NEGATIVE_INT, is_int
from agentcore_autosummary.compactor.compactor_state import CompactorState, digest


def leading_systems(messages: Sequence[Message]) -> int:
    """How many system messages lead ``messages``; one later on is refused (ConfigError)."""
    lead = 0
    while lead < len(messages) and messages[lead].role == "system":
        lead += 1
    for index in range(lead, len(messages)):
        if messages[index].role == "system":
            raise ConfigError(
                f"messages[{index}] is a system message after the conversation began: a "
                "compactor takes system messages only at the start of the list (move its "
                "text into the system prompt, or send it as a user message)"
            )
    return lead


def in_flight_start(history: Sequence[Message]) -> int:
    """Where the turn in flight begins: the last user message, unless the list ends a turn.

    A list ending with an assistant reply that calls no tool has no turn in
    flight (the next input is not in the list yet): the whole list is history.
    """
    if not history:
        return 0
    last = history[-1]
    if last.role == "assistant" and not last.tool_calls:
        return len(history)
    for index in range(len(history) - 1, -1, -1):
        if history[index].role == "user":
            return index
    return 0


def check_state(state: Any) -> CompactorState:
    """``state`` as a :class:`CompactorState` (None: a new one; a dict: its ``to_json()``)."""
    if state is None:
        return CompactorState()
    if isinstance(state, dict):
        return CompactorState.from_json(state)
    if not isinstance(state, CompactorState):
        raise ConfigError(
            f"state must be a CompactorState (or its to_json() dict) or None, got {state!r:.100}"
        )
    return state


def check_covered(state: CompactorState, history: Sequence[Message]) -> None:
    """Refuse a state whose summary does not cover the first messages of ``history``."""
    if state.covered > len(history):
        raise ConfigError(
            f"the state's summary covers {state.covered} messages but the list holds "
            f"{len(history)} (system messages at its start not counted): pass the whole "
            "conversation, or a new CompactorState() for another one"
        )
    if state.covered and digest(history[: state.covered]) != state.covered_digest:
        raise ConfigError(
            f"the first {state.covered} messages are not the ones the state's summary covers: "
            "the state belongs to another conversation, or its earlier messages changed; "
            "pass the state of this conversation, or a new CompactorState()"
        )


def check_text(name: str, value: Any) -> str | None:
    """``value``, a str or None (ConfigError naming ``name`` otherwise)."""
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{name} must be a str or None, got {value!r:.100}")
    return value


def check_reserve(value: Any) -> int:
    """``reserve_tokens``, an int >= 0."""
    return NON_NEGATIVE_INT.check("reserve_tokens", value)  # type: ignore[no-any-return]


def check_pins(pinned: Any, count: int, lead: int) -> tuple[int, ...]:
    """The pinned indices of the input, as indices of the history after its ``lead`` systems."""
    if isinstance(pinned, (str, bytes)) or not isinstance(pinned, Sequence):
        raise ConfigError(f"pinned must be a list of message indices, got {pinned!r:.100}")
    pins = []
    for index in pinned:
        if not is_int(index) or not lead <= index < count:
            raise ConfigError(
                f"pinned index {index!r} names no message after the leading system messages "
                f"(they are {lead}..{count - 1})"
            )
        pins.append(index - lead)
    return tuple(sorted(set(pins)))
