"""AgentSession.exclusive: acting on a session from outside a turn, as a plugin does."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest

from agentcore import (
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    Message,
    ModelCallInfo,
    ReadonlySessionError,
    SessionError,
    TurnContext,
    Usage,
    hookimpl,
)
from agentcore.testing import MockProvider

MakeSession = Any


async def test_the_block_gets_a_context_like_a_hook_and_its_writes_are_stored(
    make_session: MakeSession,
) -> None:
    purposes: list[str] = []

    class Meter:
        @hookimpl
        def after_model_call(self, ctx: TurnContext, call: ModelCallInfo) -> None:
            purposes.append(call.purpose)

    store = InMemoryStore()
    session = make_session(store=store, plugins=(Meter(),), mode=FocusedConfig())
    await session.submit_turn("hello")
    async with session.exclusive("rewrite the context") as ctx:
        assert ctx.messages == [] and ctx.turn_index == session.turn_index == 1
        assert ctx.slot.id == session.current_slot_id and ctx.session is session
        reply = await ctx.provider.complete(
            LlmRequest([*ctx.slot.load_messages(), Message.user("shorten")], purpose="index")
        )
        focused = attrs.evolve(ctx.slot.config.focused, summary_override=reply.text)
        await ctx.session.write_slot_config(
            ctx.slot.id,
            attrs.evolve(ctx.slot.config, mode=focused),
            usage=Usage(input_tokens=7, output_tokens=2),
            purpose="index",
        )
    assert purposes == ["turn", "index"]
    assert session.cost.total("index").input_tokens == 7
    resumed = AgentSession(session.agent, session.session_id, session.bundle)
    slot = await resumed.get_slot()
    assert slot.config.focused is not None and slot.config.focused.summary_override == "ok"
    assert resumed.cost.total("index").output_tokens == 2


async def test_a_turn_waits_until_the_block_is_left(make_session: MakeSession) -> None:
    session = make_session()
    async with session.exclusive() as ctx:
        turn = asyncio.create_task(session.submit_turn("hello"))
        for _ in range(20):
            await asyncio.sleep(0)
        assert not turn.done() and session.turn_index == ctx.turn_index == 0
    reply = await asyncio.wait_for(turn, timeout=30)
    assert reply.text == "ok" and session.turn_index == 1


async def test_an_error_in_the_block_reaches_the_caller_and_frees_the_session(
    make_session: MakeSession,
) -> None:
    session = make_session()
    with pytest.raises(RuntimeError, match="plugin failed"):
        async with session.exclusive():
            raise RuntimeError("plugin failed")
    assert (await asyncio.wait_for(session.submit_turn("next"), timeout=30)).text == "ok"


async def test_a_readonly_session_or_an_open_stream_refuses_the_block(
    make_session: MakeSession,
) -> None:
    readonly = make_session(readonly=True)
    with pytest.raises(ReadonlySessionError, match="read-only: cannot rewrite the context"):
        async with readonly.exclusive("rewrite the context"):
            pass
    session = make_session(MockProvider(["a long streamed reply"]))
    stream = session.submit_turn_stream("hello")
    await stream.__anext__()
    with pytest.raises(SessionError, match="streamed turn in progress"):
        async with session.exclusive():
            pass
    await stream.aclose()
    with pytest.raises(ValueError, match="action must be a non-empty str"):
        async with session.exclusive(" "):
            pass


async def test_a_cancelled_block_frees_the_session_and_keeps_what_it_wrote(
    make_session: MakeSession,
) -> None:
    session = make_session(mode=FocusedConfig())
    await session.submit_turn("hello")
    entered = asyncio.Event()

    async def rewrite_then_wait() -> None:
        async with session.exclusive() as ctx:
            focused = attrs.evolve(ctx.slot.config.focused, summary_override="kept")
            await session.write_slot_config(
                ctx.slot.id, attrs.evolve(ctx.slot.config, mode=focused)
            )
            entered.set()
            await asyncio.Event().wait()  # until cancelled

    task = asyncio.create_task(rewrite_then_wait())
    await asyncio.wait_for(entered.wait(), timeout=30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await asyncio.wait_for(session.submit_turn("next"), timeout=30)).text == "ok"
    resumed = AgentSession(session.agent, session.session_id, session.bundle)
    focused = (await resumed.get_slot()).config.focused
    assert focused is not None and focused.summary_override == "kept"
