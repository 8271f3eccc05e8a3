"""A long unsummarized history: caught up in bounded rounds of concurrent chunk summaries."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal

import pytest
from summary_helpers import Replies

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    LlmResponse,
    Message,
    SlotConfig,
    TurnContext,
    hookimpl,
)
from agentcore._slot_config_json import config_to_json
from agentcore.budget import reply_reservation
from agentcore.stores import MessageAppend, StoreWrite
from agentcore.testing import MockProvider
from agentcore.tokens import TokenCounter, count_tokens
from agentcore_autosummary import (
    SummaryConfig,
    SummaryInfo,
    get_conversation_summary,
    unfence_summary,
)

AGENT = Agent("assistant", system_prompt="You are a helpful assistant.")


async def backlog_store(pairs: int) -> InMemoryStore:
    """A store with a Focused slot of ``pairs`` user/assistant exchanges and no summary."""
    store = InMemoryStore()
    history: list[Message] = []
    for i in range(pairs):
        history.append(Message.user(f"question {i}: " + "lorem ipsum dolor sit amet " * 8))
        history.append(Message.assistant(f"answer {i}: " + "consectetur adipiscing elit " * 8))
    await store.write(
        StoreWrite(
            "s",
            slot_configs={"default": config_to_json(SlotConfig(FocusedConfig()))},
            appends={"default": MessageAppend(0, history)},
            expected_versions={"default": 0},
        )
    )
    return store


def backlog_session(
    store: InMemoryStore, respond: Callable[[LlmRequest], str], config: SummaryConfig
) -> AgentSession:
    """The session ``s`` of ``store``, its replies and summaries made by ``respond``."""
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .store(store)
        .setting("summary_config", config)
        .build()
    )
    return AgentSession(AGENT, "s", bundle)


class CountingReplies(Replies):
    """Numbered summaries; records how many summary calls ran at once."""

    def __init__(self) -> None:
        super().__init__()
        self.calls_per_turn: list[int] = []

    def __call__(self, request: LlmRequest) -> str:
        if request.purpose != "summary":
            self.calls_per_turn.append(self.summaries)
        return super().__call__(request)


@pytest.mark.parametrize("mode", ["inline", "background"])
async def test_a_turn_makes_at_most_the_configured_summary_calls(
    mode: Literal["inline", "background"],
) -> None:
    store = await backlog_store(300)
    replies = Replies()
    provider = MockProvider(responder=replies)
    config = SummaryConfig(
        max_context_tokens=4000, max_summary_tokens=200, max_summary_calls_per_turn=3, mode=mode
    )
    bundle = (
        AgentBuilder().provider(provider).store(store).setting("summary_config", config).build()
    )
    session = AgentSession(AGENT, "s", bundle)
    slot = await session.get_slot()
    # The backlog needs many summary calls: the first turn makes at most 3 of them and
    # is answered with the summary so far and the newest messages that fit, the rest
    # left out of its request (never sent over the window).
    await session.submit_turn("hello")
    if mode == "inline":
        assert replies.summaries == 3
    else:  # the background rounds may start while the turn finishes
        assert replies.summaries >= 3
    first = provider.calls_for("turn")[0]
    notes = [m.text for m in first.messages if "still being summarized" in m.text]
    assert len(notes) == 1 and notes[0].startswith("[") and "left out" in notes[0]
    assert first.messages[-1].text == "hello"
    assert count_tokens(first.messages) + reply_reservation(None, 4000) <= 4000
    focused = slot.config.focused
    assert focused is not None and focused.summary_override is not None
    assert 0 < focused.summary_covers < 600
    # Every later turn is answered and makes at most 3 summary calls; the backlog is
    # caught up in the end (in the background, without waiting for turns).
    for _ in range(60):
        before = replies.summaries
        await asyncio.sleep(0.01)  # a user's pause: an instant fake model never yields
        await session.submit_turn("hello")
        if mode == "inline":
            assert replies.summaries - before <= 3
        request = provider.calls_for("turn")[-1].messages
        assert count_tokens(request) + reply_reservation(None, 4000) <= 4000
        if not any("still being summarized" in m.text for m in request):
            break
    else:
        pytest.fail("the backlog was never caught up")
    await session.aclose()
    assert (await session.get_slot()).config.focused.summary_covers > 500  # type: ignore[union-attr]


@pytest.mark.parametrize("strategy", ["segments", "incremental"])
async def test_chunk_summaries_run_concurrently(
    strategy: Literal["segments", "incremental"],
) -> None:
    """A backlog of several chunks: the segments are parts of their own, an update is merged."""
    store = await backlog_store(300)
    running = 0
    peak = 0
    merged: list[str] = []

    async def summarize(request: LlmRequest) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        text = request.messages[-1].text
        if "(part 1 of" in text:
            merged.append(text)

    class Provider(MockProvider):
        async def complete(self, request: LlmRequest) -> LlmResponse:
            if request.purpose == "summary":
                await summarize(request)
            return await super().complete(request)

    provider = Provider(responder=Replies())
    config = SummaryConfig(
        max_context_tokens=4000,
        max_summary_tokens=200,
        max_summary_calls_per_turn=5,
        strategy=strategy,
    )
    bundle = (
        AgentBuilder().provider(provider).store(store).setting("summary_config", config).build()
    )
    session = AgentSession(AGENT, "s", bundle)
    await session.submit_turn("hello")
    assert peak >= 2
    summary = await get_conversation_summary(session)
    assert summary is not None
    if strategy == "incremental":
        assert merged, "the chunk summaries were merged by one more call"
        return
    # No call merges them (a small model asked to merge copies one part): each chunk's
    # summary is a part of the summary, under the stretch of the conversation it covers.
    assert merged == []
    assert len(provider.calls_for("summary")) == 5
    assert summary.count("\nPart ") >= 2, summary


async def test_a_chunk_echoed_back_ends_the_summary_and_the_parts_are_of_one_size() -> None:
    """The summary of a stretch of two chunks whose second reply echoes its transcript."""
    store = await backlog_store(24)
    chunks: list[str] = []

    def respond(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        text = request.messages[-1].text
        chunks.append(text)
        if len(chunks) == 2:  # the second chunk's reply: its own transcript, echoed
            return text.split("```text", 1)[-1]
        return f"Numbered questions, each answered (part {len(chunks)})."

    config = SummaryConfig(max_context_tokens=2000, max_summary_tokens=200, keep_recent_tokens=100)
    session = backlog_session(store, respond, config)
    await session.submit_turn("hello")
    assert len(chunks) == 2, "the stretch did not take two requests: the scenario did not happen"
    # Of about one size: neither chunk is a leftover of a few messages.
    first, second = (text.count("question ") for text in chunks)
    assert abs(first - second) <= 2, (first, second)
    # The echo is refused and ends the summary there: the first chunk's part is applied,
    # and the second chunk's messages are left for the next summary, sent meanwhile.
    assert await get_conversation_summary(session) == "Numbered questions, each answered (part 1)."
    focused = (await session.get_slot()).config.focused
    assert focused is not None
    assert focused.summary_covers == first + chunks[0].count("answer ")


@pytest.mark.parametrize("largest_kept", [10, 2])
async def test_a_chunk_echoed_back_is_asked_again_as_two_halves(largest_kept: int) -> None:
    """A summarizer that echoes any transcript of more than ``largest_kept`` questions."""
    store = await backlog_store(20)
    asked: list[int] = []

    def respond(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        text = request.messages[-1].text
        questions = text.count("question ")
        asked.append(questions)
        if questions > largest_kept:
            return text.split("```text", 1)[-1]  # its own transcript, echoed
        return f"{questions} numbered questions, each answered."

    config = SummaryConfig(max_context_tokens=2000, max_summary_tokens=200, keep_recent_tokens=100)
    session = backlog_session(store, respond, config)
    reply = await session.submit_turn("hello")
    assert reply.text == "Noted."  # the turn goes out whatever the summary did
    first, *halves = asked
    assert first > largest_kept, "one request held the stretch: the scenario did not happen"
    # The same request would get the same echo: the chunk is asked for again as two
    # requests of about one size, once.
    assert len(halves) == 2 and sum(halves) == first and abs(halves[0] - halves[1]) <= 1
    summary = await get_conversation_summary(session)
    if largest_kept >= max(halves):
        assert summary is not None and f"{halves[1]} numbered questions" in summary
        focused = (await session.get_slot()).config.focused
        assert focused is not None and focused.summary_covers == 2 * first
    else:  # the halves are echoed too: the attempt is refused and nothing is applied
        assert summary is None


async def test_the_summary_is_kept_once_in_the_slot_config_and_once_as_the_snapshot() -> None:
    store = await backlog_store(60)
    provider = MockProvider(responder=Replies())
    config = SummaryConfig(max_context_tokens=4000, max_summary_tokens=200)
    bundle = (
        AgentBuilder().provider(provider).store(store).setting("summary_config", config).build()
    )
    session = AgentSession(AGENT, "s", bundle)
    await session.submit_turn("hello")
    slot = await session.get_slot()
    assert slot.config.focused is not None
    summary = slot.config.focused.summary_override
    assert summary is not None
    assert await get_conversation_summary(session) == unfence_summary(summary)
    state = await session.get_session_data("autosummary/default")
    assert state["summary"] is None and state["covered"] == slot.config.focused.summary_covers
    # A state stored with a copy of the summary (older data) still loads.
    await session.set_session_data("autosummary/default", {**state, "summary": "old copy"})
    resumed = AgentSession(AGENT, "s", bundle)
    await resumed.submit_turn("again")
    assert await get_conversation_summary(resumed) is not None


async def test_a_retry_does_not_ask_again_for_a_part_the_update_summarized() -> None:
    # Every summary is the same text, so from the second summary on the gate refuses the
    # merged update as a copy and retries it as a resummary, whose first request (the
    # first chunk alone) is the update's first part: it is answered from that part.
    store = await backlog_store(300)
    same = "The user asked numbered questions; each got a numbered answer."
    asked: dict[int, list[str]] = {}
    turns = [0]

    def respond(request: LlmRequest) -> str:
        if request.purpose != "summary":
            turns[0] += 1
            return "Noted."
        asked.setdefault(turns[0], []).append(request.messages[-1].text)
        return same

    config = SummaryConfig(
        max_context_tokens=4000,
        max_summary_tokens=200,
        max_summary_calls_per_turn=3,
        strategy="incremental",
        request_shape="transcript",
        retention_check="off",
    )
    session = backlog_session(store, respond, config)
    for number in range(6):
        await session.submit_turn(f"question {300 + number}")
    retried = [texts for texts in asked.values() if len(texts) > config.max_summary_calls_per_turn]
    assert retried, "no update was retried: the scenario did not happen"
    for texts in asked.values():
        assert len(texts) == len(set(texts)), "a request was sent twice in one turn"


def _words(text: str) -> int:
    return len(text.split())


async def test_the_first_turn_over_an_uncounted_backlog_tokenizes_only_what_it_needs() -> None:
    # 2,000 messages stored without their counts, far over a 4,000-token window.
    store = await backlog_store(1_000)
    counter = TokenCounter("m", count_text=_words, name="words")
    agent = Agent("assistant", system_prompt="You are a helpful assistant.", token_counter=counter)
    seen: list[SummaryInfo] = []

    class Listener:
        @hookimpl
        def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
            seen.append(summary)

    provider = MockProvider(responder=Replies())
    config = SummaryConfig(
        max_context_tokens=4000, max_summary_tokens=200, max_summary_calls_per_turn=2
    )
    bundle = (
        AgentBuilder()
        .provider(provider)
        .store(store)
        .plugin(Listener())
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(agent, "s", bundle)
    slot = await session.get_slot()
    history = slot.raw_messages()
    exact = TokenCounter("m", count_text=_words, name="words-apart")  # keeps its counts apart
    whole = exact.count_messages(slot.load_messages())

    await session.submit_turn("hello")

    # The turn went out inside the window, the backlog left out of it for now ...
    (request,) = provider.calls_for("turn")
    assert counter.count_messages(request.messages) + reply_reservation(None, 4000) <= 4000
    # ... and only what the turn sent or summarized was tokenized: not the whole backlog.
    counted = sum(counter.counted(message) for message in history)
    assert 0 < counted < len(history) // 2
    # The summaries report the context's size: estimated past the window, and close.
    assert seen and seen[0].tokens_estimated
    assert abs(seen[0].tokens_before - whole) < whole * 0.1
    await session.aclose()
