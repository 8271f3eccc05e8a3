"""The faults of issue 9, each through the public API against a server that counts its own way.

:class:`StrictServer` counts 1.3 times agentcore's tokens (another tokenizer
plus a chat template) and refuses a request that does not fit its window, as
llama.cpp's server does. Every test states its figure: failed turns, requests
over budget (tools and the reply reservation included), refused requests.
"""

from __future__ import annotations

import random
from typing import Literal

import pytest
from summary_helpers import StrictServer, summary_parts

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ContextWindowExceededError,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    LlmResponse,
    MemoryStore,
    Message,
    ToolRegistry,
    ToolUseBlock,
)
from agentcore.budget import reply_reservation
from agentcore.errors import ServiceUnavailableError
from agentcore.tokens import TokenCounter, count_text_tokens
from agentcore_autosummary import CORRECTION_KEY, SummaryConfig, get_conversation_summary
from agentcore_autosummary.deciding.trigger import MAX_BACKOFF_TURNS

WORDS = ["apple", "river", "stone", "cloud", "green", "table", "music", "light"]
AGENT = Agent("assistant", system_prompt="You are a helpful assistant.")


def text(tokens: int, seed: int = 0) -> str:
    """About ``tokens`` tokens of plain English words."""
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(tokens))


def session(
    server: StrictServer,
    config: SummaryConfig,
    *,
    store: MemoryStore | None = None,
    agent: Agent = AGENT,
    tools: ToolRegistry | None = None,
    session_id: str = "budget",
) -> AgentSession:
    builder = AgentBuilder().provider(server.provider).store(store or InMemoryStore())
    if tools is not None:
        builder.tool_registry(tools)
    bundle = builder.setting("summary_config", config).build()
    return AgentSession(agent, session_id, bundle, FocusedConfig())


def over(server: StrictServer, window: int) -> list[int]:
    """Sizes of the requests over ``window`` in the server's tokens, reply reservation included."""
    sizes = [
        server.count(call) + reply_reservation(call.max_tokens, window)
        for call in server.provider.calls
    ]
    return [size for size in sizes if size > window]


async def run_turns(chat: AgentSession, messages: list[str], *, stream: bool = False) -> int:
    """Submit every message (streamed or not); return how many turns failed."""
    failed = 0
    for message in messages:
        try:
            if stream:
                await chat.submit_turn_stream(message).finalize()
            else:
                await chat.submit_turn(message)
        except Exception:
            failed += 1
    return failed


@pytest.mark.parametrize("stream", [False, True], ids=["submit", "stream"])
@pytest.mark.parametrize("mode", ["inline", "background"])
async def test_every_request_fits_a_2048_server_in_its_own_tokens(
    mode: Literal["inline", "background"], stream: bool
) -> None:
    # Issue 9: summary requests refused ("3367 tokens: 2343 in the messages, 1024 in the
    # completion"), then a background-mode turn of 2057 tokens refused.
    server = StrictServer(2048, turn=lambda request: text(120, len(request.messages)))
    config = SummaryConfig(max_context_tokens=2048, mode=mode)  # summaries of 256 at most
    chat = session(server, config)
    failed = await run_turns(chat, [text(150, i) for i in range(40)], stream=stream)
    await chat.aclose()
    assert failed == 0
    assert server.rejected == []
    assert over(server, 2048) == []
    assert len(server.calls("summary")) >= 3
    made = len(server.calls("summary"))
    latest = await get_conversation_summary(chat)
    assert latest is not None
    # The newest summary is applied: a part as written, or a line of the parts condensed.
    assert any(f"A short summary, number {made}:" in part for part in summary_parts(latest))
    for call in server.calls("summary"):
        assert call.max_tokens is not None and call.max_tokens <= 1024
    # learned from the usage the server reported, kept with the session
    stored = await chat.get_session_data(CORRECTION_KEY)
    assert isinstance(stored, dict)
    assert stored["ratios"][""] == pytest.approx(1.3, abs=0.02)


async def test_a_window_set_below_the_servers_survives_a_long_first_reply() -> None:
    # Issue 9: --max-context-tokens 1200 on a 2,048 server, a long first reply: turn 2 died.
    server = StrictServer(
        2048, turn=lambda request: text(800 if len(request.messages) <= 2 else 60)
    )
    config = SummaryConfig(max_context_tokens=1200, max_summary_tokens=256)
    chat = session(server, config)
    failed = await run_turns(chat, [text(40, i) for i in range(15)])
    assert failed == 0
    assert server.rejected == []
    assert over(server, 1200) == []
    assert await get_conversation_summary(chat) is not None


async def test_a_message_too_long_for_a_chunk_is_cut_in_the_summary_input() -> None:
    # Issue 9: a message larger than the window was never cut in the summary input:
    # 16 summary requests of 8,547 tokens on a 2,000 window, none succeeded.
    def turn(request: LlmRequest) -> str:
        return text(8000) if len(request.messages) <= 2 else "Noted."

    server = StrictServer(2000, turn=turn)
    config = SummaryConfig(max_context_tokens=2000, max_summary_tokens=256)
    chat = session(server, config)
    failed = await run_turns(chat, [f"question {i}" for i in range(12)])
    assert failed == 0
    # the pre-call summary of turn 2 reads the 10,400-server-token reply cut to fit
    summaries = server.calls("summary")
    assert summaries and server.rejected[:1] == []
    assert all(call.max_tokens and call.max_tokens <= 256 for call in summaries)
    assert any("tokens left out" in call.messages[0].text for call in summaries)
    assert over(server, 2000) == []
    history = await chat.history()
    assert count_text_tokens(history[1].text) >= 7900  # the stored reply stays whole


async def test_a_20000_token_summary_is_cut_and_the_session_goes_on() -> None:
    # Issue 9: a provider returning a 20,000-token summary broke a session for good
    # (26 of 26 later turns failed).
    server = StrictServer(2000, summary=lambda request: text(20_000, 1))
    config = SummaryConfig(max_context_tokens=2000, max_summary_tokens=200)
    chat = session(server, config)
    failed = await run_turns(chat, [text(120, i) for i in range(30)])
    assert failed == 0
    assert server.rejected == []
    assert over(server, 2000) == []
    summary = await get_conversation_summary(chat)
    assert summary is not None and "tokens left out" in summary
    assert count_text_tokens(summary) <= config.summary_room


async def test_a_failed_attempt_never_stops_the_next_one_even_after_a_resume() -> None:
    # Issue 9: a failed pre-call summary then a failed turn left a session that never
    # summarized again. Issue 20: with the summarizer down the turns are not refused
    # either: each goes out inside the window, its oldest messages left out, and the
    # summary is tried again (after a bounded wait) on this session and after a resume.
    store = InMemoryStore()
    summaries_fail = True

    def summary(request: LlmRequest) -> str:
        if summaries_fail:
            raise ServiceUnavailableError("summary backend down", status_code=503)
        return "A short summary."

    server = StrictServer(2048, summary=summary)
    config = SummaryConfig(
        max_context_tokens=2048,
        debounce_turns=1000,
        trigger_token_ratio=1.0,
        keep_recent_tokens=200,
    )
    chat = session(server, config, store=store)
    for _ in range(40):
        assert await run_turns(chat, [text(200, len(await chat.history()))]) == 0
        if server.calls("summary"):
            break
    attempts = len(server.calls("summary"))
    assert attempts >= 1
    for number in range(5):  # resumed five times: every turn answered and stored
        resumed = session(server, config, store=store)
        history = len(await resumed.history())
        for _ in range(MAX_BACKOFF_TURNS + 1):
            assert await run_turns(resumed, [text(200, 99 + number)]) == 0
            if len(server.calls("summary")) > attempts:
                break
        assert len(server.calls("summary")) > attempts  # tried again after the resume
        attempts = len(server.calls("summary"))
        assert len(await resumed.history()) > history
    summaries_fail = False
    resumed = session(server, config, store=store)
    for _ in range(MAX_BACKOFF_TURNS + 1):
        assert await run_turns(resumed, [text(200, 99)]) == 0
        if await get_conversation_summary(resumed) is not None:
            break
    latest = await get_conversation_summary(resumed)
    assert latest is not None
    # The backlog of the outage, in one part or in a part for each request it took.
    assert {part.strip() for part in summary_parts(latest)} == {"A short summary."}
    assert server.rejected == []
    assert over(server, 2048) == []


def _tools(sizes: random.Random) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    def fetch(page: int) -> str:
        """Fetch a page of the report.

        Args:
            page: The page number.
        """
        return text(sizes.randint(6000, 8000), page)

    return registry


def _call_the_tool(request: LlmRequest) -> str | LlmResponse:
    last = request.messages[-1]
    if last.role == "user" and "page 1." not in last.text:
        call = ToolUseBlock(
            f"call-{len(request.messages)}", "fetch", {"page": len(request.messages)}
        )
        return LlmResponse(Message.assistant("Let me fetch it.", [call]), stop_reason="tool_use")
    return "Here is what the page says, in short."


async def test_a_large_tool_output_every_turn_never_sends_a_request_over_budget() -> None:
    # Issue 9: a 6k-8k-token tool output every turn sent 12-17 of 120 requests over
    # budget because the debounce blocked the pre-call summary.
    server = StrictServer(16_000, turn=_call_the_tool)
    config = SummaryConfig(max_context_tokens=16_000, debounce_turns=3)
    chat = session(server, config, tools=_tools(random.Random(3)))
    failed = await run_turns(chat, [f"Read page {i} of the report." for i in range(60)])
    assert failed == 0
    assert len(server.calls("turn")) == 120
    assert server.rejected == []
    assert over(server, 16_000) == []  # tool definitions and reply reservation included
    assert len(server.calls("summary")) >= 10


async def test_in_flight_tool_results_are_cut_for_the_request_only() -> None:
    server = StrictServer(6000, turn=_call_the_tool)
    config = SummaryConfig(max_context_tokens=6000, max_summary_tokens=512)
    chat = session(server, config, tools=_tools(random.Random(5)))
    # A first exchange whose usage teaches the plugin how the server counts; without it,
    # the first cut is sized in agentcore's tokens and the server may refuse it once
    # (then the overflow is answered by one retry: see the next tests).
    assert await run_turns(chat, ["Read page 1.", "Read page 2."]) == 0
    follow_up = server.calls("turn")[2]
    sent = follow_up.messages[-1].text
    assert "tokens left out" in sent
    stored = (await chat.history())[-2]
    assert stored.role == "tool" and count_text_tokens(stored.text) >= 6000
    assert over(server, 6000) == []


@pytest.mark.parametrize("stream", [False, True], ids=["submit", "stream"])
async def test_a_user_message_larger_than_the_window_is_refused_before_any_call(
    stream: bool,
) -> None:
    server = StrictServer(2000)
    chat = session(server, SummaryConfig(max_context_tokens=2000, max_summary_tokens=256))
    with pytest.raises(ContextWindowExceededError, match="max_context_tokens") as caught:
        if stream:
            await chat.submit_turn_stream(text(3000)).finalize()
        else:
            await chat.submit_turn(text(3000))
    assert caught.value.limit_tokens == 2000 and caught.value.requested_tokens
    assert server.provider.calls == []  # nothing paid
    assert await chat.history() == []  # nothing stored
    assert await run_turns(chat, ["A short question."], stream=stream) == 0
    assert len(await chat.history()) == 2


@pytest.mark.parametrize("stream", [False, True], ids=["submit", "stream"])
async def test_a_servers_overflow_answers_with_a_summary_one_retry_and_a_correction(
    stream: bool,
) -> None:
    # The provider's usage matches agentcore's count, so only the server's refusal
    # tells the plugin that the model counts 1.3x.
    store = InMemoryStore()
    server = StrictServer(
        2048, turn=lambda request: text(100, len(request.messages)), report_usage=False
    )
    config = SummaryConfig(
        max_context_tokens=2048,
        trigger_token_ratio=1.0,
        debounce_turns=1000,
        keep_recent_tokens=300,
    )
    chat = session(server, config, store=store)
    failed = await run_turns(chat, [text(100, i) for i in range(30)], stream=stream)
    assert failed == 0
    assert len(server.rejected) == 1  # one refusal, answered by a summary and one retry
    assert len(server.calls("summary")) >= 1
    stored = await chat.get_session_data("autosummary.token_correction")
    assert isinstance(stored, dict)
    assert stored["ratios"][""] == pytest.approx(1.3, abs=0.02)
    # The correction survives a resume: the resumed session never overflows.
    resumed = session(server, config, store=store)
    assert await run_turns(resumed, [text(100, 100 + i) for i in range(30)]) == 0
    assert len(server.rejected) == 1


async def test_a_users_exact_counter_drives_the_budget() -> None:
    def tokenizer(value: str) -> int:
        return -(-count_text_tokens(value) * 3 // 2)  # 1.5x, rounded up: above the server

    agent = Agent(
        "assistant",
        system_prompt="You are a helpful assistant.",
        token_counter=TokenCounter(None, count_text=tokenizer),
    )
    server = StrictServer(2048, turn=lambda request: text(100, len(request.messages)))
    config = SummaryConfig(
        max_context_tokens=2048,
        trigger_token_ratio=1.0,
        debounce_turns=1000,
        keep_recent_tokens=300,
    )
    chat = session(server, config, agent=agent)
    assert await run_turns(chat, [text(100, i) for i in range(30)]) == 0
    assert server.rejected == []


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"max_context_tokens": "1000"}, "max_context_tokens"),
        ({"debounce_turns": 2.7}, "debounce_turns"),
        ({"trigger_token_ratio": True}, "trigger_token_ratio"),
        ({"timeout": float("nan")}, "timeout"),
        ({"timeout": float("inf")}, "timeout"),
        ({"trigger_token_ratio": float("nan")}, "trigger_token_ratio"),
        ({"memory_key": "autosummary.token_correction"}, "memory_key"),
        ({"memory_key": "autosummary/default"}, "memory_key"),
        ({"max_context_tokens": 1200, "max_summary_tokens": 1024}, "max_summary_tokens"),
        ({"max_context_tokens": 4000, "keep_recent_tokens": 3300}, "keep_recent_tokens"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_the_dict_form_reaches_exactly_the_checks_of_the_class(
    fields: dict[str, object], named: str
) -> None:
    with pytest.raises(ValueError, match=named):
        SummaryConfig.coerce(fields)
    if "colour" not in fields:
        with pytest.raises(ValueError, match=named):
            SummaryConfig(**fields)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=named):
        AgentBuilder().provider(StrictServer(2048).provider).setting(
            "summary_config", fields
        ).build()


async def test_the_verbatim_tail_is_summarized_when_a_large_message_needs_its_room() -> None:
    # Against a real server, a pasted document met a 512-token verbatim tail and a
    # counting overhead no local count sees: the turn was refused although summarizing
    # the tail would have made room.
    server = StrictServer(2048, ratio=1.3, turn=lambda request: text(60, len(request.messages)))
    # Recall off: the shape of the request is the point (a recalled part has its tests).
    config = SummaryConfig(
        max_context_tokens=2048, max_summary_tokens=256, keep_recent_tokens=512, recall="off"
    )
    chat = session(server, config)
    small = [text(60, i) for i in range(12)]
    assert await run_turns(chat, small) == 0
    # About 1,330 server tokens: fits with the summary, not beside a 512-token tail.
    document = text(1020, 99)
    await chat.submit_turn(document)
    assert server.rejected == []
    assert over(server, 2048) == []
    request = server.calls("turn")[-1].messages
    assert request[-1].text == document
    # What the tail held went into the summary: only the summary and the document are sent.
    # (The summary is a user-side message, answered so that roles alternate.)
    assert [m.role for m in request] == ["system", "user", "assistant", "user"]
    # The conversation goes on with the usual tail afterwards.
    assert await run_turns(chat, [text(60, 200 + i) for i in range(4)]) == 0
    assert server.rejected == [] and over(server, 2048) == []
