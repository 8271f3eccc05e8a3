"""AgentSession: runs turns against a bundle and persists what they add."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Coroutine, Sequence
from typing import Any, TypeVar

import attrs

from agentcore.agent import Agent
from agentcore.budget import OVERFLOW_KEY
from agentcore.builder import AgentBundle
from agentcore.context import TurnContext
from agentcore.cycle import CycleEvent, CycleResult, LlmCycle
from agentcore.errors import (
    ConfigError,
    ContextWindowExceededError,
    ReadonlySessionError,
    SessionError,
    UnknownSlotError,
)
from agentcore.messages import Message
from agentcore.plugins import call_each
from agentcore.session_memory import SessionMemory
from agentcore.slots import (
    FULL,
    ContextSlot,
    FocusedConfig,
    SlotConfig,
    SlotMode,
    config_from_json,
    config_to_json,
)
from agentcore.stores.base import JsonValue, MessageAppend, SessionState, StoreWrite
from agentcore.usage import CostTracker

logger = logging.getLogger("agentcore")

T = TypeVar("T")

DEFAULT_SLOT = "default"
"""The id of the slot a new session starts in."""


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
    or a :class:`FocusedConfig`); a resumed one keeps its stored modes.
    A ``readonly`` session refuses turns and data writes.
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
        self._open_stream = False
        self._background: set[asyncio.Task[Any]] = set()

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
        """How many turns the session has completed (a streamed turn counts once started)."""
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
            state = await store.load_state(self._session_id)
            configs = await store.load_slot_configs(self._session_id)
            for slot_id, data in configs.items():
                where = f"slot {slot_id!r} of session {self._session_id!r}"
                config = config_from_json(data, where=where)
                messages = await store.load_messages(self._session_id, slot_id)
                self._slots[slot_id] = self._new_slot(slot_id, config, messages)
            if state is not None:
                self._turn_index = state.turn_index
                self._current = state.current_slot
                self._cost = CostTracker(by_purpose=dict(state.cost))
            if self._current not in self._slots:
                self._slots[self._current] = self._new_slot(
                    self._current, SlotConfig(self._initial_mode), []
                )
            self._loaded = True

    def _new_slot(
        self, slot_id: str, config: SlotConfig, messages: Sequence[Message]
    ) -> ContextSlot:
        return ContextSlot(
            self._session_id,
            slot_id,
            config,
            system_prompt=self._agent.system_prompt or None,
            messages=list(messages),
        )

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
            if slot_id in self._slots:
                raise SessionError(f"session {self._session_id!r} already has a slot {slot_id!r}")
            slot = self._new_slot(slot_id, SlotConfig(mode), [])
            write = StoreWrite(
                self._session_id, slot_configs={slot_id: config_to_json(slot.config)}
            )
            if switch:
                write.state = self._state(current_slot=slot_id)
            await self._bundle.store.write(write)
            self._slots[slot_id] = slot
            if switch:
                self._current = slot_id
            return slot

    async def switch_slot(self, slot_id: str) -> ContextSlot:
        """Make ``slot_id`` the slot that turns go to."""
        self._check_writable("switch slots")
        slot = await self.get_slot(slot_id)
        async with self._turn_lock:
            await self._bundle.store.write(
                StoreWrite(self._session_id, state=self._state(current_slot=slot_id))
            )
            self._current = slot_id
        return slot

    async def set_mode(self, mode: SlotMode, slot_id: str | None = None) -> None:
        """Change the mode of a slot (default: the current one); history is kept."""
        self._check_writable("change a slot mode")
        mode = _check_mode(mode)
        slot = await self.get_slot(slot_id)
        await slot.save(self._bundle.store, config=attrs.evolve(slot.config, mode=mode))

    async def load_messages(self, slot_id: str | None = None) -> list[Message]:
        """Exactly what the next request of a slot will carry, before the new user message."""
        return (await self.get_slot(slot_id)).load_messages()

    async def history(self, slot_id: str | None = None) -> list[Message]:
        """The raw, complete message history of a slot."""
        return (await self.get_slot(slot_id)).raw_messages()

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

    # -- turns ------------------------------------------------------------------

    async def submit_turn(self, user_input: str | Message) -> Message:
        """Run one turn and return the assistant's final message.

        Follows these steps: read-only check, ``on_turn_start``, load the
        context, run the model (and tools), count the cost, append the turn's
        messages and save the slot in one store write, ``on_turn_end``,
        ``post_turn_end``, advance the turn index. A provider error propagates
        and stores nothing.
        """
        user_message = self._user_message(user_input)
        self._check_writable("submit a turn")
        self._check_no_open_stream()
        async with self._turn_lock:
            await self.load()
            slot = self._slots[self._current]
            index = self._turn_index
            ctx = self._context(slot, index, user_message, is_stream=False)
            await call_each(self._pm, "on_turn_start", isolate=False, ctx=ctx)
            cycle = self._cycle(ctx, user_message)
            if self._bundle.tools is not None and len(self._bundle.tools):
                result = await cycle.submit_with_tools([], self._bundle.tools)
            else:
                result = await cycle.submit_messages([])
            await self._record_turn(slot, user_message, result, completed_turns=index + 1)
            await self._end_turn(ctx, user_message, result)
            self._turn_index = index + 1
            return result.final_message

    def submit_turn_stream(self, user_input: str | Message) -> TurnStream:
        """Run one turn, streaming the reply.

        Iterate the returned :class:`TurnStream` for events; its exhaustion
        finalizes the turn (store, ``on_turn_end``, ``post_turn_end``) exactly
        like :meth:`submit_turn`. As on that path, the turn index advances
        when the stream starts, and the hooks see the index of the streamed
        turn. A stream abandoned before its end stores nothing and takes the
        turn index back.
        """
        user_message = self._user_message(user_input)
        self._check_writable("submit a turn")
        self._check_no_open_stream()
        return TurnStream(self._stream_turn(user_message))

    async def _stream_turn(
        self, user_message: Message
    ) -> AsyncGenerator[CycleEvent | Message, None]:
        async with self._turn_lock:
            self._open_stream = True
            try:
                await self.load()
                slot = self._slots[self._current]
                index = self._turn_index
                ctx = self._context(slot, index, user_message, is_stream=True)
                await call_each(self._pm, "on_turn_start", isolate=False, ctx=ctx)
                self._turn_index = index + 1
                try:
                    cycle = self._cycle(ctx, user_message)
                    stream = cycle.stream_with_tools([], self._bundle.tools)
                    async for event in stream:
                        yield event
                    result = stream.result
                    await self._record_turn(slot, user_message, result, completed_turns=index + 1)
                except BaseException:
                    self._turn_index = index
                    raise
                ctx.turn_index = self._turn_index - 1
                await self._end_turn(ctx, user_message, result)
            finally:
                self._open_stream = False
            yield result.final_message

    # -- background work ---------------------------------------------------------

    def run_in_background(self, work: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run ``work`` as a task the session tracks; :meth:`aclose` waits for it.

        An exception the task raises is logged at ERROR on the ``agentcore``
        logger.
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

    async def aclose(self) -> None:
        """Wait until the background work of the session has finished."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

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
            return user_input
        if not isinstance(user_input, str):
            raise ConfigError(f"a turn takes a str or a user Message, got {user_input!r}")
        if not user_input.strip():
            raise ConfigError("a turn needs a non-empty user message")
        return Message.user(user_input)

    def _cycle(self, ctx: TurnContext, user_message: Message) -> LlmCycle:
        async def prepare(added: Sequence[Message]) -> list[Message]:
            ctx.messages = [user_message, *added]
            await call_each(
                self._pm,
                "before_model_call",
                isolate=True,
                propagate=(ContextWindowExceededError,),
                ctx=ctx,
            )
            return [*ctx.slot.load_messages(), *ctx.messages]

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
            self._bundle.provider,
            model=agent.model,
            max_tokens=agent.max_tokens,
            temperature=agent.temperature,
            stop=agent.stop,
            purpose="turn",
            max_tool_rounds=self._bundle.config.max_tool_rounds,
            prepare=prepare,
            on_overflow=on_overflow,
        )

    def _state(
        self, *, turn_index: int | None = None, current_slot: str | None = None
    ) -> SessionState:
        return SessionState(
            turn_index=self._turn_index if turn_index is None else turn_index,
            current_slot=self._current if current_slot is None else current_slot,
            cost=self._cost.breakdown(),
        )

    def _context(
        self, slot: ContextSlot, index: int, user_message: Message, *, is_stream: bool
    ) -> TurnContext:
        return TurnContext(
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

    async def _record_turn(
        self, slot: ContextSlot, user_message: Message, result: CycleResult, *, completed_turns: int
    ) -> None:
        """Count the turn's cost, then append its messages and save slot and state at once."""
        new_messages = [user_message, *result.new_messages]
        self._cost.add(result.usage, "turn")
        async with slot.lock:
            write = StoreWrite(
                self._session_id,
                state=self._state(turn_index=completed_turns),
                slot_configs={slot.id: config_to_json(slot.config)},
                appends={slot.id: MessageAppend(slot.message_count(), new_messages)},
            )
            await self._bundle.store.write(write)
            slot._extend(new_messages)

    async def _end_turn(self, ctx: TurnContext, user_message: Message, result: CycleResult) -> None:
        ctx.messages = [user_message, *result.new_messages]
        ctx.usage = result.usage
        ctx.response = result.response
        await call_each(self._pm, "on_turn_end", isolate=True, ctx=ctx)
        await call_each(self._pm, "post_turn_end", isolate=True, ctx=ctx)


class TurnStream:
    """The events of a streamed turn; exhausting it finalizes the turn.

    Iterate with ``async for`` to get :class:`~agentcore.llm.TextDelta`,
    :class:`~agentcore.llm.ToolCallDelta`, tool-result and
    :class:`~agentcore.llm.ResponseComplete` events, each with a ``.text``
    delta. Or ``await stream.finalize()`` to consume the rest and get the
    final assistant message. :attr:`message` is set once the turn is stored.
    """

    def __init__(self, events: AsyncGenerator[CycleEvent | Message, None]) -> None:
        self._events = events
        self.message: Message | None = None
        """The assistant's final message, once the turn has been finalized."""

    def __aiter__(self) -> AsyncIterator[CycleEvent]:
        return self

    async def __anext__(self) -> CycleEvent:
        item = await self._events.__anext__()
        if isinstance(item, Message):
            self.message = item
            await self._events.aclose()
            raise StopAsyncIteration
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
