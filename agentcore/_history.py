"""Importing an existing history into a session: checked, counted, stored as one write."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentcore._store_sync import StoreSync
from agentcore.budget import turn_counter
from agentcore.errors import ConfigError, SessionError
from agentcore.formats import check_history
from agentcore.messages import Message

if TYPE_CHECKING:
    from agentcore.session_handle import SessionHandle


async def import_history(
    session: SessionHandle,
    sync: StoreSync,
    lock: asyncio.Lock,
    messages: Sequence[Message],
    slot_id: str | None,
) -> None:
    """Store ``messages`` as the history of the empty slot ``slot_id`` of ``session``.

    Checked first (:func:`~agentcore.formats.check_history`, and no system
    message: the agent's ``system_prompt`` is the session's), then counted
    with the turn counter so the counts are stored with the messages, then
    written under the turn ``lock`` in one store write. An empty list
    stores nothing.
    """
    history = list(messages) if isinstance(messages, Sequence) else messages
    check_history(history)
    for index, message in enumerate(history):
        if message.role == "system":
            raise ConfigError(
                f"messages[{index}] is a system message: a session's system prompt is its "
                "agent's (Agent(system_prompt=...)); leave it out of the import "
                "(for example messages[1:]) or move its text into the agent"
            )
    if not history:
        return
    counter = turn_counter(session.agent, session.bundle.provider)
    for message in history:
        await counter.count_message_async(message)
    async with lock:
        await sync.load()
        await sync.catch_up()
        slot = await session.get_slot(slot_id)
        if len(slot):
            raise SessionError(
                f"{sync.where(slot.id)} already holds {len(slot)} messages: a history is "
                "imported into an empty slot only; import into a new slot "
                "(await session.create_slot(...)) or a new session"
            )
        await sync.commit_history(slot, history)
