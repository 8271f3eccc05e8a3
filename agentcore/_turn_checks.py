"""What a turn accepts: its user message, pin flag and turn id, and the reply it may store.

The session checks a turn's arguments before any hook or model call
(:func:`check_user_message`, :func:`check_pin_flag`, :func:`check_turn_id`);
a turn the caller gave no id is stored under a new one (:func:`new_turn_id`),
and an empty reply is refused before anything is stored (:func:`check_reply`).
"""

from __future__ import annotations

import os

from agentcore._plain_messages import text_message
from agentcore.cycle import CycleResult
from agentcore.errors import ConfigError, EmptyReplyError
from agentcore.messages import Message, OpaqueBlock, ReasoningBlock, TextBlock, invalid_text


def check_user_message(user_input: str | Message) -> Message:
    """``user_input`` as the user message of a turn; what cannot be one is refused."""
    if isinstance(user_input, Message):
        if user_input.role != "user":
            raise ConfigError(f"a turn takes a user message, got a {user_input.role} message")
        message = user_input
    elif not isinstance(user_input, str):
        raise ConfigError(f"a turn takes a str or a user Message, got {user_input!r}")
    elif not user_input.strip():
        raise ConfigError("a turn needs a non-empty user message")
    else:
        message = text_message("user", user_input)
    problem = invalid_text(message)
    if problem is not None:
        raise ConfigError(
            f"the user message is not valid Unicode: {problem}; "
            "decode its bytes as UTF-8 (or repair them) before submitting"
        )
    return message


def check_pin_flag(pin: object) -> None:
    """Refuse a ``pin`` argument that is not a bool."""
    if not isinstance(pin, bool):
        raise ConfigError(f"pin must be True or False, got {pin!r}")


def new_turn_id() -> str:
    """A new random turn id: a version 4 UUID in hex, as ``uuid.uuid4().hex`` gives.

    Made from the 16 random bytes directly, without a ``uuid.UUID`` object (a
    turn makes one: this costs a fifth of it).
    """
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    return raw.hex()


MAX_TURN_ID_CHARS = 200
"""The longest ``turn_id`` a caller may give (every store engine keeps it whole)."""


def check_turn_id(turn_id: object) -> None:
    """Refuse a ``turn_id`` that is not None or a short, printable, non-empty str."""
    if turn_id is None:
        return
    if (
        not isinstance(turn_id, str)
        or not turn_id.strip()
        or len(turn_id) > MAX_TURN_ID_CHARS
        or not turn_id.isprintable()
    ):
        raise ConfigError(
            f"turn_id must be None or a non-empty printable str of at most "
            f"{MAX_TURN_ID_CHARS} characters, got {str(turn_id)[:60]!r}"
        )


def check_reply(result: CycleResult) -> None:
    """Refuse a turn whose final reply holds no text and no tool call (:class:`EmptyReplyError`).

    Whitespace, reasoning and opaque items alone do not make a reply; any
    other block (a tool call, an image, audio) does.
    """
    response = result.response
    for block in response.message.content:
        if isinstance(block, ReasoningBlock | OpaqueBlock):
            continue
        if not isinstance(block, TextBlock) or block.text.strip():
            return
    stop = response.stop_reason
    hint = {
        "max_tokens": "it stopped at max_tokens: raise the agent's max_tokens",
        "other": "the provider stopped it (a content filter?)",
    }.get(stop, "submit the turn again")
    raise EmptyReplyError(
        f"the model's reply holds no text and no tool call (stop reason {stop!r}); "
        f"nothing of the turn was stored: {hint}",
        stop_reason=stop,
    )
