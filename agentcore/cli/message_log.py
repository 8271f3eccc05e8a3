"""When each message of a chat was stored and with which model, kept in the session data.

Messages have no metadata field, so ``agentcore chat`` keeps, under
:data:`MESSAGE_LOG_KEY`, ``{slot_id: {index: {"at": ISO time, "model": name}}}``
for the messages it adds: the user's with the time it was sent, the rest with
the time the turn ended, each with the chat's ``PROVIDER:MODEL``.
``sessions show`` and ``sessions export`` read it back.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from typing import Any

from agentcore.session import AgentSession

logger = logging.getLogger(__name__)

MESSAGE_LOG_KEY = "cli.messages"
"""Session-data key of the times and models of the messages the chat stored."""

MessageLog = dict[str, dict[str, dict[str, str]]]
"""``{slot_id: {str(index): {"at": ..., "model": ...}}}``."""


def now_text() -> str:
    """The time now, in UTC, as ISO 8601 to the second: ``2026-12-01T17:48:38+00:00``."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def read_log(value: Any) -> MessageLog:
    """The log stored in the session data, its malformed entries left out."""
    if not isinstance(value, dict):
        return {}
    log: MessageLog = {}
    for slot_id, entries in value.items():
        if not isinstance(entries, dict):
            continue
        log[str(slot_id)] = {
            str(index): {key: str(text) for key, text in entry.items() if key in ("at", "model")}
            for index, entry in entries.items()
            if isinstance(entry, dict)
        }
    return log


async def record_messages(session: AgentSession, *, before: int, sent_at: str, model: str) -> None:
    """Log the messages the current slot gained since it held ``before`` of them.

    The first of them (the user's message) gets ``sent_at``, the others now.
    A failure is logged and leaves the turn alone.
    """
    try:
        slot = await session.get_slot()
        count = slot.message_count()
        if count <= before:
            return
        log = read_log(await session.get_session_data(MESSAGE_LOG_KEY))
        entries = log.setdefault(slot.id, {})
        ended = now_text()
        for index in range(before, count):
            at = sent_at if index == before else ended
            entries[str(index)] = {"at": at, "model": model}
        await session.set_session_data(MESSAGE_LOG_KEY, dict(log))
    except Exception as exc:
        logger.warning("could not record the times of the new messages: %s", exc)
