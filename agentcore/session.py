"""AgentSession: runs turns against a bundle and persists what they add."""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Coroutine,
    Mapping,
    Sequence,
)
from typing import Any, TypeVar

import attrs
from attrs import frozen

from agentcore._cancel import Deadline, complete_despite_cancel, consume_cancel
from agentcore.agent import Agent
from agentcore.budget import OVERFLOW_KEY, turn_counter
from agentcore.builder import AgentBundle
from agentcore.call_hooks import HookedProvider, tool_call_hooks
from agentcore.compaction import CompactError, SummaryInfo
from agentcore.context import TurnContext
from agentcore.cycle import CycleEvent, CycleResult, LlmCycle
from agentcore.errors import (
    ConfigError,
    ConflictError,
    ContextWindowExceededError,
    ReadonlySessionError,
    SessionError,
    TurnTimeoutError,
    UnknownSlotError,
)
from agentcore.llm import ResponseComplete
from agentcore.messages import Message, invalid_text, make_valid
from agentcore.pins import pin_group, resolve_index
from agentcore.plugins import call_each
from agentcore.session_memory import SessionMemory, check_json, check_key
from agentcore.slots import (
    FULL,
    ContextSlot,
    FocusedConfig,
    SlotConfig,
    SlotMode,
    config_from_json,
    config_to_json,
    window_start,
)
from agentcore.stores.base import (
    JsonValue,
    MemoryStore,
    MessageAppend,
    SessionState,
    SlotHead,
    StoreWrite,
)
from agentcore.usage import CostTracker, Usage

logger = logging.getLogger("agentcore")

T = TypeVar("T")

DEFAULT_SLOT = "default"
"""The id of the slot a new session starts in."""

WRITE_ATTEMPTS = 5
"""How often a session tries a write that another writer's changes made conflict."""


def _check_id(what: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{what} must be a non-empty str, got {value!r}")
    return value


def _check_mode(mode: Any) -> SlotMode:
    if mode == FULL or isinstance(mode, FocusedConfig):
        return mode  # type: ignore[no-any-return]
    raise ConfigError(f"mode must be 'full' or a FocusedConfig, got {mode!r}")


@frozen
class _FinalEvent:
    """The last event of a streamed turn, handed over once the turn is stored."""

    event: ResponseComplete
    message: Message


class AgentSession:
    """A conversation with an agent, persisted in the bundle's store.

    A new session with the id of a stored one resumes it: messages, slot
    configs, turn index and cost come back from the store on first use. A
    new session starts with one slot, ``"default"``, in ``mode`` (``"full"``
    or a :class:`FocusedConfig`); a resumed one keeps its stored modes.
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
        mode: SlotMode = FULL,
        *,
        readonly: bool = False,
    ) -> None:
        self._background: set[asyncio.Task[Any]] = set()
        if not isinstance(agent, Agent):
            raise ConfigError(f"agent must be an Agent, got {agent!r}")
        if not isinstance(bundle, AgentBundle):
            raise ConfigError(
                f"bundle must be an AgentBundle (AgentBuilder().build()), got {bundle!r}"
            )
        self._agent = agent
        self._session_id = _check_id("session_id", session_id)
        self._bundle = bundle
        self._initial_mode = _check_mode(mode)
        self._readonly = readonly
        self._memory = SessionMemory(bundle.store, session_id)
        self._cost = CostTracker()
        self._turn_index = 0
        self._slots: dict[str, ContextSlot] = {}
        self._current = DEFAULT_SLOT
        self._loaded = False
        self._load_lock = asyncio.Lock()
        self._turn_lock = asyncio.Lock()
        self._write_lock = asyncio.Lock()
        self._open_stream = False

    def __del__(self) -> None:
        pending = [task for task in getattr(self, "_background", ()) if not task.done()]
        if pending:
            warnings.warn(
                f"AgentSession {self._session_id!r} was dropped with {len(pending)} pending "
                "background task(s), such as a summary being made; their work is lost. "
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
    def readonly(self) -> bool:
        """True when the session refuses turns and data writes."""
        return self._readonly

    @property
    def turn_index(self) -> int:
        """How many turns the session has stored (a streamed turn counts once stored)."""
        return self._turn_index

    @property
    def cost(self) -> CostTracker:
        """Tokens used so far, by purpose."""
        return self._cost

    @property
    def memory(self) -> SessionMemory:
        """The session's key/value data."""
        return self._memory

    @property
    def current_slot_id(self) -> str:
        """The id of the slot turns go to."""
        return self._current

    # -- loading ----------------------------------------------------------------

    async def load(self) -> None:
        """Load the session from the store; every other method does it on first use."""
        if self._loaded:
            return
        async with self._load_lock:
            if self._loaded:
                return
            store = self._bundle.store
            # Heads first and the state last: a write that lands while loading
            # leaves the versions and counts behind the state, never ahead, so
            # the next check (or a guarded write) reloads.
            heads = await store.slot_heads(self._session_id)
            configs = await store.load_slot_configs(self._session_id)
            for slot_id, data in configs.items():
                config = config_from_json(data, where=self._where(slot_id))
                head = heads.get(slot_id, SlotHead())
                self._slots[slot_id] = await self._load_slot(slot_id, config, head)
            state = await store.load_state(self._session_id)
            if state is not None:
                self._apply_state(state)
            if self._current not in self._slots:
                self._slots[self._current] = self._new_slot(
                    self._current, SlotConfig(self._initial_mode), []
                )
            self._loaded = True

    def _where(self, slot_id: str) -> str:
        return f"slot {slot_id!r} of session {self._session_id!r}"

    def _apply_state(self, state: SessionState) -> None:
        self._turn_index = state.turn_index
        self._current = state.current_slot
        self._cost.restore(state.cost)

    def _new_slot(
        self,
        slot_id: str,
        config: SlotConfig,
        messages: Sequence[Message],
        version: int = 0,
        offset: int = 0,
    ) -> ContextSlot:
        return ContextSlot(
            self._session_id,
            slot_id,
            config,
            system_prompt=self._agent.system_prompt or None,
            messages=list(messages),
            offset=offset,
            version=version,
        )

    async def _load_slot(self, slot_id: str, config: SlotConfig, head: SlotHead) -> ContextSlot:
        """A stored slot holding only the messages its mode sends (from :func:`window_start`)."""
        start = window_start(config, head.count)
        messages = await self._bundle.store.load_messages(self._session_id, slot_id, start)
        slot = self._new_slot(slot_id, config, messages, head.version, start)
        await slot.ensure_loaded(self._bundle.store)  # pinned messages older than the window
        return slot

    async def _catch_up(self) -> bool:
        """Reload what another writer changed; True when something had changed.

        One :meth:`~agentcore.stores.MemoryStore.slot_heads` call, whose cost
        does not depend on the length of the history.
        """
        async with self._write_lock:
            heads = await self._bundle.store.slot_heads(self._session_id)
            if self._matches(heads):
                return False
            await self._refresh(heads)
            return True

    def _matches(self, heads: Mapping[str, SlotHead]) -> bool:
        for slot_id, head in heads.items():
            slot = self._slots.get(slot_id)
            if slot is None or slot.version != head.version or len(slot) != head.count:
                return False
        return True

    async def _refresh(self, heads: Mapping[str, SlotHead]) -> None:
        """Bring the object up to the store: new messages, newer configs, the state.

        Called with the write lock held. Messages are read from the count the
        object holds on, since stored history is append-only.
        """
        store, session_id = self._bundle.store, self._session_id
        configs: Mapping[str, Mapping[str, JsonValue]] | None = None
        for slot_id, head in heads.items():
            slot = self._slots.get(slot_id)
            if slot is not None and slot.version == head.version and len(slot) == head.count:
                continue
            if configs is None:
                configs = await store.load_slot_configs(session_id)
            if slot_id not in configs:
                continue
            config = config_from_json(configs[slot_id], where=self._where(slot_id))
            if slot is None:
                self._slots[slot_id] = await self._load_slot(slot_id, config, head)
                continue
            slot._set_stored(config, head.version)
            slot._extend(await store.load_messages(session_id, slot_id, len(slot)))
            await slot.ensure_loaded(store)
        # Read last, so the state is never older than the messages read above:
        # a guarded write built from this view then cannot store a stale state.
        state = await store.load_state(session_id)
        if state is not None:
            self._apply_state(state)
        if self._current not in self._slots:
            self._slots[self._current] = self._new_slot(
                self._current, SlotConfig(self._initial_mode), []
            )
        logger.info("session %r reloaded changes another writer stored", session_id)

    # -- slots ------------------------------------------------------------------

    async def get_slot(self, slot_id: str | None = None) -> ContextSlot:
        """The slot ``slot_id``, or the current slot."""
        await self.load()
        wanted = self._current if slot_id is None else slot_id
        try:
            return self._slots[wanted]
        except KeyError:
            known = ", ".join(sorted(self._slots))
            raise UnknownSlotError(
                f"session {self._session_id!r} has no slot {wanted!r} (slots: {known})"
            ) from None

    async def slot_ids(self) -> list[str]:
        """Every slot id of the session, sorted."""
        await self.load()
        return sorted(self._slots)

    async def create_slot(
        self, slot_id: str, mode: SlotMode = FULL, *, switch: bool = False
    ) -> ContextSlot:
        """Add an empty slot; with ``switch`` it becomes the current slot."""
        _check_id("slot_id", slot_id)
        self._check_writable("create a slot")
        mode = _check_mode(mode)
        await self.load()
        async with self._turn_lock:
            await self._catch_up()
            if slot_id in self._slots:
                raise SessionError(f"session {self._session_id!r} already has a slot {slot_id!r}")
            slot = self._new_slot(slot_id, SlotConfig(mode), [])

            def write() -> StoreWrite:
                if slot_id in self._slots:  # another writer created it meanwhile
                    raise SessionError(
                        f"session {self._session_id!r} already has a slot {slot_id!r}"
                    )
                batch = self._guarded_write()
                batch.slot_configs[slot_id] = config_to_json(slot.config)
                batch.expected_versions[slot_id] = 0
                if switch:
                    batch.state = self._state(current_slot=slot_id)
                return batch

            def stored() -> None:
                slot._set_stored(slot.config, 1)
                self._slots[slot_id] = slot
                if switch:
                    self._current = slot_id

            await complete_despite_cancel(self._commit(write, stored))
            return slot

    async def switch_slot(self, slot_id: str) -> ContextSlot:
        """Make ``slot_id`` the slot that turns go to."""
        self._check_writable("switch slots")
        slot = await self.get_slot(slot_id)
        async with self._turn_lock:

            def write() -> StoreWrite:
                batch = self._guarded_write()
                batch.state = self._state(current_slot=slot_id)
                return batch

            def stored() -> None:
                self._current = slot_id

            await complete_despite_cancel(self._commit(write, stored))
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
        """Pin raw message ``index`` of a Focused slot: it is never summarized away.

        A negative ``index`` counts from the end (``-2``: the user message of
        the last plain turn). Pinning a tool call or one of its results pins
        the call with all of its results. Plugins may refuse the pin through
        the ``check_slot_config`` hook (autosummary refuses pins that cannot
        fit the window) with :class:`~agentcore.errors.ConfigError`; then
        nothing is stored. Returns the slot's pinned indices.
        """
        return await self._change_pins(index, slot_id, add=True)

    async def unpin(self, index: int, slot_id: str | None = None) -> tuple[int, ...]:
        """Unpin raw message ``index`` (and its tool group); returns the pinned indices."""
        return await self._change_pins(index, slot_id, add=False)

    async def _change_pins(self, index: int, slot_id: str | None, *, add: bool) -> tuple[int, ...]:
        self._check_writable("pin a message")
        for _ in range(3):
            slot = await self.get_slot(slot_id)
            focused = slot.config.focused
            if focused is None:
                raise ConfigError(
                    f"slot {slot.id!r} is in Full mode, where every message is sent: "
                    "pins apply to a Focused slot"
                )
            resolved = resolve_index(slot.messages, index)
            await _load_group(self._bundle.store, slot, resolved)
            group = set(pin_group(slot.messages, resolved))
            pins = set(focused.pinned) | group if add else set(focused.pinned) - group
            config = attrs.evolve(slot.config, mode=attrs.evolve(focused, pinned=pins))
            if add:
                await call_each(
                    self._pm,
                    "check_slot_config",
                    isolate=False,
                    session=self,
                    slot=slot,
                    config=config,
                )
            try:
                await self.write_slot_config(
                    slot.id, config, expected_version=slot.version, usage=None
                )
            except ConflictError:
                continue  # a summary or mode change landed meanwhile: recompute from it
            assert config.focused is not None
            return config.focused.pinned
        raise ConflictError(f"slot {slot_id!r}: the pin kept conflicting with other writes")

    async def write_slot_config(
        self,
        slot_id: str,
        config: SlotConfig,
        *,
        expected_version: int | None = None,
        data: Mapping[str, JsonValue] | None = None,
        usage: Usage | None = None,
        purpose: str = "summary",
        retry_on_conflict: bool = False,
    ) -> None:
        """Replace a slot's config, store session data and count ``usage``, in one store write.

        This is how plugins apply a change computed from a slot, such as a
        summary: the write also stores the session state with ``usage``
        added to the cost under ``purpose``, so that cost survives a resume.
        It is conditional on the slot's config version: ``expected_version``
        (default: the :attr:`ContextSlot.version` this object holds) must
        still be the stored one. When another write replaced the config since
        (a newer summary, a mode change), the write is refused with
        :class:`~agentcore.errors.ConflictError`, nothing is stored, and the
        session has reloaded the slot, so the caller can compute the change
        again; with ``retry_on_conflict`` the new config is written over the
        newer one instead. Messages another writer appended meanwhile never
        make it fail. Once the write has committed, the object holds it,
        even if the caller was cancelled.
        """
        self._check_writable("write a slot config")
        if not isinstance(config, SlotConfig):
            raise ConfigError(f"config must be a SlotConfig, got {config!r}")
        if usage is not None and not isinstance(usage, Usage):
            raise ConfigError(f"usage must be a Usage or None, got {usage!r}")
        values = dict(data or {})
        for key, value in values.items():
            check_key(key)
            check_json(key, value)
        slot = await self.get_slot(slot_id)
        expected = slot.version if expected_version is None else expected_version
        holder = {"expected": expected}

        def write() -> StoreWrite:
            if retry_on_conflict:
                holder["expected"] = slot.version
            if slot.version != holder["expected"]:
                raise ConflictError(
                    f"slot {slot.id!r} of session {self._session_id!r} is at config version "
                    f"{slot.version}, not the expected {holder['expected']}: another write "
                    "replaced its config; compute the change again from the reloaded slot"
                )
            batch = self._guarded_write()
            batch.state = self._state(usage=usage, purpose=purpose)
            batch.slot_configs[slot.id] = config_to_json(config)
            batch.expected_versions[slot.id] = holder["expected"]
            batch.data.update(values)
            return batch

        def stored() -> None:
            slot._set_stored(config, holder["expected"] + 1)
            if usage is not None:
                self._cost.add(usage, purpose)

        await complete_despite_cancel(self._commit(write, stored))
        await slot.ensure_loaded(self._bundle.store)

    async def record_usage(
        self,
        usage: Usage | None,
        purpose: str,
        *,
        data: Mapping[str, JsonValue] | None = None,
    ) -> None:
        """Count ``usage`` under ``purpose`` and store session data, in one store write.

        For plugin work that changes no slot config, such as a summary
        attempt that failed or was dropped: the session state is stored with
        the new cost, so what the work cost survives a resume. Once the write
        has committed, the object holds it, even if the caller was cancelled.
        """
        self._check_writable("record usage")
        if usage is not None and not isinstance(usage, Usage):
            raise ConfigError(f"usage must be a Usage or None, got {usage!r}")
        if not isinstance(purpose, str) or not purpose:
            raise ConfigError(f"purpose must be a non-empty str, got {purpose!r}")
        values = dict(data or {})
        for key, value in values.items():
            check_key(key)
            check_json(key, value)
        await self.load()

        def write() -> StoreWrite:
            batch = self._guarded_write()
            batch.state = self._state(usage=usage, purpose=purpose)
            batch.data.update(values)
            return batch

        def stored() -> None:
            if usage is not None:
                self._cost.add(usage, purpose)

        await complete_despite_cancel(self._commit(write, stored))

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
        for name, value in (("start", start), ("stop", stop)):
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ConfigError(f"history {name} must be an int >= 0, got {value!r}")
        slot = await self.get_slot(slot_id)
        count = len(slot)
        stop = count if stop is None else min(stop, count)
        start = min(start, stop)
        if start >= slot.offset:
            return slot.raw_messages(start, stop)
        middle = min(stop, slot.offset)
        older = await self._bundle.store.load_messages(self._session_id, slot.id, start, middle)
        return [*older, *slot.raw_messages(middle, stop)]

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

    async def get_conversation_summary(self) -> str | None:
        """The latest conversation summary a plugin stored, or None."""
        key = self._bundle.plugin_manager.hook.summary_memory_key(config=self._bundle.config)
        if key is None:
            return None
        value = await self._memory.get(key)
        return value if isinstance(value, str) else None

    async def compact(self, instructions: str | None = None) -> SummaryInfo:
        """Summarize now whatever the current slot can give up, and return what was done.

        Calls the ``compact_session`` hook (the autosummary plugin implements
        it): the summary ignores the automatic trigger (watermark, debounce)
        but keeps the plugin's budget rules and its verbatim recent tail.
        ``instructions`` (such as ``"keep the API design decisions"``) are
        added to the summary prompt. Runs between turns, under the same lock.

        :param instructions: Focus instructions for this summary, or None.
        :return: The applied summary: its text, the raw messages it covers,
            the context's tokens before and after.
        :raises CompactError: No installed plugin compacts, the slot is not
            Focused, nothing can be given up, a hook vetoed the summary, or the
            summary failed (the cause chained). The session is unchanged.
        :raises ConfigError: ``instructions`` is not a non-empty str or None.
        """
        if instructions is not None and (
            not isinstance(instructions, str) or not instructions.strip()
        ):
            raise ConfigError(f"instructions must be a non-empty str or None, got {instructions!r}")
        self._check_writable("compact")
        self._check_no_open_stream()
        async with self._turn_lock:
            await self.load()
            await self._catch_up()
            slot = self._slots[self._current]
            ctx = self._context(slot, self._turn_index, Message.user(""), is_stream=False)
            ctx.messages = []
            result = await call_each(
                self._pm, "compact_session", isolate=False, ctx=ctx, instructions=instructions
            )
        if not isinstance(result, SummaryInfo):
            raise CompactError(
                f"session {self._session_id!r}: no installed plugin compacts sessions; "
                "enable the autosummary plugin with summary_config to compact"
            )
        return result

    # -- turns ------------------------------------------------------------------

    async def submit_turn(self, user_input: str | Message, *, pin: bool = False) -> Message:
        """Run one turn and return the assistant's final message.

        With ``pin`` the user's message is pinned in the same store write as
        the turn (see :meth:`pin`); a pin that cannot fit is refused with
        :class:`ConfigError` before any model call, and nothing is stored.

        Follows these steps: check the input (text that is not valid Unicode
        raises :class:`ConfigError` before any hook or model call), read-only
        check, catch up with other writers, ``on_turn_start``, load the
        context, run the model (and tools), append the turn's messages (made
        valid Unicode) and store them with the state and cost in one store
        write, advance the turn index, ``on_turn_end``, ``post_turn_end``.
        A provider error stores nothing. A ``turn_timeout`` reached before the
        store write raises :class:`~agentcore.errors.TurnTimeoutError`, and
        nothing is stored. A cancelled caller gets ``CancelledError`` only
        when nothing was stored; once the write has begun it completes and
        the message is returned.
        """
        user_message = self._user_message(user_input)
        _check_pin_flag(pin)
        self._check_writable("submit a turn")
        self._check_no_open_stream()
        async with self._turn_lock:
            deadline = self._deadline()
            with deadline.guard():
                return await self._run_turn(user_message, pin=pin)

    async def _run_turn(self, user_message: Message, *, pin: bool) -> Message:
        await self.load()
        await self._catch_up()
        slot = self._slots[self._current]
        if pin:
            await self._check_pin_fits(slot, user_message)
        ctx = self._context(slot, self._turn_index, user_message, is_stream=False)
        try:
            await call_each(self._pm, "on_turn_start", isolate=False, ctx=ctx)
            cycle = self._cycle(ctx, user_message)
            if self._bundle.tools is not None and len(self._bundle.tools):
                result = await cycle.submit_with_tools([], self._bundle.tools)
            else:
                result = await cycle.submit_messages([])
            added = [make_valid(message) for message in result.new_messages]
            await self._count_for_storage([user_message, *added])
            await complete_despite_cancel(
                self._commit_turn(slot, [user_message, *added], result, pin=pin)
            )
        except BaseException as exc:
            await call_each(self._pm, "on_turn_error", isolate=True, ctx=ctx, error=exc)
            raise
        await self._end_turn(ctx, user_message, added, result)
        return _final(added, result)

    def submit_turn_stream(self, user_input: str | Message, *, pin: bool = False) -> TurnStream:
        """Run one turn, streaming the reply (``pin`` as in :meth:`submit_turn`).

        Iterate the returned :class:`TurnStream` for events. The turn is
        stored, and ``on_turn_end`` and ``post_turn_end`` have run, before
        the final :class:`~agentcore.llm.ResponseComplete` event is handed
        over: a consumer that stops reading after it (or closes the stream)
        keeps the turn. A stream abandoned before that event stores nothing.
        The hooks see the index of the streamed turn; :attr:`turn_index`
        advances when the turn is stored. ``turn_timeout`` covers the turn
        from its first event on (time the consumer spends between events
        counts too).
        """
        user_message = self._user_message(user_input)
        _check_pin_flag(pin)
        self._check_writable("submit a turn")
        self._check_no_open_stream()
        return TurnStream(self._stream_turn(user_message, pin=pin))

    async def _stream_turn(
        self, user_message: Message, *, pin: bool
    ) -> AsyncGenerator[CycleEvent | _FinalEvent, None]:
        await self._turn_lock.acquire()
        self._open_stream = True
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self._open_stream = False
                self._turn_lock.release()

        try:
            deadline = self._deadline()
            with deadline.guard():
                await self.load()
                await self._catch_up()
                slot = self._slots[self._current]
                if pin:
                    await self._check_pin_fits(slot, user_message)
                ctx = self._context(slot, self._turn_index, user_message, is_stream=True)
            final: tuple[ResponseComplete, list[Message], CycleResult] | None = None
            try:
                with deadline.guard():
                    await call_each(self._pm, "on_turn_start", isolate=False, ctx=ctx)
                cycle = self._cycle(ctx, user_message)
                stream = cycle.stream_with_tools([], self._bundle.tools)
                try:
                    while True:
                        with deadline.guard():
                            try:
                                event = await stream.__anext__()
                            except StopAsyncIteration:
                                break
                        if not isinstance(event, ResponseComplete):
                            yield event
                            continue
                        # The final event: store the turn before handing it over.
                        with deadline.guard():
                            result = stream.result
                            added = [make_valid(message) for message in result.new_messages]
                            await self._count_for_storage([user_message, *added])
                            await complete_despite_cancel(
                                self._commit_turn(slot, [user_message, *added], result, pin=pin)
                            )
                        final = (event, added, result)
                        break
                finally:
                    await stream.aclose()
            except BaseException as exc:
                await call_each(self._pm, "on_turn_error", isolate=True, ctx=ctx, error=exc)
                raise
            if final is not None:
                event, added, result = final
                with deadline.guard():
                    await self._end_turn(ctx, user_message, added, result)
                release()
                yield _FinalEvent(event, _final(added, result))
        finally:
            release()

    # -- background work ---------------------------------------------------------

    def run_in_background(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work`` as a task the session tracks; :meth:`aclose` waits for it.

        An exception the task raises is logged at ERROR on the ``agentcore``
        logger. A session garbage-collected while such a task is pending
        warns with :class:`ResourceWarning`.
        """
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background_done)
        return task

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error(
                "background work of session %r failed",
                self._session_id,
                exc_info=task.exception(),
            )

    async def aclose(self, *, cancel_pending: bool = False) -> None:
        """Wait until the background work of the session has finished.

        With ``cancel_pending``, cancel that work first (a summary being
        made is dropped whole: nothing of it is stored) and wait for the
        cancellation to finish.
        """
        while self._background:
            pending = list(self._background)
            if cancel_pending:
                for task in pending:
                    task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def __aenter__(self) -> AgentSession:
        await self.load()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- internals ----------------------------------------------------------------

    @property
    def _pm(self) -> Any:
        return self._bundle.plugin_manager

    def _deadline(self) -> Deadline:
        seconds = self._bundle.config.turn_timeout

        def error() -> BaseException:
            return TurnTimeoutError(
                f"turn of session {self._session_id!r} did not finish within the "
                f"turn_timeout of {seconds} s; nothing of it was stored"
            )

        return Deadline(seconds, error)

    def _check_no_open_stream(self) -> None:
        if self._open_stream:
            raise SessionError(
                f"session {self._session_id!r} has a streamed turn in progress: "
                "exhaust it, await stream.finalize() or await stream.aclose() first"
            )

    def _check_writable(self, action: str) -> None:
        if self._readonly:
            raise ReadonlySessionError(
                f"session {self._session_id!r} is read-only: cannot {action}"
            )

    @staticmethod
    def _user_message(user_input: str | Message) -> Message:
        if isinstance(user_input, Message):
            if user_input.role != "user":
                raise ConfigError(f"a turn takes a user message, got a {user_input.role} message")
            message = user_input
        elif not isinstance(user_input, str):
            raise ConfigError(f"a turn takes a str or a user Message, got {user_input!r}")
        elif not user_input.strip():
            raise ConfigError("a turn needs a non-empty user message")
        else:
            message = Message.user(user_input)
        problem = invalid_text(message)
        if problem is not None:
            raise ConfigError(
                f"the user message is not valid Unicode: {problem}; "
                "decode its bytes as UTF-8 (or repair them) before submitting"
            )
        return message

    def _cycle(self, ctx: TurnContext, user_message: Message) -> LlmCycle:
        async def prepare(added: Sequence[Message]) -> list[Message]:
            ctx.messages = [user_message, *added]
            ctx.context = None
            await call_each(
                self._pm,
                "before_model_call",
                isolate=True,
                propagate=(ContextWindowExceededError,),
                ctx=ctx,
            )
            context = ctx.slot.load_messages() if ctx.context is None else ctx.context
            return [*context, *ctx.messages]

        async def on_overflow(
            error: ContextWindowExceededError, added: Sequence[Message]
        ) -> list[Message]:
            ctx.extra[OVERFLOW_KEY] = error
            try:
                return await prepare(added)
            finally:
                ctx.extra.pop(OVERFLOW_KEY, None)

        agent = self._agent
        return LlmCycle(
            ctx.provider,
            model=agent.model,
            max_tokens=agent.max_tokens,
            temperature=agent.temperature,
            stop=agent.stop,
            purpose="turn",
            max_tool_rounds=self._bundle.config.max_tool_rounds,
            prepare=prepare,
            on_overflow=on_overflow,
            tool_hooks=tool_call_hooks(self._pm, ctx),
        )

    def _state(
        self,
        *,
        turn_index: int | None = None,
        current_slot: str | None = None,
        usage: Usage | None = None,
        purpose: str = "turn",
    ) -> SessionState:
        cost = dict(self._cost.breakdown())
        if usage is not None:
            cost[purpose] = cost.get(purpose, Usage()) + usage
        return SessionState(
            turn_index=self._turn_index if turn_index is None else turn_index,
            current_slot=self._current if current_slot is None else current_slot,
            cost=cost,
        )

    def _guarded_write(self) -> StoreWrite:
        """A write that the store refuses if any slot holds other messages than this object.

        Every write that stores the session state carries these guards (empty
        appends), so a state computed from an old view never overwrites a
        newer one.
        """
        return StoreWrite(
            self._session_id,
            appends={slot.id: MessageAppend(len(slot), ()) for slot in self._slots.values()},
        )

    def _context(
        self, slot: ContextSlot, index: int, user_message: Message, *, is_stream: bool
    ) -> TurnContext:
        ctx = TurnContext(
            session=self,
            session_id=self._session_id,
            turn_index=index,
            slot=slot,
            messages=[user_message],
            cost=self._cost,
            provider=self._bundle.provider,
            store=self._bundle.store,
            memory=self._memory,
            config=self._bundle.config,
            is_stream=is_stream,
        )
        ctx.provider = HookedProvider(self._bundle.provider, self._pm, ctx)
        return ctx

    async def _commit(
        self,
        build: Callable[[], StoreWrite],
        stored: Callable[[], None],
        *,
        attempts: int = WRITE_ATTEMPTS,
    ) -> None:
        """Write ``build()`` and run ``stored()`` right after it committed, as one unit.

        Runs under the write lock (and, through :func:`complete_despite_cancel`,
        out of reach of the caller's cancellation). A write that conflicts
        with another writer's reloads what changed and is built again, up to
        ``attempts`` times.
        """
        async with self._write_lock:
            for attempt in range(1, attempts + 1):
                batch = build()
                try:
                    await self._bundle.store.write(batch)
                except ConflictError:
                    heads = await self._bundle.store.slot_heads(self._session_id)
                    await self._refresh(heads)
                    if attempt == attempts:
                        raise
                    continue
                stored()
                return

    async def _check_pin_fits(self, slot: ContextSlot, user_message: Message) -> None:
        """Refuse, before any model call, a pin of ``user_message`` that cannot be stored."""
        focused = slot.config.focused
        if focused is None:
            raise ConfigError(
                f"slot {slot.id!r} is in Full mode, where every message is sent: "
                "pins apply to a Focused slot"
            )
        index = len(slot)
        probe = ContextSlot(
            slot.session_id,
            slot.id,
            slot.config,
            system_prompt=slot.system_prompt,
            messages=[*slot.messages, user_message],
        )
        config = attrs.evolve(
            slot.config, mode=attrs.evolve(focused, pinned=(*focused.pinned, index))
        )
        await call_each(
            self._pm, "check_slot_config", isolate=False, session=self, slot=probe, config=config
        )

    async def _count_for_storage(self, messages: Sequence[Message]) -> None:
        """Count ``messages`` with the turn counter, so their counts are stored with them.

        A message already counted (the user's, by the pre-call budget) costs
        nothing; a long one is counted off the event loop.
        """
        counter = turn_counter(self._agent, self._bundle.provider)
        for message in messages:
            await counter.count_message_async(message)

    async def _commit_turn(
        self, slot: ContextSlot, messages: list[Message], result: CycleResult, *, pin: bool = False
    ) -> None:
        """Store the turn's messages with the state and cost; then the object holds them.

        With ``pin`` the turn's first message (the user's) is pinned in the
        same write.
        """
        writes_config = False
        config = slot.config
        version = slot.version

        def build() -> StoreWrite:
            nonlocal writes_config, config, version
            batch = self._guarded_write()
            start = len(slot)
            batch.appends[slot.id] = MessageAppend(start, messages)
            batch.state = self._state(turn_index=self._turn_index + 1, usage=result.usage)
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
            slot._extend(messages)
            if writes_config:
                slot._set_stored(config, version + 1)
            self._turn_index += 1
            self._cost.add(result.usage, "turn")

        try:
            await self._commit(build, stored)
        except ConflictError as exc:
            raise ConflictError(
                f"session {self._session_id!r}: other writers kept changing the session while "
                f"this turn was stored ({WRITE_ATTEMPTS} attempts), so the reply was not "
                "stored; the session has reloaded what they stored: submit the turn again"
            ) from exc

    async def _end_turn(
        self, ctx: TurnContext, user_message: Message, added: list[Message], result: CycleResult
    ) -> None:
        """Run the end hooks of a stored turn; a cancellation stops them, never the turn."""
        ctx.messages = [user_message, *added]
        ctx.usage = result.usage
        ctx.response = result.response
        try:
            await call_each(self._pm, "on_turn_end", isolate=True, ctx=ctx)
            await call_each(self._pm, "post_turn_end", isolate=True, ctx=ctx)
        except asyncio.CancelledError:
            # The turn is stored: the caller gets it, the remaining hooks are skipped.
            consume_cancel()
            logger.warning(
                "session %r turn %d was cancelled in its end hooks, after it was stored",
                self._session_id,
                ctx.turn_index,
            )


def _check_pin_flag(pin: object) -> None:
    if not isinstance(pin, bool):
        raise ConfigError(f"pin must be True or False, got {pin!r}")


def _final(added: Sequence[Message], result: CycleResult) -> Message:
    """The turn's final assistant message, as stored."""
    for message in reversed(added):
        if message.role == "assistant":
            return message
    return result.final_message


class TurnStream:
    """The events of a streamed turn.

    Iterate with ``async for`` to get :class:`~agentcore.llm.TextDelta`,
    :class:`~agentcore.llm.ToolCallDelta`, tool-result and
    :class:`~agentcore.llm.ResponseComplete` events, each with a ``.text``
    delta. The turn is stored before the final ``ResponseComplete`` is
    handed over, so breaking out of the loop after it loses nothing. Or
    ``await stream.finalize()`` to consume the rest and get the final
    assistant message. :attr:`message` is set once the turn is stored.
    """

    def __init__(self, events: AsyncGenerator[CycleEvent | _FinalEvent, None]) -> None:
        self._events = events
        self._done = False
        self.message: Message | None = None
        """The assistant's final message, once the turn has been stored."""

    def __aiter__(self) -> AsyncIterator[CycleEvent]:
        return self

    async def __anext__(self) -> CycleEvent:
        if self._done:
            await self._events.aclose()
            raise StopAsyncIteration
        try:
            item = await self._events.__anext__()
        except BaseException:
            self._done = True
            raise
        if isinstance(item, _FinalEvent):
            self.message = item.message
            self._done = True
            return item.event
        return item

    async def finalize(self) -> Message:
        """Consume the remaining events, finalize the turn, return the final message."""
        async for _ in self:
            pass
        if self.message is None:
            raise SessionError("the stream was closed before its turn was finalized")
        return self.message

    async def aclose(self) -> None:
        """Abandon the stream: if the turn was not finalized, nothing is stored."""
        await self._events.aclose()


async def _load_group(store: MemoryStore, slot: ContextSlot, index: int) -> None:
    """Load raw message ``index`` of ``slot`` and, back to its tool call, what precedes it."""
    await slot.ensure_loaded(store, index)
    while slot.offset > 0 and slot.messages[slot.offset].role == "tool":
        await slot.ensure_loaded(store, slot.offset - 1)
