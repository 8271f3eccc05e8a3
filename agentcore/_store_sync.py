"""A session's copy of what its store holds, and the one path that writes it.

:class:`StoreSync` loads a session, catches up with other writers and
commits writes so that the session object always agrees with its store:
what a write stores, the object holds once the write has committed, and
nothing before. Every write of a session goes through :meth:`StoreSync.commit`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence

import attrs

from agentcore._cancel import complete_despite_cancel
from agentcore._slot_config_json import config_from_json, config_to_json
from agentcore.errors import ConflictError, DuplicateTurnError, SessionError
from agentcore.messages import Message
from agentcore.slots import (
    ContextSlot,
    SlotConfig,
    SlotMode,
    window_start,
)
from agentcore.stores.base import (
    JsonValue,
    MemoryStore,
    MessageAppend,
    SessionState,
    SlotHead,
    StoredTurn,
    StoreWrite,
)
from agentcore.usage import NO_USAGE, CostTracker, Usage

logger = logging.getLogger("agentcore")

DEFAULT_SLOT = "default"
"""The id of the slot a new session starts in."""

WRITE_ATTEMPTS = 5
"""How often a session tries a write that another writer's changes made conflict."""


def write_starts_in_caller(store: object) -> bool:
    """Whether the class that defines ``store``'s ``write`` says it starts in the caller's task.

    A store says so with ``_write_starts_in_caller = True`` next to its ``write``: up
    to its first wait, that write looks at no task-bound state (no
    ``asyncio.current_task()``, no ``asyncio.timeout``). A subclass that overrides
    ``write`` without saying so again is not trusted with it.
    """
    for cls in type(store).__mro__:
        if "write" in cls.__dict__:
            return cls.__dict__.get("_write_starts_in_caller", False) is True
    return False


class StoreSync:
    """The stored state of one session as its object holds it: slots, turn index, cost.

    ``system_prompt`` goes to every slot; ``initial_mode`` is the mode of
    the default slot of a session with nothing stored yet.
    """

    def __init__(
        self,
        store: MemoryStore,
        session_id: str,
        *,
        system_prompt: str | None,
        initial_mode: SlotMode,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.system_prompt = system_prompt
        self.initial_mode = initial_mode
        self.cost = CostTracker()
        self.turn_index = 0
        self.slots: dict[str, ContextSlot] = {}
        self.current = DEFAULT_SLOT
        self.last_reply: Message | None = None
        self.loaded = False
        self._load_lock = asyncio.Lock()
        self._write_lock = asyncio.Lock()
        # A store whose write starts without looking at task-bound state (InMemoryStore,
        # SqliteStore) is committed in this task's first step on Python 3.10 and 3.11 too,
        # without a task per write: one that never waits there is done at once.
        self._step_here = write_starts_in_caller(store)

    def where(self, slot_id: str) -> str:
        """How errors name slot ``slot_id`` of this session."""
        return f"slot {slot_id!r} of session {self.session_id!r}"

    def new_slot(
        self,
        slot_id: str,
        config: SlotConfig,
        messages: Sequence[Message],
        version: int = 0,
        offset: int = 0,
    ) -> ContextSlot:
        """A slot object of this session holding ``messages`` from index ``offset`` on."""
        return ContextSlot(
            self.session_id,
            slot_id,
            config,
            system_prompt=self.system_prompt,
            messages=list(messages),
            offset=offset,
            version=version,
        )

    # -- reading -----------------------------------------------------------------

    async def load(self) -> None:
        """Load the session from the store, once."""
        if self.loaded:
            return
        async with self._load_lock:
            if self.loaded:
                return
            store = self.store
            # Checked before anything is paid for: an id the engine cannot store, a
            # read-only or locked database (see MemoryStore.check_session).
            await store.check_session(self.session_id)
            # Heads first and the state last: a write that lands while loading
            # leaves the versions and counts behind the state, never ahead, so
            # the next check (or a guarded write) reloads.
            heads = await store.slot_heads(self.session_id)
            configs = await store.load_slot_configs(self.session_id)
            for slot_id, data in configs.items():
                config = config_from_json(data, where=self.where(slot_id))
                head = heads.get(slot_id, SlotHead())
                self.slots[slot_id] = await self._load_slot(slot_id, config, head)
            state = await store.load_state(self.session_id)
            if state is not None:
                self._apply_state(state)
            self._ensure_current()
            self.loaded = True

    def _ensure_current(self) -> None:
        if self.current not in self.slots:
            self.slots[self.current] = self.new_slot(
                self.current, SlotConfig(self.initial_mode), []
            )

    def _apply_state(self, state: SessionState) -> None:
        self.turn_index = state.turn_index
        self.current = state.current_slot
        self.cost.restore(state.cost)

    async def _load_slot(self, slot_id: str, config: SlotConfig, head: SlotHead) -> ContextSlot:
        """A stored slot holding only the messages its mode sends (from :func:`window_start`)."""
        start = window_start(config, head.count)
        messages = await self.store.load_messages(self.session_id, slot_id, start)
        slot = self.new_slot(slot_id, config, messages, head.version, start)
        await slot.ensure_loaded(self.store)  # pinned messages older than the window
        return slot

    async def catch_up(self) -> bool:
        """Reload what another writer changed; True when something had changed.

        One :meth:`~agentcore.stores.MemoryStore.slot_heads` call, whose cost
        does not depend on the length of the history. While no write of this
        object is under way, the heads are read without taking the write lock:
        heads equal to what the object holds mean no other writer changed the
        session (a store write is atomic); any other answer is read again under
        the lock before anything is reloaded.
        """
        if not self._write_lock.locked() and self._matches(
            await self.store.slot_heads(self.session_id)
        ):
            return False
        async with self._write_lock:
            heads = await self.store.slot_heads(self.session_id)
            if self._matches(heads):
                return False
            await self._refresh(heads)
            return True

    def _matches(self, heads: Mapping[str, SlotHead]) -> bool:
        for slot_id, head in heads.items():
            slot = self.slots.get(slot_id)
            if slot is None or slot.version != head.version or len(slot) != head.count:
                return False
        return True

    async def _refresh(self, heads: Mapping[str, SlotHead]) -> None:
        """Bring the object up to the store: new messages, newer configs, the state.

        Called with the write lock held. Messages are read from the count the
        object holds on, since stored history is append-only.
        """
        store, session_id = self.store, self.session_id
        configs: Mapping[str, Mapping[str, JsonValue]] | None = None
        for slot_id, head in heads.items():
            slot = self.slots.get(slot_id)
            if slot is not None and slot.version == head.version and len(slot) == head.count:
                continue
            if configs is None:
                configs = await store.load_slot_configs(session_id)
            if slot_id not in configs:
                continue
            config = config_from_json(configs[slot_id], where=self.where(slot_id))
            if slot is None:
                self.slots[slot_id] = await self._load_slot(slot_id, config, head)
                continue
            slot.record_stored_config(config, head.version)
            slot.record_appended(await store.load_messages(session_id, slot_id, len(slot)))
            await slot.ensure_loaded(store)
        # Read last, so the state is never older than the messages read above:
        # a guarded write built from this view then cannot store a stale state.
        state = await store.load_state(session_id)
        if state is not None:
            self._apply_state(state)
        self._ensure_current()
        logger.info("session %r reloaded changes another writer stored", session_id)

    # -- writing -----------------------------------------------------------------

    def state(
        self,
        *,
        turn_index: int | None = None,
        current_slot: str | None = None,
        usage: Usage | None = None,
        purpose: str = "turn",
    ) -> SessionState:
        """The session state to store: the one held, changed as given, ``usage`` added."""
        cost = dict(self.cost.breakdown())
        if usage is not None:
            cost[purpose] = cost.get(purpose, NO_USAGE) + usage
        return SessionState(
            turn_index=self.turn_index if turn_index is None else turn_index,
            current_slot=self.current if current_slot is None else current_slot,
            cost=cost,
        )

    def guarded_write(self) -> StoreWrite:
        """A write that the store refuses if any slot holds other messages than this object.

        Every write that stores the session state carries these guards (empty
        appends), so a state computed from an old view never overwrites a
        newer one.
        """
        return StoreWrite(
            self.session_id,
            appends={slot.id: MessageAppend(len(slot), ()) for slot in self.slots.values()},
        )

    async def commit(
        self,
        build: Callable[[], StoreWrite],
        stored: Callable[[], None],
        *,
        attempts: int = WRITE_ATTEMPTS,
    ) -> None:
        """Write ``build()`` and run ``stored()`` right after it committed, as one unit.

        The unit runs under the write lock and is shielded from the caller's
        cancellation (:func:`~agentcore._cancel.complete_despite_cancel`): a
        caller cancelled meanwhile gets its ``CancelledError`` once the write
        and ``stored()`` are done, and the object agrees with the store
        either way. A write that conflicts with another writer's reloads
        what changed and is built again, up to ``attempts`` times.
        """
        await complete_despite_cancel(
            self._commit(build, stored, attempts), step_here=self._step_here
        )

    async def _commit(
        self, build: Callable[[], StoreWrite], stored: Callable[[], None], attempts: int
    ) -> None:
        async with self._write_lock:
            for attempt in range(1, attempts + 1):
                batch = build()
                try:
                    await self.store.write(batch)
                except DuplicateTurnError:
                    raise  # the turn is stored already: building it again cannot help
                except ConflictError:
                    heads = await self.store.slot_heads(self.session_id)
                    await self._refresh(heads)
                    if attempt == attempts:
                        raise
                    continue
                stored()
                return

    async def create_slot(self, slot_id: str, config: SlotConfig, *, switch: bool) -> ContextSlot:
        """Store a new empty slot with ``config``; with ``switch`` make it the current one."""
        slot = self.new_slot(slot_id, config, [])

        def build() -> StoreWrite:
            if slot_id in self.slots:  # another writer created it meanwhile
                raise SessionError(f"session {self.session_id!r} already has a slot {slot_id!r}")
            batch = self.guarded_write()
            batch.slot_configs[slot_id] = config_to_json(slot.config)
            batch.expected_versions[slot_id] = 0
            if switch:
                batch.state = self.state(current_slot=slot_id)
            return batch

        def stored() -> None:
            slot.record_stored_config(slot.config, 1)
            self.slots[slot_id] = slot
            if switch:
                self.current = slot_id

        await self.commit(build, stored)
        return slot

    async def switch_slot(self, slot_id: str) -> None:
        """Store ``slot_id`` as the current slot."""

        def build() -> StoreWrite:
            batch = self.guarded_write()
            batch.state = self.state(current_slot=slot_id)
            return batch

        def stored() -> None:
            self.current = slot_id

        await self.commit(build, stored)

    async def write_config(
        self,
        slot: ContextSlot,
        config: SlotConfig,
        *,
        expected: int,
        retry_on_conflict: bool,
        data: Mapping[str, JsonValue],
        usage: Usage | None,
        purpose: str,
    ) -> None:
        """Store ``config`` for ``slot`` with ``data`` and the state with ``usage`` added.

        Conditional on the slot's config version ``expected`` (with
        ``retry_on_conflict``: on the version held when the write is built);
        see :meth:`~agentcore.AgentSession.write_slot_config`.
        """
        holder = {"expected": expected}

        def build() -> StoreWrite:
            if retry_on_conflict:
                holder["expected"] = slot.version
            if slot.version != holder["expected"]:
                raise ConflictError(
                    f"slot {slot.id!r} of session {self.session_id!r} is at config version "
                    f"{slot.version}, not the expected {holder['expected']}: another write "
                    "replaced its config; compute the change again from the reloaded slot"
                )
            batch = self.guarded_write()
            batch.state = self.state(usage=usage, purpose=purpose)
            batch.slot_configs[slot.id] = config_to_json(config)
            batch.expected_versions[slot.id] = holder["expected"]
            batch.data.update(data)
            return batch

        def stored() -> None:
            slot.record_stored_config(config, holder["expected"] + 1)
            if usage is not None:
                self.cost.add(usage, purpose)

        await self.commit(build, stored)
        await slot.ensure_loaded(self.store)
        slot.drop_unsent()  # a new head: what it covers is never sent again

    async def commit_turn(
        self,
        slot: ContextSlot,
        messages: list[Message],
        usage: Usage,
        reply: Message,
        *,
        pin: bool = False,
        turn_id: str | None = None,
        timeout: float | None = None,
    ) -> bool:
        """Store a turn's messages with the state and cost; then the object holds them.

        ``reply`` is the turn's final assistant message, held as
        :attr:`last_reply` once stored. With ``pin`` the turn's first
        message (the user's) is pinned in the same write. ``turn_id`` makes
        the write idempotent and ``timeout`` bounds it (see
        :class:`~agentcore.stores.StoreWrite`). Returns False when another
        writer had stored the same ``turn_id`` already: the object then
        holds that turn, and :attr:`last_reply` is its reply.
        """
        writes_config = False
        config = slot.config
        version = slot.version

        def build() -> StoreWrite:
            nonlocal writes_config, config, version
            batch = self.guarded_write()
            start = len(slot)
            batch.appends[slot.id] = MessageAppend(start, messages)
            batch.state = self.state(turn_index=self.turn_index + 1, usage=usage)
            batch.turn_id = turn_id
            batch.timeout = timeout
            config, version = slot.config, slot.version
            focused = config.focused
            if pin and focused is not None:
                pinned = attrs.evolve(focused, pinned=(*focused.pinned, start))
                config = attrs.evolve(config, mode=pinned)
            # A slot's first write stores its config; later turns leave it alone unless
            # they pin.
            writes_config = version == 0 or config is not slot.config
            if writes_config:
                batch.slot_configs[slot.id] = config_to_json(config)
                batch.expected_versions[slot.id] = version
            return batch

        def stored() -> None:
            slot.record_appended(messages)
            if writes_config:
                slot.record_stored_config(config, version + 1)
            self.turn_index += 1
            self.cost.add(usage, "turn")
            self.last_reply = reply

        try:
            await self.commit(build, stored)
        except DuplicateTurnError as exc:
            await self.catch_up()
            self.last_reply = await self.stored_reply(exc.turn)
            return False
        except ConflictError as exc:
            raise ConflictError(
                f"session {self.session_id!r}: other writers kept changing the session while "
                f"this turn was stored ({WRITE_ATTEMPTS} attempts), so the reply was not "
                "stored; the session has reloaded what they stored: submit the turn again"
            ) from exc
        return True

    async def commit_history(self, slot: ContextSlot, messages: Sequence[Message]) -> None:
        """Store ``messages`` as the whole history of the empty ``slot``, with the state.

        One write, conditional on the slot still being empty: when another
        writer stored messages there meanwhile, it is refused with
        :class:`~agentcore.errors.SessionError` and nothing is stored. The
        turn index and the cost do not change.
        """
        writes_config = False

        def build() -> StoreWrite:
            nonlocal writes_config
            if len(slot):
                raise SessionError(
                    f"{self.where(slot.id)} holds {len(slot)} messages now (another writer "
                    "stored them): a history is imported into an empty slot only"
                )
            batch = self.guarded_write()
            batch.appends[slot.id] = MessageAppend(0, messages)
            batch.state = self.state()
            writes_config = slot.version == 0  # a slot's first write stores its config
            if writes_config:
                batch.slot_configs[slot.id] = config_to_json(slot.config)
                batch.expected_versions[slot.id] = 0
            return batch

        def stored() -> None:
            slot.record_appended(messages)
            if writes_config:
                slot.record_stored_config(slot.config, 1)

        await self.commit(build, stored)

    async def stored_reply(self, turn: StoredTurn) -> Message:
        """The reply of a stored turn: the last message of its range (its final assistant one)."""
        if turn.slot_id is None or turn.stop <= turn.start:
            raise SessionError(f"session {self.session_id!r}: stored turn {turn} has no messages")
        (reply,) = await self.store.load_messages(
            self.session_id, turn.slot_id, turn.stop - 1, turn.stop
        )
        return reply
