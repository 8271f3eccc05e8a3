from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentBundle,
    AgentSession,
    ConfigError,
    CorruptDataError,
    FocusedConfig,
    InMemoryStore,
    LlmError,
    Message,
    ReadonlySessionError,
    SessionError,
    SqliteStore,
    StoreError,
    TextDelta,
    ToolRegistry,
    ToolUseBlock,
    TurnContext,
    UnknownSlotError,
    Usage,
    hookimpl,
)
from agentcore.llm import LlmResponse
from agentcore.testing import MockProvider

MakeSession = Callable[..., AgentSession]


async def test_submit_turn_returns_the_reply_and_sends_the_system_prompt(
    make_session: MakeSession,
) -> None:
    provider = MockProvider(["Hello, Ada."])
    session = make_session(provider)
    reply = await session.submit_turn("Hi, I am Ada.")
    assert reply.text == "Hello, Ada."
    (request,) = provider.calls
    assert [m.role for m in request.messages] == ["system", "user"]
    assert request.messages[0].text == "You are helpful."
    assert request.purpose == "turn"
    assert session.turn_index == 1
    assert [m.text for m in await session.history()] == ["Hi, I am Ada.", "Hello, Ada."]


async def test_seed_scenario_2_fifty_turns_make_fifty_calls(
    make_session: MakeSession, tmp_path: Path
) -> None:
    provider = MockProvider(responder=lambda r: f"echo {r.messages[-1].text}")
    store = SqliteStore(tmp_path / "s.db")
    session = make_session(provider, store=store)
    for i in range(50):
        await session.submit_turn(f"msg {i}")
    assert len(provider.calls) == 50
    assert all(call.purpose == "turn" for call in provider.calls)
    history = await store.load_messages("s1", "default")
    assert [m.text for m in history[::2]] == [f"msg {i}" for i in range(50)]
    assert [m.text for m in history[1::2]] == [f"echo msg {i}" for i in range(50)]
    assert await session.get_session_data("conversation_summary") is None
    await store.close()


async def test_a_new_session_with_the_same_id_resumes(agent: Agent, tmp_path: Path) -> None:
    path = tmp_path / "resume.db"
    store = SqliteStore(path)
    bundle = (
        AgentBuilder()
        .provider(MockProvider(usage=Usage(7, 3), responder=lambda r: "ok"))
        .store(store)
        .load_plugins(False)
        .build()
    )
    first = AgentSession(agent, "abc", bundle, FocusedConfig(max_recent_messages=4))
    await first.submit_turn("one")
    await first.create_slot("side", switch=True)
    await first.submit_turn("two")
    await first.set_session_data("k", {"v": [1, 2]})
    await store.close()

    store = SqliteStore(path)
    bundle = (
        AgentBuilder().provider(MockProvider(["three"])).store(store).load_plugins(False).build()
    )
    resumed = AgentSession(agent, "abc", bundle)  # stored modes win over the default
    assert await resumed.slot_ids() == ["default", "side"]
    assert resumed.current_slot_id == "side"
    assert resumed.turn_index == 2
    assert resumed.cost.total() == Usage(14, 6)
    assert (await resumed.get_slot("default")).config.focused == FocusedConfig(
        max_recent_messages=4
    )
    assert [m.text for m in await resumed.history("default")] == ["one", "ok"]
    assert await resumed.get_session_data("k") == {"v": [1, 2]}
    await resumed.submit_turn("after resume")
    assert [m.text for m in await resumed.history()] == ["two", "ok", "after resume", "three"]
    await store.close()


async def test_provider_failure_stores_nothing_and_the_session_goes_on(
    make_session: MakeSession,
) -> None:
    provider = MockProvider([LlmError("boom"), "fine"])
    session = make_session(provider)
    with pytest.raises(LlmError, match="boom"):
        await session.submit_turn("first try")
    assert session.turn_index == 0
    assert await session.history() == []
    assert (await session.submit_turn("second try")).text == "fine"
    assert [m.text for m in await session.history()] == ["second try", "fine"]


class _FailingStore(InMemoryStore):
    fail = False

    async def write(self, batch: Any) -> None:
        if self.fail:
            raise StoreError("disk full")
        await super().write(batch)


async def test_a_failed_store_write_leaves_memory_equal_to_the_store(
    make_session: MakeSession,
) -> None:
    store = _FailingStore()
    session = make_session(store=store)
    await session.submit_turn("kept")
    store.fail = True
    with pytest.raises(StoreError, match="disk full"):
        await session.submit_turn("lost")
    assert session.turn_index == 1
    assert [m.text for m in await session.history()] == ["kept", "ok"]
    assert len(await store.load_messages("s1", "default")) == 2


async def test_readonly_session_refuses_turns_and_writes(make_session: MakeSession) -> None:
    session = make_session(readonly=True)
    with pytest.raises(ReadonlySessionError, match="read-only"):
        await session.submit_turn("hi")
    with pytest.raises(ReadonlySessionError):
        session.submit_turn_stream("hi")
    with pytest.raises(ReadonlySessionError):
        await session.set_session_data("k", 1)
    assert await session.get_session_data("k") is None


async def test_bad_input_gets_clear_errors(make_session: MakeSession, agent: Agent) -> None:
    bundle = AgentBuilder().provider(MockProvider()).load_plugins(False).build()
    with pytest.raises(ConfigError, match="session_id"):
        AgentSession(agent, "", bundle)
    with pytest.raises(ConfigError, match="mode"):
        AgentSession(agent, "x", bundle, mode="focused")  # type: ignore[arg-type]
    session = make_session()
    with pytest.raises(UnknownSlotError, match="no slot 'nope'"):
        await session.switch_slot("nope")
    with pytest.raises(ConfigError, match="non-empty"):
        await session.submit_turn("   ")
    with pytest.raises(ConfigError, match="JSON"):
        await session.set_session_data("k", object())
    with pytest.raises(ConfigError, match="provider"):
        AgentBuilder().build()


async def test_stored_json_that_does_not_parse_names_the_key(
    make_session: MakeSession, tmp_path: Path
) -> None:
    import sqlite3

    path = tmp_path / "bad.db"
    store = SqliteStore(path)
    session = make_session(store=store)
    await session.set_session_data("profile", {"a": 1})
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE session_data SET value = '{not json' WHERE key = 'profile'")
    store = SqliteStore(path)
    session = make_session(store=store)
    with pytest.raises(CorruptDataError, match="profile"):
        await session.get_session_data("profile")
    await store.close()


def test_a_store_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(StoreError, match=r"notes\.txt"):
        SqliteStore(path)
    assert path.read_text().startswith("these are my notes")


async def test_slots_are_separate_conversations(make_session: MakeSession) -> None:
    provider = MockProvider(responder=lambda r: f"seen {len(r.messages)}")
    session = make_session(provider)
    await session.submit_turn("main 1")
    await session.create_slot("research", switch=True)
    assert (await session.submit_turn("research 1")).text == "seen 2"
    await session.switch_slot("default")
    assert (await session.submit_turn("main 2")).text == "seen 4"
    assert [m.text for m in await session.history("research")] == ["research 1", "seen 2"]


async def test_focused_mode_request_carries_what_load_messages_says(
    make_session: MakeSession,
) -> None:
    provider = MockProvider(responder=lambda r: "r")
    session = make_session(provider, mode=FocusedConfig(max_recent_messages=2))
    for text in ("a", "b", "c"):
        expected = await session.load_messages()
        await session.submit_turn(text)
        assert list(provider.calls[-1].messages) == [*expected, Message.user(text)]
    assert [m.text for m in await session.load_messages()] == ["You are helpful.", "c", "r"]
    assert len(await session.history()) == 6


async def test_streamed_turn_yields_text_and_finalizes_on_exhaustion(
    make_session: MakeSession,
) -> None:
    seen: list[tuple[str, int, bool]] = []

    class Recorder:
        @hookimpl
        def on_turn_end(self, ctx: TurnContext) -> None:
            seen.append(("end", ctx.turn_index, ctx.is_stream))

        @hookimpl
        async def post_turn_end(self, ctx: TurnContext) -> None:
            seen.append(("post", ctx.turn_index, ctx.is_stream))

    provider = MockProvider(["a streamed reply", "plain"], chunk_size=4)
    session = make_session(provider, plugins=(Recorder(),))
    stream = session.submit_turn_stream("stream please")
    chunks = [event.text async for event in stream]
    assert "".join(chunks) == "a streamed reply"
    no_events: list[object] = []
    assert sum(isinstance(e, TextDelta) for e in no_events) == 0
    assert stream.message is not None and stream.message.text == "a streamed reply"
    assert session.turn_index == 1
    await session.submit_turn("again")
    assert seen == [("end", 0, True), ("post", 0, True), ("end", 1, False), ("post", 1, False)]
    assert [m.text for m in await session.history()] == [
        "stream please",
        "a streamed reply",
        "again",
        "plain",
    ]


async def test_abandoned_stream_stores_nothing(make_session: MakeSession) -> None:
    provider = MockProvider(["long reply text here", "next"], chunk_size=2)
    session = make_session(provider)
    stream = session.submit_turn_stream("start")
    async for _ in stream:
        break
    await stream.aclose()
    assert session.turn_index == 0
    assert await session.history() == []
    assert (await session.submit_turn("again")).text == "next"


async def test_stream_finalize_returns_the_message(make_session: MakeSession) -> None:
    session = make_session(MockProvider(["whole"]))
    message = await session.submit_turn_stream("go").finalize()
    assert message.text == "whole"


async def test_tool_loop_runs_through_the_session(make_session: MakeSession, agent: Agent) -> None:
    registry = ToolRegistry()

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    provider = MockProvider(
        [
            LlmResponse(
                Message.assistant("", [ToolUseBlock("c1", "add", {"a": 2, "b": 3})]),
                stop_reason="tool_use",
            ),
            "2 + 3 = 5",
        ]
    )
    bundle = AgentBuilder().provider(provider).tool_registry(registry).load_plugins(False).build()
    session = AgentSession(agent, "tools", bundle)
    reply = await session.submit_turn("what is 2 + 3?")
    assert reply.text == "2 + 3 = 5"
    history = await session.history()
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert history[2].text == "5" and history[2].tool_call_id == "c1"
    assert provider.calls[0].tools[0].name == "add"


async def test_post_turn_end_failure_is_logged_and_never_breaks_the_turn(
    make_session: MakeSession, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[str] = []

    class Broken:
        @hookimpl
        def post_turn_end(self, ctx: TurnContext) -> None:
            raise RuntimeError("plugin bug")

    class Healthy:
        @hookimpl
        async def post_turn_end(self, ctx: TurnContext) -> None:
            ran.append(ctx.session_id)

    session = make_session(plugins=(Broken(), Healthy()))
    with caplog.at_level(logging.ERROR, logger="agentcore"):
        reply = await session.submit_turn("hi")
    assert reply.text == "ok"
    assert ran == ["s1"]
    (record,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "post_turn_end" in record.getMessage()
    assert "session=s1" in record.getMessage() and "turn=0" in record.getMessage()
    assert session.turn_index == 1


async def test_on_turn_start_can_refuse_a_turn_before_anything_is_stored(
    make_session: MakeSession,
) -> None:
    class Gate:
        @hookimpl
        def on_turn_start(self, ctx: TurnContext) -> None:
            if "forbidden" in ctx.messages[0].text:
                raise PermissionError("not allowed")

    provider = MockProvider(["fine"])
    session = make_session(provider, plugins=(Gate(),))
    with pytest.raises(PermissionError):
        await session.submit_turn("forbidden words")
    assert provider.calls == [] and await session.history() == []
    assert (await session.submit_turn("allowed")).text == "fine"


async def test_background_work_is_awaited_by_aclose(make_session: MakeSession) -> None:
    import asyncio

    done: list[int] = []

    async def later() -> None:
        await asyncio.sleep(0.01)
        done.append(1)

    session = make_session()
    session.run_in_background(later())
    assert done == []
    await session.aclose()
    assert done == [1]


async def test_an_abandoned_open_stream_is_reported_instead_of_deadlocking(
    make_session: MakeSession,
) -> None:
    session = make_session(MockProvider(["streamed reply text", "next"], chunk_size=3))
    stream = session.submit_turn_stream("start")
    async for _ in stream:
        break
    with pytest.raises(SessionError, match="streamed turn in progress"):
        await session.submit_turn("too early")
    await stream.aclose()
    assert (await session.submit_turn("now")).text == "next"


async def test_set_mode_switches_a_slot_and_keeps_its_history(make_session: MakeSession) -> None:
    session = make_session(MockProvider(responder=lambda r: "r"))
    for text in ("a", "b", "c"):
        await session.submit_turn(text)
    await session.set_mode(FocusedConfig(max_recent_messages=2))
    assert [m.text for m in await session.load_messages()] == ["You are helpful.", "c", "r"]
    assert len(await session.history()) == 6
    await session.set_mode("full")
    assert len(await session.load_messages()) == 7


async def test_session_data_can_be_listed_and_deleted(make_session: MakeSession) -> None:
    session = make_session()
    await session.set_session_data("b", [1])
    await session.set_session_data("a", {"x": None})
    assert await session.memory.keys() == ["a", "b"]
    await session.delete_session_data("a")
    await session.delete_session_data("never-set")
    assert await session.memory.keys() == ["b"]
    assert await session.get_session_data("a") is None


async def test_a_slot_id_cannot_be_created_twice(make_session: MakeSession) -> None:
    session = make_session()
    await session.create_slot("notes")
    with pytest.raises(SessionError, match="already has a slot 'notes'"):
        await session.create_slot("notes")
    with pytest.raises(ConfigError, match="slot_id"):
        await session.create_slot("")
    assert await session.slot_ids() == ["default", "notes"]


def _replying_r(store: SqliteStore) -> AgentBundle:
    """A bundle on ``store`` whose model replies "r" to everything, without plugins."""
    return (
        AgentBuilder()
        .provider(MockProvider(responder=lambda r: "r"))
        .store(store)
        .load_plugins(False)
        .build()
    )


async def test_a_resumed_focused_slot_loads_only_its_window_and_pages_the_rest(
    agent: Agent, tmp_path: Path
) -> None:
    store = SqliteStore(tmp_path / "window.db")
    bundle = _replying_r(store)
    first = AgentSession(agent, "w", bundle)
    for i in range(10):
        await first.submit_turn(f"u{i}")
    await first.set_mode(FocusedConfig(summary_override="S", summary_covers=16))
    expected_request = await first.load_messages()

    resumed = AgentSession(agent, "w", bundle)
    slot = await resumed.get_slot()
    assert slot.offset == 16
    assert slot.message_count() == len(slot) == 20
    assert await resumed.load_messages() == expected_request
    assert slot.messages[19].text == "r"
    with pytest.raises(SessionError, match="not loaded"):
        slot.messages[3]
    # Older messages are paged from the store, with absolute indices.
    page = await resumed.history(start=2, stop=6)
    assert [m.text for m in page] == ["u1", "r", "u2", "r"]
    assert [m.text for m in await resumed.history(start=14, stop=18)] == ["u7", "r", "u8", "r"]
    assert len(await resumed.history()) == 20
    # A turn appends at the true count; another resume sees it.
    await resumed.submit_turn("next")
    assert len(slot) == 22 and slot.offset == 16
    again = AgentSession(agent, "w", bundle)
    assert [m.text for m in await again.history(start=20)] == ["next", "r"]
    # A mode that sends older messages loads them.
    await again.set_mode("full")
    again_slot = await again.get_slot()
    assert again_slot.offset == 0
    assert len(await again.load_messages()) == 23
    with pytest.raises(ConfigError, match="start"):
        await again.history(start=-1)
    await store.close()


async def test_pinned_messages_older_than_the_window_survive_a_resume(
    agent: Agent, tmp_path: Path
) -> None:
    store = SqliteStore(tmp_path / "pins.db")
    bundle = _replying_r(store)
    first = AgentSession(agent, "p", bundle)
    await first.set_mode(FocusedConfig())
    for i in range(10):
        await first.submit_turn(f"u{i}", pin=i in (1, 2))
    await first.set_mode(FocusedConfig(summary_override="S", summary_covers=16, pinned=(2, 4)))
    await first.pin(6)
    expected_request = await first.load_messages()
    texts = [m.text for m in expected_request]
    assert texts[texts.index("u1") :][:4] == ["u1", "u2", "u3", "u8"]

    resumed = AgentSession(agent, "p", bundle)
    slot = await resumed.get_slot()
    assert slot.offset == 16
    assert await resumed.load_messages() == expected_request
    assert slot.messages[2].text == "u1"
    with pytest.raises(SessionError, match="not loaded"):
        slot.messages[3]
    # Pinning a message older than the window loads it (and its neighbours up to the window).
    assert await resumed.pin(8) == (2, 4, 6, 8)
    again = AgentSession(agent, "p", bundle)
    texts = [m.text for m in await again.load_messages()]
    assert texts[texts.index("u1") :][:5] == ["u1", "u2", "u3", "u4", "u8"]
    await store.close()


async def test_history_reads_on_when_the_window_moves_during_its_read(agent: Agent) -> None:
    """A summary stored while history() reads older messages drops more from memory."""
    gate = asyncio.Event()
    reading = asyncio.Event()

    class GatedStore(InMemoryStore):
        gated = False

        async def load_messages(
            self, session_id: str, slot_id: str, start: int = 0, stop: int | None = None
        ) -> list[Message]:
            if self.gated:
                self.gated = False
                reading.set()
                await gate.wait()
            return await super().load_messages(session_id, slot_id, start, stop)

    store = GatedStore()
    builder = AgentBuilder().provider(MockProvider(responder=lambda r: "r")).store(store)
    session = AgentSession(agent, "g", builder.load_plugins(False).build())
    for i in range(10):
        await session.submit_turn(f"u{i}")
    await session.set_mode(FocusedConfig(summary_override="S", summary_covers=4))
    slot = await session.get_slot()
    assert slot.offset == 4
    store.gated = True
    history = asyncio.ensure_future(session.history())
    await reading.wait()  # history() reads messages 0..3 from the store
    await session.set_mode(FocusedConfig(summary_override="S2", summary_covers=12))
    assert slot.offset == 12
    gate.set()
    messages = await history
    assert [m.text for m in messages] == [t for i in range(10) for t in (f"u{i}", "r")]
