"""SessionHandle: what a turn hook may do with the session it runs in.

:attr:`agentcore.TurnContext.session` is typed as this protocol rather than
as the whole :class:`~agentcore.AgentSession`: these are the members a
plugin may rely on from inside a hook (the first-party plugins use no
others), and :class:`~agentcore.AgentSession` satisfies it. A plugin whose
public function takes a session from the application (outside any turn)
keeps taking an ``AgentSession``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Mapping
from typing import Any, Protocol, TypeVar

from agentcore.agent import Agent
from agentcore.bundle import AgentBundle
from agentcore.messages import Message
from agentcore.session_memory import SessionMemory
from agentcore.slots import ContextSlot, SlotConfig, SlotMode
from agentcore.stash import Stash
from agentcore.stores.base import JsonValue
from agentcore.usage import CostTracker, Usage

T = TypeVar("T")


class SessionHandle(Protocol):
    """The members of a session that turn hooks may read and call.

    Each is documented on :class:`~agentcore.AgentSession`, which
    implements them; writes go through :meth:`write_slot_config` and
    :meth:`record_usage` (one store write each, under the session's rules).
    """

    @property
    def session_id(self) -> str:
        """The session's id in the store."""
        ...

    @property
    def agent(self) -> Agent:
        """The agent this session talks to."""
        ...

    @property
    def bundle(self) -> AgentBundle:
        """Provider, tools, store, plugins and config of the session."""
        ...

    @property
    def mode_chosen(self) -> bool:
        """True when the app gave ``mode``; plugins leave the modes of such a session alone."""
        ...

    @property
    def readonly(self) -> bool:
        """True when the session refuses turns and data writes."""
        ...

    @property
    def turn_index(self) -> int:
        """How many turns the session has stored."""
        ...

    @property
    def cost(self) -> CostTracker:
        """Tokens used so far, by purpose."""
        ...

    @property
    def stash(self) -> Stash:
        """Plugins' in-memory state for this session object (see :mod:`agentcore.stash`)."""
        ...

    @property
    def memory(self) -> SessionMemory:
        """The session's key/value data."""
        ...

    @property
    def current_slot_id(self) -> str:
        """The id of the slot turns go to."""
        ...

    async def get_slot(self, slot_id: str | None = None) -> ContextSlot:
        """The slot ``slot_id``, or the current slot."""
        ...

    async def load_messages(self, slot_id: str | None = None) -> list[Message]:
        """Exactly what the next request of a slot will carry, before the new user message."""
        ...

    async def set_mode(self, mode: SlotMode, slot_id: str | None = None) -> None:
        """Change the mode of a slot (default: the current one); history is kept."""
        ...

    async def write_slot_config(
        self,
        slot_id: str,
        config: SlotConfig,
        *,
        expected_version: int | None = None,
        data: Mapping[str, JsonValue] | None = None,
        usage: Usage | None = None,
        purpose: str = "plugin",
        retry_on_conflict: bool = False,
    ) -> None:
        """Replace a slot's config, store session data and count ``usage``, in one store write."""
        ...

    async def record_usage(
        self,
        usage: Usage | None,
        purpose: str,
        *,
        data: Mapping[str, JsonValue] | None = None,
    ) -> None:
        """Count ``usage`` under ``purpose`` and store session data, in one store write."""
        ...

    async def get_session_data(self, key: str) -> JsonValue:
        """The session-data value under ``key``, or None."""
        ...

    def run_in_background(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work`` as a task the session tracks; the session's ``aclose`` waits for it."""
        ...
