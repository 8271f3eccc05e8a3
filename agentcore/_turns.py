"""The turn protocol, written once: hooks, the model cycle, the store write, end hooks.

:meth:`TurnRunner.events` runs one turn as an async generator of events. A
streamed turn (:class:`~agentcore._turn_stream.TurnStream`) hands them to its
consumer; a plain turn (:meth:`~agentcore.AgentSession.submit_turn`) drains
them and returns the final message, as httpx's ``send`` is its streaming send
plus ``read()``. What a turn accepts is checked in :mod:`agentcore._turn_checks`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from agentcore._cancel import Deadline, DeadlineTimer
from agentcore._lease import SessionLease
from agentcore._store_sync import StoreSync
from agentcore._turn_checks import check_reply, new_turn_id
from agentcore._turn_stream import FinalEvent
from agentcore.budget import OVERFLOW_KEY, turn_counter
from agentcore.call_hooks import HookedProvider, tool_call_hooks
from agentcore.context import TurnContext
from agentcore.cycle import CycleEvent, CycleResult, LlmCycle
from agentcore.errors import (
    ConfigError,
    ContextWindowExceededError,
    StoreTimeoutError,
    TurnTimeoutError,
)
from agentcore.hook_calls import CoreHooks
from agentcore.llm import LlmResponse, ResponseComplete
from agentcore.messages import Message, make_valid
from agentcore.slots import ContextSlot
from agentcore.tools import Tool, ToolRegistry

if TYPE_CHECKING:
    from agentcore.agent import Agent
    from agentcore.bundle import AgentBundle
    from agentcore.session_handle import SessionHandle

logger = logging.getLogger("agentcore")


def final_message(added: Sequence[Message], result: CycleResult) -> Message:
    """The turn's final assistant message, as stored."""
    for message in reversed(added):
        if message.role == "assistant":
            return message
    return result.final_message


class TurnRunner:
    """Runs the turns of one session, one at a time.

    :attr:`lock` is held for the whole of a turn (and by the session's
    other operations that must not overlap one); :attr:`open_stream` is
    True while a streamed turn holds it.
    """

    def __init__(self, session: SessionHandle, sync: StoreSync) -> None:
        self._session = session
        self._sync = sync
        self.lock = asyncio.Lock()
        self._core_hooks: CoreHooks | None = None
        self._timer = DeadlineTimer()  # one loop timer for the deadlines of every turn
        self._settings: tuple[Agent, AgentBundle, LlmCycle] | None = None
        self.open_stream = False
        bundle = session.bundle
        self.lease = (
            SessionLease(bundle.store, session.session_id) if bundle.config.session_lease else None
        )
        """The session lease a turn takes before its model call, with ``session_lease`` on."""

    @property
    def _pm(self) -> Any:
        return self._session.bundle.plugin_manager

    @property
    def _hooks(self) -> CoreHooks:
        manager = self._session.bundle.plugin_manager
        hooks = self._core_hooks
        if hooks is None or hooks.plugin_manager is not manager:
            hooks = self._core_hooks = CoreHooks(manager)
        return hooks

    def context(self, slot: ContextSlot, user_message: Message, *, is_stream: bool) -> TurnContext:
        """A new turn context for ``slot`` at the session's turn index."""
        session, bundle = self._session, self._session.bundle
        ctx = TurnContext(
            session=session,
            session_id=session.session_id,
            turn_index=self._sync.turn_index,
            slot=slot,
            messages=[user_message],
            cost=self._sync.cost,
            provider=bundle.provider,
            store=bundle.store,
            memory=session.memory,
            config=bundle.config,
            is_stream=is_stream,
            tools=bundle.tools,
        )
        ctx.provider = HookedProvider(bundle.provider, self._pm, ctx)
        return ctx

    def timeout_error(self) -> TurnTimeoutError:
        """The error of a turn that did not finish within ``turn_timeout``, nothing stored."""
        return TurnTimeoutError(
            f"turn of session {self._session.session_id!r} did not finish within the "
            f"turn_timeout of {self._session.bundle.config.turn_timeout} s; nothing of it "
            "was stored"
        )

    def deadline(self) -> Deadline:
        """The deadline of a turn starting now, from the bundle's ``turn_timeout``."""
        return Deadline(
            self._session.bundle.config.turn_timeout, self.timeout_error, timer=self._timer
        )

    async def events(
        self, user_message: Message, *, pin: bool, stream: bool, turn_id: str | None = None
    ) -> AsyncGenerator[CycleEvent | FinalEvent, None]:
        """Run one turn, yielding its events; the last one, a :class:`FinalEvent`, once stored.

        ``turn_id`` is the turn's idempotency key (a new one when None): a
        turn already stored under it is not run again, its stored reply is
        the final event, and no model is called.

        With ``stream`` the model's reply is streamed and every event is
        yielded; without it, the model is called without streaming and only
        the final event is yielded. The deadline never runs while the
        consumer holds an event. The turn lock is held until the final event
        is handed over (or the generator is closed).
        """
        await self.lock.acquire()
        self.open_stream = stream
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self.open_stream = False
                self.lock.release()

        sync, lease = self._sync, self.lease
        hooks = self._hooks  # the session's plugin manager is its bundle's, fixed for the turn
        try:
            deadline = self.deadline()
            async with deadline.guard():
                await sync.load()
                if lease is not None:
                    # Waits while another worker runs a turn of this session, then reads
                    # what it stored: no model call is paid on a stale history.
                    await lease.acquire()
                await sync.catch_up()
                stored_reply = None
                if turn_id is not None:
                    already = await sync.store.find_turn(self._session.session_id, turn_id)
                    if already is not None:
                        stored_reply = await sync.stored_reply(already)
                slot = sync.slots[sync.current]
                if pin:
                    await self._check_pin_fits(slot, user_message)
                ctx = self.context(slot, user_message, is_stream=stream)
            if stored_reply is not None:  # this turn id is stored: no model call
                if lease is not None:
                    await lease.release()
                release()
                yield FinalEvent(ResponseComplete(LlmResponse(stored_reply)), stored_reply)
                return
            final: tuple[ResponseComplete, list[Message], CycleResult] | None = None
            duplicate: Message | None = None
            try:
                done: tuple[ResponseComplete, list[Message], CycleResult] | None = None
                # The turn's reply once made: a deadline that passes after it was stored
                # is consumed (the turn goes on); one that passes before stores nothing.
                reply: Message | None = None
                stored_now = False
                try:
                    streamed: tuple[ResponseComplete, CycleResult] | None = None
                    if stream:
                        async with deadline.guard():
                            await hooks.on_turn_start(ctx=ctx)
                            tools = await self._turn_tools(ctx, hooks)
                        cycle = self._cycle(ctx, user_message, tools, hooks)
                        streamed_items = self._streamed(cycle, deadline, tools)
                        async with contextlib.aclosing(streamed_items) as items:
                            async for item in items:
                                if isinstance(item, tuple):
                                    streamed = item
                                else:
                                    yield item
                    if not stream or streamed is not None:
                        # No event is handed over from here until the turn is stored: one
                        # guard covers a plain turn's model call and the store write.
                        async with deadline.guard():
                            if streamed is not None:
                                event, result = streamed
                                check_reply(result)
                                added = await self._stored_form(user_message, result)
                                done = (event, added, result)
                            else:
                                done = await self._plain(ctx, user_message, hooks)
                            reply = final_message(done[1], done[2])
                            stored_now = await self._store(
                                slot,
                                user_message,
                                done,
                                reply,
                                pin=pin,
                                turn_id=turn_id,
                                deadline=deadline,
                            )
                except StoreTimeoutError as exc:
                    if reply is None:
                        raise
                    raise self.timeout_error() from exc  # nothing was stored
                except TurnTimeoutError:
                    if reply is None or sync.last_reply is not reply:
                        raise  # nothing was stored
                    # Stored: the deadline's own cancel is consumed, the turn goes on.
                    stored_now = True
                if done is not None:
                    assert reply is not None
                    event, added, result = done
                    if lease is not None:
                        await lease.release()  # stored: the next worker may go on
                    if stored_now:
                        final = (event, added, result)
                    else:  # another writer stored this turn id meanwhile: hand over its reply
                        duplicate = sync.last_reply or reply
            except BaseException as exc:
                await hooks.on_turn_error(ctx=ctx, error=exc)
                raise
            if duplicate is not None:
                release()
                yield FinalEvent(ResponseComplete(LlmResponse(duplicate)), duplicate)
                return
            if final is not None:
                event, added, result = final
                assert reply is not None  # set before the turn was stored
                # Past its deadline, a stored turn skips its remaining end hooks and is
                # handed over; a cancel of the caller propagates. No end hook, no guard.
                if hooks.has_end_hooks():
                    async with deadline.guard(consume=True):
                        await self._end_turn(ctx, user_message, added, result, hooks)
                release()
                yield FinalEvent(event, reply)
        finally:
            if lease is not None:
                await lease.release()
            release()

    async def _store(
        self,
        slot: ContextSlot,
        user_message: Message,
        done: tuple[ResponseComplete, list[Message], CycleResult],
        reply: Message,
        *,
        pin: bool,
        turn_id: str | None,
        deadline: Deadline,
    ) -> bool:
        """Store the turn ``done`` (see :meth:`StoreSync.commit_turn`), in the caller's guard."""
        _, added, result = done
        return await self._sync.commit_turn(
            slot,
            [user_message, *added],
            result.usage,
            reply,
            pin=pin,
            turn_id=turn_id or new_turn_id(),
            timeout=deadline.remaining(),
        )

    async def _plain(
        self, ctx: TurnContext, user_message: Message, hooks: CoreHooks
    ) -> tuple[ResponseComplete, list[Message], CycleResult]:
        """A plain turn up to its store write: ``on_turn_start``, the model, the counting."""
        await hooks.on_turn_start(ctx=ctx)
        tools = await self._turn_tools(ctx, hooks)
        result = await self._complete(self._cycle(ctx, user_message, tools, hooks), tools)
        check_reply(result)
        added = await self._stored_form(user_message, result)
        return ResponseComplete(result.response), added, result

    async def _stored_form(self, user_message: Message, result: CycleResult) -> list[Message]:
        """The cycle's new messages as stored (valid Unicode), each counted for storage."""
        added = [make_valid(message) for message in result.new_messages]
        await self._count_for_storage([user_message, *added])
        return added

    async def _turn_tools(self, ctx: TurnContext, hooks: CoreHooks) -> ToolRegistry | None:
        """The bundle's tools, with those the plugins offer for this turn (``offer_tools``)."""
        tools = self._session.bundle.tools
        offered = await hooks.offer_tools(ctx=ctx)
        if not offered:
            return tools
        base = tools if tools is not None else ToolRegistry()
        names = {tool.name for tool in base.tools}
        kept: list[Tool] = []
        for tool in offered:
            if not isinstance(tool, Tool) or tool.name in names:
                what = f"a tool named {tool.name!r}" if isinstance(tool, Tool) else repr(tool)
                logger.error("offer_tools: %s is not a new Tool; left out of the turn", what)
                continue
            names.add(tool.name)
            kept.append(tool)
        ctx.tools = base.with_tools(kept)
        return ctx.tools

    async def _complete(self, cycle: LlmCycle, tools: ToolRegistry | None) -> CycleResult:
        if tools is not None and len(tools):
            return await cycle.submit_with_tools([], tools)
        return await cycle.submit_messages([])

    async def _streamed(
        self, cycle: LlmCycle, deadline: Deadline, tools: ToolRegistry | None
    ) -> AsyncGenerator[CycleEvent | tuple[ResponseComplete, CycleResult], None]:
        """The events of a streamed cycle, then ``(final event, result)``."""
        stream = cycle.stream_with_tools([], tools)
        try:
            while True:
                async with deadline.guard():
                    try:
                        event = await stream.__anext__()
                    except StopAsyncIteration:
                        return
                if isinstance(event, ResponseComplete):
                    yield event, stream.result
                    return
                yield event
        finally:
            await stream.aclose()

    def _cycle(
        self,
        ctx: TurnContext,
        user_message: Message,
        tools: ToolRegistry | None,
        hooks: CoreHooks,
    ) -> LlmCycle:
        async def prepare(added: Sequence[Message]) -> tuple[Message, ...]:
            ctx.messages = [user_message, *added]
            ctx.context = None
            ctx.request_body.clear()
            ctx.cache_newest = True
            await hooks.before_model_call(ctx=ctx)
            if ctx.context is not None:
                return (*ctx.context, *ctx.messages)
            return ctx.slot.load_messages_with(ctx.messages)  # one copy: the request's

        async def on_overflow(
            error: ContextWindowExceededError, added: Sequence[Message]
        ) -> tuple[Message, ...]:
            ctx.stash[OVERFLOW_KEY] = error
            try:
                return await prepare(added)
            finally:
                if OVERFLOW_KEY in ctx.stash:
                    del ctx.stash[OVERFLOW_KEY]

        return self._cycle_settings().with_calls(
            ctx.provider,
            prepare=prepare,
            on_overflow=on_overflow,
            # Tool hooks are awaited around tool calls: a bundle without tools makes none.
            tool_hooks=tool_call_hooks(self._pm, ctx) if tools is not None and len(tools) else None,
            request_body=lambda: ctx.request_body,
            cache_newest=lambda: ctx.cache_newest,
        )

    def _cycle_settings(self) -> LlmCycle:
        """A cycle with the settings of this session's turns, checked once per agent and bundle.

        Both are frozen: the cycle is made again only when the session has another.
        """
        agent, bundle = self._session.agent, self._session.bundle
        kept = self._settings
        if kept is not None and kept[0] is agent and kept[1] is bundle:
            return kept[2]
        cycle = LlmCycle(
            bundle.provider,
            model=agent.model,
            max_tokens=agent.max_tokens,
            temperature=agent.temperature,
            stop=agent.stop,
            purpose="turn",
            max_tool_rounds=bundle.config.max_tool_rounds,
            cache_key=self._session.session_id,
            tool_choice=agent.tool_choice or bundle.config.tool_choice,
            output=agent.output or bundle.config.output,
        )
        self._settings = (agent, bundle, cycle)
        return cycle

    async def _check_pin_fits(self, slot: ContextSlot, user_message: Message) -> None:
        """Refuse, before any model call, a pin of ``user_message`` that cannot be stored."""
        focused = slot.config.focused
        if focused is None:
            raise ConfigError(
                f"slot {slot.id!r} is in Full mode, where every message is sent: "
                "pins apply to a Focused slot"
            )
        index = len(slot)
        probe = slot.with_appended([user_message])
        config = attrs.evolve(
            slot.config, mode=attrs.evolve(focused, pinned=(*focused.pinned, index))
        )
        await self._hooks.check_slot_config(session=self._session, slot=probe, config=config)

    async def _count_for_storage(self, messages: Sequence[Message]) -> None:
        """Count ``messages`` with the turn counter, so their counts are stored with them.

        Counts are made for a session whose turns a budget counts: the agent has
        a ``token_counter`` of its own, or a plugin's budget counted one of the
        turn's messages already (the user's, before the model call). A turn
        nobody counts (no such plugin) stores none and pays no tokenizer; a
        budget that comes later counts what it reads once, then. A message
        already counted costs nothing; a long one is counted off the event loop.
        """
        agent = self._session.agent
        counter = turn_counter(agent, self._session.bundle.provider)
        if agent.token_counter is None and not any(
            counter.counted(message) for message in messages
        ):
            return
        for message in messages:
            await counter.count_message_async(message)

    async def _end_turn(
        self,
        ctx: TurnContext,
        user_message: Message,
        added: list[Message],
        result: CycleResult,
        hooks: CoreHooks,
    ) -> None:
        """Run the end hooks of a stored turn; a cancel skips the rest of them and propagates."""
        ctx.messages = [user_message, *added]
        ctx.usage = result.usage
        ctx.response = result.response
        try:
            await hooks.on_turn_end(ctx=ctx)
            await hooks.post_turn_end(ctx=ctx)
        except asyncio.CancelledError:
            logger.warning(
                "session %r turn %d was cancelled in its end hooks, after it was stored: "
                "the remaining end hooks were skipped",
                self._session.session_id,
                ctx.turn_index,
            )
            raise
