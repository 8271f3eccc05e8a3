"""AgentSession: runs turns against a bundle and persists what they add.

The turn protocol lives in :mod:`agentcore._turns`, the copy of the stored
session and the one write path in :mod:`agentcore._store_sync`. The session's
turn methods are written in :mod:`agentcore._session_turns` and its plugin
writes in :mod:`agentcore._session_writes`: the class binds them as methods.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import attrs

from agentcore import _session_turns, _session_writes
from agentcore._background import BackgroundWork
from agentcore._history import import_history
from agentcore._slot_pins import change_pins
from agentcore._store_sync import DEFAULT_SLOT, WRITE_ATTEMPTS, StoreSync
from agentcore._turn_stream import TurnStream
from agentcore._turns import TurnRunner
from agentcore.agent import Agent
from agentcore.budget import provider_model
from agentcore.builder import AgentBundle
from agentcore.errors import (
    ConfigError,
    ReadonlySessionError,
    SessionError,
    UnknownSlotError,
)
from agentcore.messages import Message
from agentcore.pricing import PriceTable
from agentcore.session_memory import SessionMemory
from agentcore.slots import (
    FULL,
    ContextSlot,
    FocusedConfig,
    SlotConfig,
    SlotMode,
)
from agentcore.stash import Stash
from agentcore.stores.base import JsonValue
from agentcore.usage import CostTracker
from agentcore.validators import NON_NEGATIVE_INT

__all__ = ["DEFAULT_SLOT", "WRITE_ATTEMPTS", "AgentSession", "TurnStream"]

logger = logging.getLogger("agentcore")

T = TypeVar("T")


def _check_id(what: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{what} must be a non-empty str, got {value!r}")
    return value


def _check_mode(mode: Any) -> SlotMode:
    if mode == FULL or isinstance(mode, FocusedConfig):
        return mode  # type: ignore[no-any-return]
    raise ConfigError(f"mode must be 'full' or a FocusedConfig, got {mode!r}")


class AgentSession:
    """A conversation with an agent, persisted in the bundle's store.

    A new session with the id of a stored one resumes it: messages, slot
    configs, turn index and cost come back from the store on first use. A
    new session starts with one slot, ``"default"``, in ``mode`` (``"full"``
    or a :class:`FocusedConfig`; omitted: ``"full"``, which a plugin may
    change, see :attr:`mode_chosen`); a resumed one keeps its stored modes.
    A ``readonly`` session refuses turns and data writes.

    A turn is atomic as seen from the object: once its store write has
    committed, the object holds it (turn index, messages, cost), even if the
    caller was cancelled meanwhile; before that, nothing of it remains.
    Before each model call the session checks whether another writer moved
    the stored session on (one cheap :meth:`~agentcore.stores.MemoryStore.slot_heads`
    call) and reloads what changed. See docs/failure-semantics.md.
    """

    def __init__(
        self,
        agent: Agent,
        session_id: str,
        bundle: AgentBundle,
        mode: SlotMode | None = None,
        *,
        readonly: bool = False,
    ) -> None:
        self._background = BackgroundWork(str(session_id))
        if not isinstance(agent, Agent):
            raise ConfigError(f"agent must be an Agent, got {agent!r}")
        if not isinstance(bundle, AgentBundle):
            raise ConfigError(
                f"bundle must be an AgentBundle (AgentBuilder().build()), got {bundle!r}"
            )
        self._agent = agent
        self._session_id = _check_id("session_id", session_id)
        self._bundle = bundle
        self._readonly = readonly
        self._mode_chosen = mode is not None
        self._memory = SessionMemory(bundle.store, session_id)
        self._stash = Stash()
        self._sync = StoreSync(
            bundle.store,
            session_id,
            system_prompt=agent.system_prompt or None,
            initial_mode=FULL if mode is None else _check_mode(mode),
        )
        self._turns = TurnRunner(self, self._sync)

    def __del__(self) -> None:
        background = getattr(self, "_background", None)
        pending = background.pending() if background is not None else []
        if pending:
            warnings.warn(
                f"AgentSession {self._session_id!r} was dropped with {len(pending)} pending "
                "background task(s), such as a plugin's work after a turn; their work is lost. "
                "Call `await session.aclose()` (or use `async with session`) before dropping it",
                ResourceWarning,
                source=self,
                stacklevel=2,
            )

    # -- properties -------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The session's id in the store."""
        return self._session_id

    @property
    def agent(self) -> Agent:
        """The agent this session talks to."""
        return self._agent

    @property
    def bundle(self) -> AgentBundle:
        """Provider, tools, store, plugins and config of the session."""
        return self._bundle

    @property
    def mode_chosen(self) -> bool:
        """True when the app gave ``mode``; plugins leave the modes of such a session alone.

        A plugin that needs another mode (one that sends a condensed head
        needs the Focused one) may switch a Full slot of a session whose
        mode was not chosen, with :meth:`set_mode`, and only tells when it was.
        """
        return self._mode_chosen

    @property
    def readonly(self) -> bool:
        """True when the session refuses turns and data writes."""
        return self._readonly

    @property
    def turn_index(self) -> int:
        """How many turns the session has stored (a streamed turn counts once stored)."""
        return self._sync.turn_index

    @property
    def last_reply(self) -> Message | None:
        """The final assistant message of the last turn this object stored, or None.

        Set as the turn's store write commits, so a caller whose turn was
        cancelled after that point (it gets ``CancelledError``, or
        ``TimeoutError`` from an enclosing ``asyncio.timeout``) can still
        read the reply that was stored: compare :attr:`turn_index` with its
        value before the turn. Turns stored by other writers, or before the
        session was resumed, are read with :meth:`history`.
        """
        return self._sync.last_reply

    @property
    def cost(self) -> CostTracker:
        """Tokens used so far, by purpose."""
        return self._sync.cost

    def dollars(self, prices: PriceTable | None = None, *, cache_ttl: str = "5m") -> float | None:
        """What :attr:`cost` comes to in US dollars at the agent's model's price, or None.

        The model is ``agent.model``, else the provider's default model.
        ``prices`` defaults to the list prices (:class:`~agentcore.pricing.PriceTable`);
        None when it has no price for ``agent.model``. Cache reads and writes
        are priced at their own rates. Every purpose is priced at the agent's
        model: when a plugin's calls go to another model, price them apart with
        ``prices.dollars(session.cost.total(purpose), that_model)``.
        """
        if prices is not None and not isinstance(prices, PriceTable):
            raise ConfigError(f"prices must be a PriceTable or None, got {prices!r}")
        table = PriceTable() if prices is None else prices
        model = self._agent.model or provider_model(self._bundle.provider)
        if model is None:
            return None
        return table.dollars(self.cost.total(), model, cache_ttl=cache_ttl)

    @property
    def stash(self) -> Stash:
        """Plugins' in-memory state for this session object (see :mod:`agentcore.stash`)."""
        return self._stash

    @property
    def memory(self) -> SessionMemory:
        """The session's key/value data."""
        return self._memory

    @property
    def current_slot_id(self) -> str:
        """The id of the slot turns go to."""
        return self._sync.current

    # -- loading ----------------------------------------------------------------

    async def load(self) -> None:
        """Load the session from the store; every other method does it on first use."""
        await self._sync.load()

    # -- slots ------------------------------------------------------------------

    async def get_slot(self, slot_id: str | None = None) -> ContextSlot:
        """The slot ``slot_id``, or the current slot."""
        await self.load()
        wanted = self._sync.current if slot_id is None else slot_id
        try:
            return self._sync.slots[wanted]
        except KeyError:
            known = ", ".join(sorted(self._sync.slots))
            raise UnknownSlotError(
                f"session {self._session_id!r} has no slot {wanted!r} (slots: {known})"
            ) from None

    async def slot_ids(self) -> list[str]:
        """Every slot id of the session, sorted."""
        await self.load()
        return sorted(self._sync.slots)

    async def create_slot(
        self, slot_id: str, mode: SlotMode = FULL, *, switch: bool = False
    ) -> ContextSlot:
        """Add an empty slot; with ``switch`` it becomes the current slot."""
        _check_id("slot_id", slot_id)
        self._check_writable("create a slot")
        mode = _check_mode(mode)
        await self.load()
        async with self._turns.lock:
            await self._sync.catch_up()
            if slot_id in self._sync.slots:
                raise SessionError(f"session {self._session_id!r} already has a slot {slot_id!r}")
            return await self._sync.create_slot(slot_id, SlotConfig(mode), switch=switch)

    async def switch_slot(self, slot_id: str) -> ContextSlot:
        """Make ``slot_id`` the slot that turns go to."""
        self._check_writable("switch slots")
        slot = await self.get_slot(slot_id)
        async with self._turns.lock:
            await self._sync.switch_slot(slot_id)
        return slot

    async def set_mode(self, mode: SlotMode, slot_id: str | None = None) -> None:
        """Change the mode of a slot (default: the current one); history is kept."""
        self._check_writable("change a slot mode")
        mode = _check_mode(mode)
        slot = await self.get_slot(slot_id)
        await self.write_slot_config(
            slot.id, attrs.evolve(slot.config, mode=mode), usage=None, retry_on_conflict=True
        )

    async def pin(self, index: int, slot_id: str | None = None) -> tuple[int, ...]:
        """Pin raw message ``index`` of a Focused slot: it always stays in the context.

        A negative ``index`` counts from the end (``-2``: the user message of
        the last plain turn). Pinning a tool call or one of its results pins
        the call with all of its results. Plugins may refuse the pin through
        the ``check_slot_config`` hook (a plugin that keeps the context within
        a window refuses pins that cannot fit it) with :class:`~agentcore.errors.ConfigError`; then
        nothing is stored. Returns the slot's pinned indices.
        """
        self._check_writable("pin a message")
        return await change_pins(self, index, slot_id, add=True)

    async def unpin(self, index: int, slot_id: str | None = None) -> tuple[int, ...]:
        """Unpin raw message ``index`` (and its tool group); returns the pinned indices."""
        self._check_writable("pin a message")
        return await change_pins(self, index, slot_id, add=False)

    # -- plugin writes (written in agentcore._session_writes) -------------------

    write_slot_config = _session_writes.write_slot_config
    record_usage = _session_writes.record_usage

    # -- history ----------------------------------------------------------------

    async def load_messages(self, slot_id: str | None = None) -> list[Message]:
        """Exactly what the next request of a slot will carry, before the new user message."""
        return (await self.get_slot(slot_id)).load_messages()

    async def history(
        self, slot_id: str | None = None, *, start: int = 0, stop: int | None = None
    ) -> list[Message]:
        """The raw message history of a slot from ``start`` up to ``stop`` (default: all of it).

        Messages the slot holds in memory come from there; older ones are
        read from the store (a range read), so paging through a long history
        costs what the page holds. Indices are absolute, as in
        :meth:`ContextSlot.message_count`.
        """
        NON_NEGATIVE_INT.check("history start", start)
        NON_NEGATIVE_INT.or_none().check("history stop", stop)
        slot = await self.get_slot(slot_id)
        count = len(slot)
        stop = count if stop is None else min(stop, count)
        start = min(start, stop)
        messages: list[Message] = []
        # Those older than the window come from the store; read on while the window moved
        # on during a read (a config stored meanwhile lets the slot drop what it no longer
        # sends: see ContextSlot.drop_unsent).
        while start < min(stop, slot.offset):
            middle = min(stop, slot.offset)
            store = self._bundle.store
            messages += await store.load_messages(self._session_id, slot.id, start, middle)
            start = middle
        messages += slot.raw_messages(start, stop)
        return messages

    async def import_history(self, messages: Sequence[Message], slot_id: str | None = None) -> None:
        """Store an existing history into an empty slot (default: the current one), in one write.

        Convert other formats first (:mod:`agentcore.formats`). The history is
        checked (valid Unicode, roles, every tool result after its call; no
        system message, as the agent's prompt is the session's), counted
        with the turn counter and stored with the counts; the turn index and
        cost stay. Later turns run on it, and plugins see it as any
        history. Nothing is stored when it raises.

        :raises ConfigError: the history is refused, naming the index at fault.
        :raises SessionError: the slot already holds messages.
        """
        self._check_writable("import a history")
        self._check_no_open_stream()
        await import_history(self, self._sync, self._turns.lock, messages, slot_id)

    # -- session data -------------------------------------------------------------

    async def get_session_data(self, key: str) -> JsonValue:
        """The session-data value under ``key``, or None."""
        return await self._memory.get(key)

    async def set_session_data(self, key: str, value: JsonValue) -> None:
        """Store a JSON value under ``key``."""
        self._check_writable("write session data")
        await self._memory.set(key, value)

    async def delete_session_data(self, key: str) -> None:
        """Remove ``key`` from the session data."""
        self._check_writable("delete session data")
        await self._memory.delete(key)

    # -- turns, and blocks between them (written in agentcore._session_turns) --

    exclusive = _session_turns.exclusive
    submit_turn = _session_turns.submit_turn
    submit_turn_stream = _session_turns.submit_turn_stream
    submit_turn_sync = _session_turns.submit_turn_sync

    # -- background work ---------------------------------------------------------

    def run_in_background(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work`` as a task the session tracks; :meth:`aclose` waits for it.

        An exception the task raises is logged at ERROR on the ``agentcore``
        logger. Work cancelled without :meth:`aclose` cancelling it (the event
        loop closing as ``asyncio.run`` returns, with the work still pending)
        is lost: that logs a warning naming the session and warns with
        :class:`ResourceWarning`, as does a session garbage-collected while
        such a task is pending. Drain it first with ``await session.aclose()``
        or ``async with session:``.
        """
        return self._background.run(work)

    async def aclose(self, *, cancel_pending: bool = False) -> None:
        """Wait until the background work of the session has finished.

        With ``cancel_pending``, cancel that work first (work that has not
        written yet is dropped whole: nothing of it is stored) and wait for the
        cancellation to finish.
        """
        await self._background.drain(cancel=cancel_pending)

    async def __aenter__(self) -> AgentSession:
        await self.load()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- internals ----------------------------------------------------------------

    @property
    def _pm(self) -> Any:
        return self._bundle.plugin_manager

    def _check_no_open_stream(self) -> None:
        if self._turns.open_stream:
            raise SessionError(
                f"session {self._session_id!r} has a streamed turn in progress: "
                "exhaust it, await stream.finalize() or await stream.aclose() first"
            )

    def _check_writable(self, action: str) -> None:
        if self._readonly:
            raise ReadonlySessionError(
                f"session {self._session_id!r} is read-only: cannot {action}"
            )
