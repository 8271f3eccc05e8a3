from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import attrs
import pytest
from summary_helpers import TINY_WINDOW

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ConfigError,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    Usage,
)
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary import SummaryConfig, fence_summary, get_conversation_summary

MakeSession = Callable[..., AgentSession]


class GatedSummaries:
    """Summary calls block until released; turn calls answer at once."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.count = 0

    async def __call__(self, request: LlmRequest) -> str:
        if request.purpose == "summary":
            self.count += 1
            self.started.set()
            await self.release.wait()
            return f"background summary #{self.count}"
        return "reply"


LONG = "a message long enough to trigger, and longer than the summary that replaces it " * 4

BACKGROUND = SummaryConfig(
    **TINY_WINDOW, trigger_token_ratio=0.005, keep_recent_tokens=5, mode="background"
)


async def test_background_summary_adds_no_latency_to_the_turn(make_session: MakeSession) -> None:
    gate = GatedSummaries()
    session = make_session(MockProvider(responder=gate), summary=BACKGROUND, mode=FocusedConfig())
    reply = await asyncio.wait_for(session.submit_turn(LONG), 5)
    assert reply.text == "reply"
    await asyncio.wait_for(gate.started.wait(), 5)
    assert await get_conversation_summary(session) is None  # still being written
    gate.release.set()
    await session.aclose()
    assert await get_conversation_summary(session) == "background summary #1"
    context = await session.load_messages()
    assert context[1].text == f"[上下文摘要] {fence_summary('background summary #1')}"


async def test_next_turn_waits_for_the_summary_rather_than_overflow(
    make_session: MakeSession,
) -> None:
    gate = GatedSummaries()
    # The first turn fills most of the 2,000-token window: with the reply
    # reservation, the next request would not fit.
    provider = MockProvider(responder=gate)
    session = make_session(provider, summary=BACKGROUND, mode=FocusedConfig())
    await session.submit_turn("word " * 1600)
    await asyncio.wait_for(gate.started.wait(), 5)
    second = asyncio.ensure_future(session.submit_turn("second message " * 100))
    await asyncio.sleep(0.05)
    assert not second.done()
    assert len(provider.calls_for("turn")) == 1  # the second request has not been sent
    gate.release.set()
    await asyncio.wait_for(second, 5)
    request = provider.calls_for("turn")[1]
    assert request.messages[1].text == f"[上下文摘要] {fence_summary('background summary #1')}"
    await session.aclose()


async def test_turn_does_not_wait_when_the_context_has_room(make_session: MakeSession) -> None:
    gate = GatedSummaries()
    config = SummaryConfig(
        max_context_tokens=1000,
        max_summary_tokens=200,
        trigger_token_ratio=0.5,
        mode="background",
        keep_recent_tokens=0,
    )
    provider = MockProvider(responder=gate, usage=Usage(500, 10))
    session = make_session(provider, summary=config, mode=FocusedConfig())
    await session.submit_turn("first message " * 20)
    await asyncio.wait_for(gate.started.wait(), 5)
    await asyncio.wait_for(session.submit_turn("second message"), 5)
    assert gate.count == 1  # no second summary while one is pending
    gate.release.set()
    await session.aclose()
    assert await get_conversation_summary(session) == "background summary #1"


async def test_stale_background_summary_is_not_applied(agent: Agent) -> None:
    gate = GatedSummaries()
    store = InMemoryStore()

    def open_session(provider: MockProvider, config: SummaryConfig) -> AgentSession:
        bundle = (
            AgentBuilder().provider(provider).store(store).setting("summary_config", config).build()
        )
        return AgentSession(agent, "shared", bundle, FocusedConfig())

    slow = open_session(MockProvider(responder=gate), BACKGROUND)
    await slow.submit_turn(LONG)
    await asyncio.wait_for(gate.started.wait(), 5)

    def quick_responder(request: LlmRequest) -> str:
        return "inline summary" if request.purpose == "summary" else "reply"

    quick = open_session(
        MockProvider(responder=quick_responder),
        SummaryConfig(**TINY_WINDOW, trigger_token_ratio=0.005, keep_recent_tokens=5),
    )
    await quick.submit_turn("another message, written through a second session object " * 4)
    assert await get_conversation_summary(quick) == "inline summary"

    gate.release.set()
    await slow.aclose()
    # The older background summary lost the race: the newer one stays.
    assert await get_conversation_summary(slow) == "inline summary"
    state = await slow.get_session_data("autosummary/default")
    assert state["generation"] == 1


async def test_aclose_waits_for_pending_summaries(make_session: MakeSession) -> None:
    async def slow(request: LlmRequest) -> str:
        if request.purpose == "summary":
            await asyncio.sleep(0.05)
            return "done in the background"
        return "reply"

    session = make_session(MockProvider(responder=slow), summary=BACKGROUND, mode=FocusedConfig())
    async with session:
        await session.submit_turn(LONG)
    assert await get_conversation_summary(session) == "done in the background"


async def test_a_turn_waits_at_most_half_its_deadline_then_goes_out_inside_the_window(
    agent: Agent, caplog: pytest.LogCaptureFixture
) -> None:
    """A summary that takes longer than the turn may wait never fails the turn."""
    gate = GatedSummaries()
    provider = MockProvider(responder=gate)
    bundle = (
        AgentBuilder()
        .provider(provider)
        .store(InMemoryStore())
        .setting("summary_config", BACKGROUND)
        .turn_timeout(4.0)
        .build()
    )
    session = AgentSession(agent, "slow", bundle, FocusedConfig())
    await session.submit_turn("word " * 1600)
    await asyncio.wait_for(gate.started.wait(), 5)
    with caplog.at_level(logging.WARNING, logger="agentcore.autosummary"):
        reply = await session.submit_turn("second message " * 100)  # the summary never ends
        await session.submit_turn("third message " * 100)  # no new wait for the same summary
    assert reply.text == "reply"
    waited = [r for r in caplog.records if "did not wait longer than" in r.getMessage()]
    assert len(waited) == 1
    request = provider.calls_for("turn")[1]
    sent = get_token_counter(None).count_messages(list(request.messages))
    assert sent <= TINY_WINDOW["max_context_tokens"]
    assert "word word" not in request.messages[1].text  # the oldest message was left out
    gate.release.set()
    await session.aclose()
    assert await get_conversation_summary(session) == "background summary #1"


async def test_background_wait_0_never_waits_and_the_summary_lands_later(
    make_session: MakeSession,
) -> None:
    gate = GatedSummaries()
    provider = MockProvider(responder=gate)
    config = attrs.evolve(BACKGROUND, background_wait=0)
    session = make_session(provider, summary=config, mode=FocusedConfig())
    await session.submit_turn("word " * 1600)
    await asyncio.wait_for(gate.started.wait(), 5)
    reply = await asyncio.wait_for(session.submit_turn("second message " * 100), 5)
    assert reply.text == "reply" and not gate.release.is_set()  # sent while it runs
    request = provider.calls_for("turn")[1]
    assert get_token_counter(None).count_messages(list(request.messages)) <= 2000
    gate.release.set()
    await session.aclose()
    assert await get_conversation_summary(session) == "background summary #1"


@pytest.mark.parametrize("bad", [-1, float("inf"), "30", True])
def test_background_wait_is_checked(bad: object) -> None:
    with pytest.raises(ConfigError, match="background_wait"):
        SummaryConfig(background_wait=bad)  # type: ignore[arg-type]
