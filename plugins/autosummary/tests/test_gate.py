"""The gate (issue 24): a refused summary is asked for again another way.

A copy of the previous summary, a reply cut at its cap and an echo of the
transcript are each refused; the retry route of each verdict makes the
summary that is applied. When every route is refused, the attempt fails and
backs off as any failed attempt does, except for a copy that the retry gave
again: the summarizer, asked afresh, found nothing to add, so the unchanged
summary is applied with its verdict and covers the new messages.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    LlmResponse,
    Message,
    TurnContext,
    hookimpl,
)
from agentcore.testing import MockProvider
from agentcore.tokens import count_tokens
from agentcore_autosummary import (
    SummaryConfig,
    SummaryInfo,
    SummaryRequestInfo,
    get_conversation_summary,
)
from agentcore_autosummary.deciding.trigger import backoff_turns
from agentcore_autosummary.judging.gate import SummaryRejectedError
from agentcore_autosummary.requesting.routes import MAX_EXTRA_CALLS
from agentcore_autosummary.text.words import folded_words

AGENT = Agent("assistant", system_prompt="You are a helpful assistant.")
# The retry routes are read from transcript requests; test_prefix_summaries.py has the gate
# refusing a prefix-shaped summary.
# The gate's own verdicts and routes: without quotes (test_quoting.py has those).
CONFIG = SummaryConfig(
    max_context_tokens=2000,
    trigger_token_ratio=0.3,
    debounce_turns=1,
    strategy="incremental",  # the retry routes are the incremental strategy's
    request_shape="transcript",
    retention_check="off",
)
FIRST = "The user deploys to /srv/app on port 8443; the release is v2.1."

Reply = Callable[[LlmRequest], Any]


class Recorder:
    def __init__(self) -> None:
        self.applied: list[SummaryInfo] = []
        self.errors: list[tuple[int, BaseException]] = []

    @hookimpl
    def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
        self.applied.append(summary)

    @hookimpl
    def on_summary_error(
        self, ctx: TurnContext, request: SummaryRequestInfo, error: BaseException
    ) -> None:
        self.errors.append((ctx.turn_index, error))


def _words(number: int) -> str:
    return f"step {number}: " + " ".join(f"word{number}x{i}" for i in range(60))


def _conversation(request: LlmRequest) -> str:
    # The last fenced part: the new messages (the previous summary is a part before it).
    parts: list[str] = re.findall(r"```text\n(.*?)\n```", request.messages[-1].text, re.DOTALL)
    return parts[-1]


def _good(request: LlmRequest) -> str:
    latest = _conversation(request).split()[-10:]
    return f"{FIRST} Later: {' '.join(latest)}."


def _copy(request: LlmRequest) -> str:
    return FIRST


def _cut(request: LlmRequest) -> LlmResponse:
    return LlmResponse(
        Message.assistant(FIRST + " Later: the user asked"), stop_reason="max_tokens"
    )


def _echo(request: LlmRequest) -> str:
    return _conversation(request)[:1500]


class Summarizer:
    """Summary calls: the first ``first`` (``FIRST``), then ``bad`` for the calls ``bad_calls``."""

    def __init__(self, bad: Reply, bad_calls: Callable[[int], bool]) -> None:
        self.bad = bad
        self.bad_calls = bad_calls
        self.first: Reply = lambda request: FIRST
        self.requests: list[LlmRequest] = []

    def __call__(self, request: LlmRequest) -> Any:
        if request.purpose != "summary":
            return "Noted."
        self.requests.append(request)
        number = len(self.requests)
        if number == 1:
            return self.first(request)
        return self.bad(request) if self.bad_calls(number) else _good(request)


async def _run(
    summarizer: Summarizer,
    turns: int = 16,
    config: SummaryConfig = CONFIG,
    text: Callable[[int], str] = _words,
) -> tuple[AgentSession, Recorder]:
    recorder = Recorder()
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=summarizer))
        .store(InMemoryStore())
        .load_plugins(True)
        .plugin(recorder)
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(AGENT, "gate", bundle, FocusedConfig())
    for number in range(turns):
        await session.submit_turn(text(number))
    return session, recorder


def _never_bad(summaries: list[str]) -> None:
    assert all(summary == FIRST or "Later:" in summary for summary in summaries)
    assert not any("User:" in summary for summary in summaries)  # no echo ever applied
    assert not any(summary.endswith("the user asked") for summary in summaries)  # nor a cut one


@pytest.mark.parametrize(
    ("bad", "verdict", "route"),
    [
        (_copy, "copy", "resummary"),
        (_cut, "truncated", "higher_cap"),
        (_echo, "echo", "smaller_input"),
    ],
    ids=["copy-of-previous", "stopped-at-cap", "echo-of-transcript"],
)
async def test_a_refused_summary_is_retried_by_another_route_and_the_retry_applied(
    bad: Reply, verdict: str, route: str
) -> None:
    summarizer = Summarizer(bad, lambda number: number == 2)
    session, recorder = await _run(summarizer)
    first, second, *_ = recorder.applied
    assert first.summary == FIRST
    assert recorder.errors == []  # the retry made the summary: no failed attempt
    _never_bad([info.summary for info in recorder.applied])
    quality = second.quality
    assert quality is not None
    assert (quality.verdict, quality.route, quality.attempts) == ("kept", route, 2)
    assert quality.refused == (verdict,)
    assert "Later:" in second.summary
    # Every call of the summary is paid for: the refused one and the retry's.
    calls = summarizer.requests[1 : 1 + 1 + (2 if route == "resummary" else 1)]
    bad_request, *retry = calls
    assert second.usage is not None
    assert second.usage.input_tokens == sum(count_tokens(call.messages) for call in calls)
    if route == "higher_cap":
        assert bad_request.max_tokens is not None
        assert retry[0].max_tokens == 2 * bad_request.max_tokens
    elif route == "smaller_input":
        assert len(_conversation(retry[0])) < len(_conversation(bad_request))
    else:  # resummary: the new messages alone, then merged with the previous summary
        assert FIRST in bad_request.messages[-1].text
        assert FIRST not in retry[0].messages[-1].text
        merge = retry[1].messages[-1].text
        assert FIRST in merge and "(the new messages)" in _conversation(retry[1])
    final = await get_conversation_summary(session)
    assert final is not None and "Later:" in final


async def test_a_cap_the_user_set_is_never_raised() -> None:
    """With ``max_summary_tokens`` given, a reply stopped at it is retried on less input."""
    summarizer = Summarizer(_cut, lambda number: number == 2)
    capped = attrs.evolve(CONFIG, max_summary_tokens=120)
    _, recorder = await _run(summarizer, config=capped)
    assert all(
        request.max_tokens is not None and request.max_tokens <= 120
        for request in summarizer.requests
    )
    second = recorder.applied[1]
    assert second.quality is not None
    assert (second.quality.route, second.quality.refused) == ("smaller_input", ("truncated",))


@pytest.mark.parametrize(
    ("bad", "verdict", "routes", "calls"),
    [(_cut, "truncated", 3, 3), (_echo, "echo", 2, 2)],
    ids=["stopped-at-cap", "echo-of-transcript"],
)
async def test_when_every_route_is_refused_the_attempt_fails_and_backs_off(
    bad: Reply, verdict: str, routes: int, calls: int
) -> None:
    summarizer = Summarizer(bad, lambda number: number >= 2)
    session, recorder = await _run(summarizer, turns=20)
    assert [info.summary for info in recorder.applied] == [FIRST]  # nothing bad applied
    assert len(recorder.errors) >= 3
    for _, error in recorder.errors:
        assert isinstance(error, SummaryRejectedError)
        assert "summary refused" in str(error)
        assert error.quality.verdict == verdict and error.quality.attempts == routes
    # An attempt's first request (a chunked backlog: up to max_summary_calls_per_turn
    # calls) is followed by at most MAX_EXTRA_CALLS more.
    assert calls <= 1 + MAX_EXTRA_CALLS
    most = CONFIG.max_summary_calls_per_turn + MAX_EXTRA_CALLS
    assert calls * len(recorder.errors) <= len(summarizer.requests) - 1
    assert len(summarizer.requests) - 1 <= most * len(recorder.errors)
    turns = [turn for turn, _ in recorder.errors]
    gaps = [turns[i + 1] - turns[i] for i in range(len(turns) - 1)]
    assert gaps == [backoff_turns(n) for n in range(1, len(turns))]
    assert await get_conversation_summary(session) == FIRST


async def test_a_copy_the_retry_gives_again_is_applied_and_covers_the_new_messages() -> None:
    """A summarizer that finds nothing to add, asked afresh, does not leave messages out."""
    summarizer = Summarizer(_copy, lambda number: number >= 2)
    session, recorder = await _run(summarizer, turns=20)
    assert recorder.errors == []  # no failed attempt, so no backoff and no degraded turn
    _, *copies = recorder.applied
    assert copies, "the copies were applied"
    for info in copies:
        assert info.summary == FIRST
        assert info.quality is not None
        assert (info.quality.verdict, info.quality.route) == ("copy", "resummary")
        assert (info.quality.attempts, info.quality.refused) == (2, ("copy",))
    # Each copy was asked for twice before it stood: the update, then the resummary's two
    # calls (the new messages alone, then merged with the previous summary).
    assert len(summarizer.requests) == 1 + 3 * len(copies)
    # What the copies cover is no longer sent: the slot covers up to the last applied one.
    covers = [info.covers for info in recorder.applied]
    assert covers == sorted(covers) and covers[-1] > covers[0]
    slot = await session.get_slot()
    assert slot.config.focused is not None
    assert slot.config.focused.summary_covers == covers[-1]
    assert await get_conversation_summary(session) == FIRST


async def test_an_applied_summary_carries_its_quality_record() -> None:
    _, recorder = await _run(Summarizer(_good, lambda number: False))
    first, *later = recorder.applied
    assert first.quality is not None and first.quality.verdict == "kept"
    assert first.quality.stop_reason == "end_turn" and first.quality.overlap_with_previous == 0.0
    assert (first.quality.route, first.quality.attempts, first.quality.refused) == ("update", 1, ())
    kept = later[-1].quality
    assert kept is not None and kept.verdict == "kept"
    assert "/srv/app" in kept.identifiers_kept and kept.identifiers_lost == ()


async def test_the_full_strategy_retries_an_echo_with_the_newest_half_of_its_input() -> None:
    summarizer = Summarizer(_echo, lambda number: number == 2)
    recorder = Recorder()
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=summarizer))
        .store(InMemoryStore())
        .load_plugins(True)
        .plugin(recorder)
        .setting("summary_config", attrs.evolve(CONFIG, strategy="full"))
        .build()
    )
    session = AgentSession(AGENT, "gate-full", bundle, FocusedConfig())
    for number in range(10):
        await session.submit_turn(_words(number))
    assert len(recorder.applied) >= 2
    _never_bad([info.summary for info in recorder.applied])
    quality = recorder.applied[1].quality
    assert quality is not None
    assert (quality.route, quality.refused) == ("smaller_input", ("echo",))
    echoed, retry = summarizer.requests[1:3]
    full, half = _conversation(echoed), _conversation(retry)
    assert len(half) <= len(full) // 2 + 1 and full.endswith(half[-200:])


async def test_a_reply_cut_at_a_cap_the_window_set_is_retried_with_a_smaller_input() -> None:
    # max_summary_tokens 700 in a 2,000-token window: a first request that fills its input
    # budget leaves the reply less than 700 tokens, so no higher cap fits the same input.
    summarizer = Summarizer(_cut, lambda number: False)
    summarizer.first = _cut  # the very first summary call is cut
    config = SummaryConfig(
        max_context_tokens=2000,
        max_summary_tokens=700,
        trigger_token_ratio=0.8,
        debounce_turns=1,
        strategy="incremental",
        retention_check="off",
    )
    recorder = Recorder()
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=summarizer))
        .store(InMemoryStore())
        .load_plugins(True)
        .plugin(recorder)
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(AGENT, "gate-window", bundle, FocusedConfig())
    for number in range(12):
        await session.submit_turn(_words(number))
    cut, retry = summarizer.requests[:2]
    assert cut.max_tokens is not None and cut.max_tokens < 700  # the window set the cap
    quality = recorder.applied[0].quality
    assert quality is not None
    assert (quality.route, quality.refused) == ("smaller_input", ("truncated",))
    assert retry.max_tokens == 700 and len(_conversation(retry)) < len(_conversation(cut))


def test_an_extract_of_fact_sentences_is_kept_and_a_stretch_copied_back_is_an_echo() -> None:
    """A faithful extract copies the input's sentences word for word, skipping what lies between."""
    from agentcore_autosummary.judging.gate import judge

    facts = [
        "The staging database now runs on PostgreSQL 16 with a 512 MB shared buffer pool.",
        "The release train leaves every second Tuesday at nine in the morning UTC.",
        "Invoices older than ninety days move to the archive bucket on the first of the month.",
    ]
    messages = []
    for number, fact in enumerate(facts):
        messages.append(Message.user(_words(number)))
        messages.append(Message.user(fact))
        messages.append(Message.assistant(_words(number + 10)))
    extract = " ".join(facts)
    assert judge(extract, None, messages, "end_turn").verdict == "kept"
    stretch = "\n".join(message.text for message in messages[:4])
    assert judge(stretch, None, messages, "end_turn").verdict == "echo"


@settings(max_examples=200)
@given(
    st.lists(st.sampled_from(["alpha", "Beta", "gamma", "delta", "7", "ß", "node"]), max_size=60),
    st.lists(st.integers(min_value=0, max_value=59), max_size=30),
)
def test_the_echoed_share_is_the_share_of_eight_word_runs_found_in_the_input(
    words: list[str], picks: list[int]
) -> None:
    """``echoed_share`` is the share of the summary's 8-word runs also found in the transcript."""
    from agentcore_autosummary.judging.gate import judge
    from agentcore_autosummary.requesting.formatting import format_message

    message = Message.user(" ".join(words) or "empty")
    summary = " ".join(words[pick] for pick in picks if pick < len(words)) + " " + " ".join(words)
    folded = [w.casefold() for w in re.findall(r"\w+", summary)]
    source = [w.casefold() for w in re.findall(r"\w+", format_message(message, 500))]
    runs = {tuple(folded[i : i + 8]) for i in range(len(folded) - 7)}
    found = {tuple(source[i : i + 8]) for i in range(len(source) - 7)}
    expected = len(runs & found) / len(runs) if runs else 0.0
    quality = judge(summary, None, [message], "end_turn")
    assert quality.echoed_share == round(expected, 3)


@given(
    st.text(
        st.one_of(st.sampled_from("aZ09_ \t\n\x1c\x1f.,'-ßİé½\u3000"), st.characters()),
        max_size=40,
    )
)
@example("Straße, the İstanbul office; v2_beta (ok)")
@example("tab\there\x1fand\x0bthere")
def test_words_are_the_runs_of_word_characters_of_the_folded_text(text: str) -> None:
    # The ASCII spelling of the word list must give what the pattern gives.
    assert folded_words(text) == re.findall(r"\w+", text.casefold())


async def test_a_copy_of_the_written_summary_is_seen_as_one_when_quotes_follow_it() -> None:
    """The copy check reads the previous summary as the summarizer was shown it: no quotes."""
    summarizer = Summarizer(_copy, lambda number: number >= 2)
    config = attrs.evolve(CONFIG, retention_check="quote")

    def text(number: int) -> str:
        return f"We moved build {number} to port {9000 + number}. {_words(number)}"

    session, recorder = await _run(summarizer, config=config, text=text)
    _, *copies = recorder.applied
    summary = await get_conversation_summary(session)
    assert summary is not None and summary != FIRST  # quotes follow the written part
    assert copies, "later summaries were applied"
    for info in copies:
        assert info.quality is not None
        assert info.quality.verdict == "copy" and "copy" in info.quality.refused
