"""What a turn leaves behind when it is cancelled, times out, races another writer or gets
broken text: always a session object that agrees with its store."""

from __future__ import annotations

import asyncio
import gc
import os
import random
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentBundle,
    AgentSession,
    ConfigError,
    ConflictError,
    LlmRequest,
    LlmResponse,
    Message,
    ResponseComplete,
    SqliteStore,
    TextBlock,
    ToolRegistry,
    ToolUseBlock,
    TurnContext,
    TurnTimeoutError,
    hookimpl,
)
from agentcore.testing import MockProvider

if TYPE_CHECKING:
    from conftest import StoreEngine

MakeSession = Callable[..., AgentSession]


async def view(session: AgentSession) -> tuple[int, dict[str, list[Message]], dict[str, Any]]:
    """What a session object holds: turn index, every slot's history, cost by purpose."""
    slots = {slot_id: await session.history(slot_id) for slot_id in await session.slot_ids()}
    return session.turn_index, slots, dict(session.cost.breakdown())


async def resumed_view(session: AgentSession) -> tuple[int, dict[str, list[Message]], Any]:
    fresh = AgentSession(session.agent, session.session_id, session.bundle)
    return await view(fresh)


def jittery(rng: random.Random, reply: str = "reply") -> Callable[[LlmRequest], Any]:
    async def respond(request: LlmRequest) -> str:
        await asyncio.sleep(rng.uniform(0, 0.004))
        return f"{reply} to {request.messages[-1].text}"

    return respond


class SlowEndHooks:
    """End hooks that take a little while, so cancellations also land after the write."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    @hookimpl
    async def on_turn_end(self, ctx: TurnContext) -> None:
        await asyncio.sleep(self.rng.uniform(0, 0.002))

    @hookimpl
    async def post_turn_end(self, ctx: TurnContext) -> None:
        await asyncio.sleep(self.rng.uniform(0, 0.002))


async def cancel_at_random(
    session: AgentSession, rng: random.Random, trials: int
) -> dict[str, int]:
    """Cancel turns at random points; count what the callers saw and what broke.

    Two trials do not depend on the machine's speed: the first is cancelled at the
    turn's first wait, before its model has replied (``first_stored`` must be 0), the
    second is given 60 s and returns (``second_stored`` must be 1). The others are
    cancelled after a random delay within one turn's duration, on either side of the
    write depending on how loaded the machine is.
    """
    counts = {
        "returned": 0,
        "cancelled": 0,
        "broken": 0,
        "lost_or_duplicated": 0,
        "stored": 0,
        "first_stored": 0,
        "second_stored": 0,
    }
    # Cancel points spread over one turn's duration as measured here: on an idle machine
    # they reach both sides of the write.
    loop = asyncio.get_running_loop()
    spans = []
    for number in range(3):
        started = loop.time()
        await session.submit_turn(f"a turn to time {number}")
        spans.append(loop.time() - started)
    span = max(0.007, min(spans[1:]))  # warm turns: the first one also loads the session
    for trial in range(trials):
        before = len(await session.history())
        turns_before = session.turn_index
        delay = rng.uniform(0, span)
        if trial < 2:
            delay = (0.0, 60.0)[trial]
        try:
            if trial % 2:
                await asyncio.wait_for(session.submit_turn(f"q{trial}"), delay)
            else:
                task = asyncio.ensure_future(session.submit_turn(f"q{trial}"))
                await asyncio.sleep(delay)
                task.cancel()
                await task
            counts["returned"] += 1
            counts["stored"] += 1
            stored = True
            expected = before + 2
        except (asyncio.CancelledError, asyncio.TimeoutError):
            # Cancelled once its write had begun, the turn is stored whole, else not at all.
            counts["cancelled"] += 1
            stored = session.turn_index == turns_before + 1
            counts["stored"] += stored
            expected = before + 2 if stored else before
            if stored and session.last_reply != (await session.history())[-1]:
                counts["broken"] += 1
        if trial < 2:
            counts[("first_stored", "second_stored")[trial]] = int(stored)
        live = await view(session)
        if live != await resumed_view(session):
            counts["broken"] += 1
        if len(live[1]["default"]) != expected:
            counts["lost_or_duplicated"] += 1
        try:
            await session.submit_turn(f"check {trial}")
        except Exception:
            counts["broken"] += 1
            session = AgentSession(session.agent, session.session_id, session.bundle)
    return counts


@pytest.mark.parametrize("seed", [1, 2])
async def test_a_cancelled_turn_never_breaks_the_session(
    make_session: MakeSession, shared_store_engine: StoreEngine, seed: int
) -> None:
    rng = random.Random(seed)
    store = shared_store_engine.open()
    session = make_session(
        MockProvider(responder=jittery(rng)), store=store, plugins=(SlowEndHooks(rng),)
    )
    counts = await cancel_at_random(session, rng, trials=30)
    print(f"\ncancellation trials (seed {seed}): {counts}")
    assert counts["broken"] == 0 and counts["lost_or_duplicated"] == 0
    # A turn cancelled before its model replied stores nothing; one that returns is
    # stored. (Where the random cancels land depends on the machine's load: on a loaded
    # machine all of them may come after the write began, so no count of them is
    # asserted.)
    assert counts["first_stored"] == 0 and counts["second_stored"] == 1
    await store.close()


async def test_a_turn_cancelled_during_its_store_write_is_kept(
    make_session: MakeSession, tmp_path: Path
) -> None:
    class SlowStore(SqliteStore):
        async def write(self, batch: Any) -> None:
            await asyncio.sleep(0.05)
            await super().write(batch)

    store = SlowStore(tmp_path / "slow.db")
    session = make_session(store=store)
    await session.load()
    # The caller gives up while the write is on its way: the write completes, then the
    # cancel reaches the caller; the stored reply is on the session.
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(session.submit_turn("kept"), 0.02)
    assert session.turn_index == 1
    assert session.last_reply is not None and session.last_reply.text == "ok"
    assert await view(session) == await resumed_view(session)
    await session.submit_turn("next")
    assert [m.text for m in await session.history()] == ["kept", "ok", "next", "ok"]
    await store.close()


# -- streams ---------------------------------------------------------------------


async def test_a_stream_left_at_its_final_event_is_stored(
    make_session: MakeSession, tmp_path: Path
) -> None:
    store = SqliteStore(tmp_path / "stream.db")
    provider = MockProvider(responder=lambda r: f"streamed answer to {r.messages[-1].text}")
    session = make_session(provider, store=store)
    for turn in range(20):
        stream = session.submit_turn_stream(f"q{turn}")
        async for event in stream:
            if isinstance(event, ResponseComplete):
                break  # the reply is shown in full; the consumer reads no further
        if turn % 2:
            await stream.aclose()
    assert session.turn_index == 20
    resumed = await resumed_view(session)
    assert resumed == await view(session)
    assert len(resumed[1]["default"]) == 40
    assert (await session.submit_turn("after")).text == "streamed answer to after"
    await store.close()


async def test_a_stream_abandoned_before_its_final_event_stores_nothing(
    make_session: MakeSession,
) -> None:
    session = make_session(MockProvider(["a long streamed reply", "next"], chunk_size=2))
    stream = session.submit_turn_stream("start")
    async for event in stream:
        assert not isinstance(event, ResponseComplete)
        break
    await stream.aclose()
    assert session.turn_index == 0 and await session.history() == []
    assert (await session.submit_turn("again")).text == "next"


# -- concurrent writers -------------------------------------------------------------


def two_writers(agent: Agent, bundle: AgentBundle) -> tuple[AgentSession, AgentSession]:
    return AgentSession(agent, "shared", bundle), AgentSession(agent, "shared", bundle)


async def test_two_session_objects_take_turns_without_a_failure_or_a_wasted_call(
    agent: Agent, shared_store_engine: StoreEngine
) -> None:
    provider = MockProvider(responder=lambda r: f"re: {r.messages[-1].text}")
    store = shared_store_engine.open()
    bundle = AgentBuilder().provider(provider).store(store).load_plugins(False).build()
    first, second = two_writers(agent, bundle)
    for turn in range(30):
        writer = first if turn % 2 == 0 else second
        reply = await writer.submit_turn(f"turn {turn}")
        assert reply.text == f"re: turn {turn}"
        # Each call saw the whole conversation, the other writer's turns included.
        assert len(provider.calls[-1].messages) == 1 + 2 * turn + 1
    assert len(provider.calls) == 30  # no call was paid for and then thrown away
    texts = [m.text for m in await AgentSession(agent, "shared", bundle).history()]
    assert texts == [t for n in range(30) for t in (f"turn {n}", f"re: turn {n}")]
    assert first.turn_index == 30 - 1 and second.turn_index == 30
    await store.close()


async def test_a_write_conflict_appends_the_turn_after_the_other_writers(
    agent: Agent,
) -> None:
    gate = asyncio.Event()

    async def respond(request: LlmRequest) -> str:
        text = request.messages[-1].text
        if text == "slow":
            await gate.wait()
        return f"re: {text}"

    # Without the session lease, under which the second writer would wait for the first.
    builder = AgentBuilder().provider(MockProvider(responder=respond)).load_plugins(False)
    bundle = builder.session_lease(False).build()
    first, second = two_writers(agent, bundle)
    await first.submit_turn("hello")
    slow = asyncio.ensure_future(first.submit_turn("slow"))
    await asyncio.sleep(0.01)
    await second.submit_turn("fast")  # lands while the first writer waits for its model
    gate.set()
    assert (await slow).text == "re: slow"
    texts = [m.text for m in await AgentSession(agent, "shared", bundle).history()]
    assert texts == ["hello", "re: hello", "fast", "re: fast", "slow", "re: slow"]
    assert first.turn_index == 3
    assert await view(first) == await resumed_view(first)


async def test_a_stale_slot_config_write_is_refused_with_a_conflict(agent: Agent) -> None:
    from agentcore import FocusedConfig

    bundle = AgentBuilder().provider(MockProvider(responder=lambda r: "ok")).build()
    first, second = two_writers(agent, bundle)
    await first.submit_turn("hi")
    slot = await second.get_slot()
    version = slot.version
    await first.set_mode(FocusedConfig(max_recent_messages=4))
    with pytest.raises(ConflictError, match="compute the change again"):
        await second.write_slot_config(
            "default", slot.config, expected_version=version, data={"summary": "old"}
        )
    assert await second.get_session_data("summary") is None
    # The refused writer has reloaded: it now sees the other writer's mode.
    assert (await second.get_slot()).config.focused == FocusedConfig(max_recent_messages=4)


_WRITER = textwrap.dedent(
    """
    import asyncio, os, random, sys
    from agentcore import Agent, AgentBuilder, AgentSession, ConflictError, SqliteStore
    from agentcore.testing import MockProvider

    def open_store(location):
        if location.startswith("postgresql://") or "=" in location:
            from agentcore.stores import PostgresStore

            pooled = os.environ.get("AGENTCORE_TEST_POSTGRES_POOLER", "") not in ("", "0")
            return PostgresStore(location, prepare_threshold=None if pooled else 5)
        return SqliteStore(location)

    async def main(path, name, turns):
        rng = random.Random(name)

        async def respond(request):
            await asyncio.sleep(rng.uniform(0, 0.01))
            return f"re: {request.messages[-1].text}"

        store = open_store(path)
        bundle = (
            AgentBuilder().provider(MockProvider(responder=respond)).store(store)
            .load_plugins(False).build()
        )
        session = AgentSession(Agent("a"), "shared", bundle)
        given_up = 0
        for turn in range(turns):
            while True:
                try:
                    await session.submit_turn(f"{name} {turn}")
                    break
                except ConflictError:
                    # The session gave up after its write attempts; nothing was stored.
                    given_up += 1
        await store.close()
        print(given_up)

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)


async def test_two_processes_writing_one_session(
    agent: Agent, shared_store_engine: StoreEngine
) -> None:
    path = shared_store_engine.location
    async with shared_store_engine.open() as schema:  # type: ignore[attr-defined]
        await schema.list_sessions()  # create the schema once, before both start
    turns = 15
    env = {**os.environ, "AGENTCORE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), name, str(turns)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name in ("A", "B")
    ]
    given_up = 0
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
        given_up += int(out)
    if shared_store_engine.name == "sqlite":
        # A local file answers fast enough that a turn never runs out of write attempts. A
        # server's round trips give the other writer, racing in a tight loop, time to win
        # several times in a row; that turn then raises ConflictError, stored nothing, and
        # went through when submitted again (checked below).
        assert given_up == 0
    store = shared_store_engine.open()
    bundle = AgentBuilder().provider(MockProvider()).store(store).load_plugins(False).build()
    session = AgentSession(agent, "shared", bundle)
    history = [m.text for m in await session.history()]
    pairs = list(zip(history[::2], history[1::2], strict=True))
    # Every turn is its question followed by its own answer: nothing interleaved.
    assert all(answer == f"re: {question}" for question, answer in pairs)
    questions = [question for question, _ in pairs]
    assert sorted(questions) == sorted(f"{n} {t}" for n in "AB" for t in range(turns))
    for name in "AB":  # each writer's turns in its own order
        mine = [q for q in questions if q.startswith(name)]
        assert mine == [f"{name} {t}" for t in range(turns)]
    assert session.turn_index == 2 * turns
    await store.close()


# -- deadlines --------------------------------------------------------------------


async def _forever(*args: Any) -> str:
    await asyncio.sleep(3600)
    return "never"


def _deadline_session(
    agent: Agent, provider: Any, *, seconds: float = 0.05, **parts: Any
) -> AgentSession:
    builder = AgentBuilder().provider(provider).load_plugins(False).turn_timeout(seconds)
    if "tools" in parts:
        builder.tool_registry(parts["tools"])
    for plugin in parts.get("plugins", ()):
        builder.plugin(plugin)
    return AgentSession(agent, "deadline", builder.build())


async def test_turn_timeout_covers_a_slow_model(agent: Agent) -> None:
    calls = 0

    async def respond(request: LlmRequest) -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(3600)
        return "fast"

    session = _deadline_session(agent, MockProvider(responder=respond))
    with pytest.raises(TurnTimeoutError, match=r"turn_timeout of 0\.05 s") as info:
        await session.submit_turn("hello")
    assert isinstance(info.value, TimeoutError)
    assert session.turn_index == 0 and await session.history() == []
    assert (await session.submit_turn("again")).text == "fast"


async def test_turn_timeout_covers_tools_and_hooks(agent: Agent) -> None:
    registry = ToolRegistry()

    @registry.tool
    async def wait() -> str:
        """Wait a long time."""
        return await _forever()

    provider = MockProvider(
        [
            LlmResponse(
                Message.assistant("", [ToolUseBlock("c1", "wait", {})]), stop_reason="tool_use"
            )
        ]
    )
    session = _deadline_session(agent, provider, tools=registry)
    with pytest.raises(TurnTimeoutError):
        await session.submit_turn("use the tool")
    assert await session.history() == []

    class Stuck:
        @hookimpl
        async def on_turn_start(self, ctx: TurnContext) -> None:
            await _forever()

    hooked = _deadline_session(agent, MockProvider(["x"]), plugins=(Stuck(),))
    with pytest.raises(TurnTimeoutError):
        await hooked.submit_turn("hi")
    assert await hooked.history() == []


async def test_turn_timeout_covers_a_streamed_turn(agent: Agent) -> None:
    async def drip(request: LlmRequest) -> Any:
        from agentcore import TextDelta

        for _ in range(1000):
            yield TextDelta(".")
            await asyncio.sleep(0.01)

    provider = MockProvider(["unused"])
    provider.stream = drip  # type: ignore[method-assign]
    # 1,000 events 10 ms apart take 10 s or more: a 2 s deadline ends the stream midway,
    # and the first event comes well within it even on a loaded machine.
    session = _deadline_session(agent, provider, seconds=2)
    seen = 0
    with pytest.raises(TurnTimeoutError):
        async for _ in session.submit_turn_stream("drip"):
            seen += 1
    assert 0 < seen < 1000
    assert await session.history() == []


async def test_a_deadline_that_passes_while_the_caller_holds_an_event_ends_the_turn(
    agent: Agent,
) -> None:
    async def drip(request: LlmRequest) -> Any:
        from agentcore import TextDelta

        for _ in range(1000):
            yield TextDelta(".")
            await asyncio.sleep(0.01)

    provider = MockProvider(["unused"])
    provider.stream = drip  # type: ignore[method-assign]
    session = _deadline_session(agent, provider, seconds=2)
    seen = 0
    with pytest.raises(TurnTimeoutError):
        async for _ in session.submit_turn_stream("drip"):
            seen += 1
            if seen == 1:
                await asyncio.sleep(3)  # past the 2 s deadline, outside the turn's awaits
    assert 1 <= seen <= 2
    assert await session.history() == []


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), float("inf"), True, "5"])
def test_turn_timeout_is_validated(seconds: Any) -> None:
    with pytest.raises(ConfigError, match="turn_timeout"):
        AgentBuilder().turn_timeout(seconds)


# -- text ----------------------------------------------------------------------------


async def test_invalid_user_text_is_refused_before_anything_is_sent(
    make_session: MakeSession,
) -> None:
    started: list[int] = []

    class Watch:
        @hookimpl
        def on_turn_start(self, ctx: TurnContext) -> None:
            started.append(ctx.turn_index)

    provider = MockProvider(["ok"])
    session = make_session(provider, plugins=(Watch(),))
    with pytest.raises(ConfigError, match=r"not valid Unicode: content\[0\].text .*'\\ud800'"):
        await session.submit_turn("broken \ud800 text")
    with pytest.raises(ConfigError, match="not valid Unicode"):
        await session.submit_turn(Message.user([TextBlock("fine"), TextBlock("bad \udfff")]))
    assert provider.calls == [] and started == []
    assert (await session.submit_turn("fine")).text == "ok"


async def test_broken_text_from_a_model_is_made_valid_and_stored(
    make_session: MakeSession, tmp_path: Path
) -> None:
    store = SqliteStore(tmp_path / "text.db")
    split_pair = "smile \ud83d\ude00 please"  # an emoji that arrived as two surrogates
    lone = "half \ud83d"
    registry_reply = LlmResponse(
        Message.assistant(lone, [ToolUseBlock("c\udc00", "t", {"k\ud800": "v"})])
    )
    provider = MockProvider([split_pair, registry_reply])
    session = make_session(provider, store=store)
    reply = await session.submit_turn("first")
    assert reply.text == "smile \U0001f600 please"
    session2 = make_session(MockProvider([registry_reply]), store=store, session_id="s2")
    second = await session2.submit_turn("second")
    assert second.text == "half \ufffd"
    assert second.tool_calls[0].id == "c\ufffd"
    assert second.tool_calls[0].arguments == {"k\ufffd": "v"}
    assert await view(session2) == await resumed_view(session2)
    assert (await resumed_view(session))[1]["default"][1].text == "smile \U0001f600 please"
    await store.close()


async def test_streamed_text_split_inside_a_surrogate_pair_is_joined(
    make_session: MakeSession,
) -> None:
    provider = MockProvider(["ab\ud83d\ude00cd"], chunk_size=3)  # splits between the halves
    session = make_session(provider)
    message = await session.submit_turn_stream("go").finalize()
    assert message.text == "ab\U0001f600cd"
    assert (await session.history())[1].text == "ab\U0001f600cd"


# -- background work and closing ---------------------------------------------------


async def test_aclose_can_cancel_pending_background_work(make_session: MakeSession) -> None:
    finished: list[str] = []

    async def long_work() -> None:
        await asyncio.sleep(3600)
        finished.append("done")

    session = make_session()
    task = session.run_in_background(long_work())
    await asyncio.sleep(0)
    await session.aclose(cancel_pending=True)
    assert task.cancelled() and finished == []


async def test_dropping_a_session_with_pending_work_warns(make_session: MakeSession) -> None:
    async def orphan() -> None:
        # Waits on a future nothing else holds, as work does once its loop is gone.
        await asyncio.get_running_loop().create_future()

    session = make_session()
    session.run_in_background(orphan())
    await asyncio.sleep(0)
    with pytest.warns(ResourceWarning, match=r"pending background task.*aclose\(\)"):
        del session
        gc.collect()


async def test_a_session_data_write_cancelled_midway_is_kept_or_absent(
    make_session: MakeSession, tmp_path: Path
) -> None:
    store = SqliteStore(tmp_path / "data.db")
    session = make_session(store=store)
    for attempt in range(20):
        task = asyncio.ensure_future(session.set_session_data(f"k{attempt}", attempt))
        await asyncio.sleep(random.Random(attempt).uniform(0, 0.002))
        task.cancel()
        try:
            await task
            assert await session.get_session_data(f"k{attempt}") == attempt
        except asyncio.CancelledError:
            # A write that had begun completed before the cancel propagated.
            assert await session.get_session_data(f"k{attempt}") in (attempt, None)
    await store.close()
