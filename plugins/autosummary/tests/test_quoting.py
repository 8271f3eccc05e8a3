"""``retention_check="quote"``: what a summary left out comes back as verbatim sentences.

A small summarizer drops facts and keeps values the conversation changed
later. With the quote check, the sentences that state the identifiers a
summary left out follow it, newest value last, never a superseded one; tool
output is not quoted; the summary and its quotes stay within its cap; and a summary
that loses identifiers of the previous one is not refused for it (they are
quoted back).
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from summary_helpers import summary_parts

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    Message,
    TextBlock,
    ToolUseBlock,
    TurnContext,
    hookimpl,
)
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary import SummaryConfig, get_conversation_summary
from agentcore_autosummary.judging import quoting
from agentcore_autosummary.judging.quoting import QUOTED, quote_missing
from agentcore_autosummary.text.sentences import is_statement, sentences

COUNTER = get_token_counter(None)

DECISIONS = [
    Message.user(
        "Infrastructure decisions: the database will be MySQL 8, because the ops team "
        "knows it well. The staging cluster is stg-harbor-03."
    ),
    Message.assistant(
        "Understood: the database is MySQL 8 and the staging cluster is stg-harbor-03."
    ),
    Message.user("The rate limit is 5,000 requests per minute per key."),
    Message.assistant("Recorded: the rate limit is 5,000 requests per minute per key."),
    Message.user("Change of plan: the database is now PostgreSQL 16, for row-level security."),
    Message.user("The gateway cannot keep up: the rate limit is now 2,500 requests per minute."),
]


def _quotes(text: str) -> list[str]:
    assert QUOTED in text
    return [line[2:] for line in text.split(QUOTED, 1)[1].splitlines() if line.startswith("- ")]


def _fact_lines(summary: str) -> list[str]:
    """The lines of ``summary`` that state :data:`FACT`."""
    return [line for line in summary.splitlines() if FACT in line]


def test_the_sentences_of_what_the_summary_left_out_follow_it_newest_last() -> None:
    summary = "The team chose its infrastructure. The database is MySQL 8."
    quoted = quote_missing(summary, None, DECISIONS, COUNTER, 256)
    assert quoted.startswith(summary + "\n\n" + QUOTED)
    lines = _quotes(quoted)
    # The new database and rate limit come after anything that still names the old ones.
    assert lines[-2:] == [DECISIONS[4].text, DECISIONS[5].text]
    # The cluster is quoted once, from the newest sentence that states it.
    assert [line for line in lines if "stg-harbor-03" in line] == [DECISIONS[1].text]
    # A value changed later is never quoted for its own sake.
    assert not any(line == DECISIONS[2].text or line == DECISIONS[3].text for line in lines)


def test_nothing_is_quoted_when_the_summary_holds_every_identifier() -> None:
    summary = (
        "The database is PostgreSQL 16 (it was MySQL 8); staging is stg-harbor-03; the rate "
        "limit is 2,500 requests per minute per key (it was 5,000)."
    )
    assert quote_missing(summary, None, DECISIONS, COUNTER, 256) == summary


def test_tool_output_is_not_quoted_and_the_quotes_keep_to_their_budget() -> None:
    messages = [
        Message.user("Run the tests."),
        Message.assistant("Running them.", [ToolUseBlock("call_1", "run", {"cmd": "pytest"})]),
        Message.tool_result("call_1", "FAILED tests/test_lexer.py::test_escape at 0x7f3a"),
        *DECISIONS,
    ]
    quoted = quote_missing("The tests ran.", None, messages, COUNTER, 40)
    assert "test_lexer" not in quoted
    lines = _quotes(quoted)
    assert COUNTER.count_text(quoted) <= 40  # the summary and its quotes, within their room
    assert lines[-1] == DECISIONS[5].text  # the newest sentence is kept first


def test_quotes_the_summarizer_copied_are_made_again_without_superseded_values() -> None:
    previous = quote_missing("Kick-off.", None, DECISIONS[:4], COUNTER, 256)
    assert "MySQL 8" in previous and "5,000" in previous
    # The next summary copies the previous one, quotes included; the new messages change both.
    quoted = quote_missing(previous, previous, DECISIONS[4:], COUNTER, 256)
    assert quoted.count(QUOTED) == 1
    lines = _quotes(quoted)
    assert lines[-2:] == [DECISIONS[4].text, DECISIONS[5].text]


FACT = "The customer's order number is ORD-58213 and the refund is 89.50 dollars."


def test_only_statements_are_quoted_not_questions_code_or_log_lines() -> None:
    messages = [
        Message.user("Which port is it, 8443?"),
        Message.user("Here is the config of build-07:"),
        Message.assistant("total = sum(row['port'] for row in rows) + 9000"),
        Message.assistant("2024-06-11T10:08:50Z INFO service=api latency_ms=217 msg=slow"),
        Message.assistant("return compute_total(total, limit) / 17"),
        Message.assistant("Deploys go to host build-07 on port 8443."),
    ]
    quoted = quote_missing("The team talked about deploys.", None, messages, COUNTER, 256)
    assert _quotes(quoted) == ["Deploys go to host build-07 on port 8443."]


def test_a_sentence_with_a_superseded_value_is_quoted_by_its_live_clauses_only() -> None:
    messages = [
        Message.assistant(
            "Noted: the Python version in CI is 3.11, the branch is fix/unicode-escape-214, "
            "and the CI timeout is 30 minutes."
        ),
        Message.user("The Python version is now 3.12 in every job."),
        Message.user("The CI timeout is now 45 minutes."),
    ]
    quoted = quote_missing("The team fixed a lexer bug.", None, messages, COUNTER, 256)
    assert _quotes(quoted) == [
        "the branch is fix/unicode-escape-214",
        "The Python version is now 3.12 in every job.",
        "The CI timeout is now 45 minutes.",
    ]


def test_the_sentence_that_gives_the_value_is_quoted_before_one_that_mentions_it() -> None:
    messages = [
        Message.assistant(
            "Updated: the Python version is now 3.12 in every CI job. I will check the "
            "deprecation warnings that 3.12 adds."
        )
    ]
    quoted = quote_missing("The team fixed a lexer bug.", None, messages, COUNTER, 256)
    assert _quotes(quoted) == ["Updated: the Python version is now 3.12 in every CI job."]


def test_a_value_of_the_previous_summary_the_new_one_changed_is_not_quoted_back() -> None:
    previous = "- 数据库用PostgreSQL\n- 上线日期定在6月3日，预算是15万元（含三个月运维）"
    messages = [Message.user("代码评审有什么要注意的？")]
    quoted = quote_missing("上线日期定在6月17日。", previous, messages, COUNTER, 256)
    assert _quotes(quoted) == ["数据库用PostgreSQL", "预算是15万元（含三个月运维）"]


async def _run(responder: Any, config: SummaryConfig, turns: int, *plugins: object) -> AgentSession:
    """A session that states FACT, then asks ``turns`` filler questions."""
    builder = (
        AgentBuilder()
        .provider(MockProvider(responder=responder))
        .store(InMemoryStore())
        .load_plugins(True)
    )
    for plugin in plugins:
        builder.plugin(plugin)
    session = AgentSession(
        Agent("assistant"),
        "quote",
        builder.setting("summary_config", config).build(),
        FocusedConfig(),
    )
    await session.submit_turn(FACT)
    for number in range(turns):
        await session.submit_turn(f"Filler question {number}: " + "more words here " * 10)
    return session


async def test_a_session_with_a_forgetful_summarizer_keeps_the_fact_verbatim() -> None:
    """Through the public API: the applied summary carries the sentence the model dropped."""
    calls: list[LlmRequest] = []

    def responder(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        calls.append(request)
        return f"Summary {len(calls)}: the user talked about an order and a refund."

    config = SummaryConfig(
        max_context_tokens=1500,
        trigger_token_ratio=0.3,
        debounce_turns=1,
        retention_check="quote",
    )
    session = await _run(responder, config, 30)
    summary = await get_conversation_summary(session)
    assert calls and summary is not None
    # The quotes may take half the cap beyond it: the window is planned for that.
    assert config.summary_room == config.summary_tokens + config.summary_tokens // 2
    # The newest reply stands as written, its quotes after it.
    assert any(part.startswith(f"Summary {len(calls)}:") for part in summary_parts(summary))
    assert _fact_lines(summary) == [f"- {FACT}"]  # quoted, or kept by a part merged since
    context = await session.load_messages()
    assert FACT in context[0].text or any(FACT in m.text for m in context)


async def test_lost_identifiers_do_not_refuse_a_summary_when_they_are_quoted_back() -> None:
    from agentcore_autosummary.judging.gate import judge

    previous = "Deploys go to /srv/app on port 8443 with release v2.1 from host build-07."
    messages = [Message.user("We talked about lunch."), Message.assistant("Sounds good.")]
    summary = "The user talked about lunch."
    assert judge(summary, previous, messages, "end_turn").verdict == "lost"
    quality = judge(summary, previous, messages, "end_turn", lost_refuses=False)
    assert quality.verdict == "kept" and len(quality.identifiers_lost) >= 2


async def test_the_summarizer_is_shown_the_previous_summary_without_its_quotes() -> None:
    """A small model asked to update a summary copies its quotes and runs into its cap."""
    calls: list[LlmRequest] = []

    def responder(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        calls.append(request)
        return f"Summary {len(calls)}: the user talked about an order."

    config = SummaryConfig(
        max_context_tokens=1500,
        trigger_token_ratio=0.3,
        debounce_turns=1,
        strategy="incremental",
        retention_check="quote",
        request_shape="transcript",
    )
    session = await _run(responder, config, 30)
    assert len(calls) >= 2
    summary = await get_conversation_summary(session)
    assert summary is not None and _quotes(summary) == [FACT]  # stored with its quotes
    second = calls[1].messages[-1].text
    assert "Summary 1: the user talked about an order." in second
    assert QUOTED not in second


async def _first_applied(responder: Any, **fields: Any) -> tuple[Any, list[LlmRequest]]:
    """The first summary applied in a quote session of ``responder``, and its summary calls."""
    from agentcore_autosummary import SummaryInfo

    applied: list[SummaryInfo] = []
    calls: list[LlmRequest] = []

    class Recorder:
        @hookimpl
        def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
            applied.append(summary)

    def recording(request: LlmRequest) -> Any:
        if request.purpose == "summary" and not applied:
            calls.append(request)
        return responder(request)

    config = SummaryConfig(
        max_context_tokens=1500,
        max_summary_tokens=160,
        trigger_token_ratio=0.3,
        debounce_turns=1,
        retention_check="quote",
        request_shape="transcript",
        **fields,
    )
    await _run(recording, config, 12, Recorder())
    assert applied
    return applied[0], calls


async def test_a_reply_cut_at_its_cap_is_applied_up_to_its_last_sentence_without_a_retry() -> None:
    """Degrade, never ask again: with quotes, a cut summary keeps its whole sentences."""
    from agentcore import LlmResponse

    def responder(request: LlmRequest) -> str | LlmResponse:
        if request.purpose != "summary":
            return "Noted."
        cut = "The user asked about an order. Then the user went on to say that the"
        return LlmResponse(Message.assistant(cut), stop_reason="max_tokens")

    first, calls = await _first_applied(responder)
    assert first.quality is not None
    assert (first.quality.verdict, first.quality.attempts) == ("truncated", 1)
    assert len(calls) == 1  # no retry paid for the whole input again
    assert first.summary.startswith("The user asked about an order.\n\n" + QUOTED)
    assert "went on to say" not in first.summary
    assert _quotes(first.summary) == [FACT]


async def test_a_cut_reply_that_echoes_the_transcript_is_still_asked_for_again() -> None:
    """Trimming never lets through what the gate refuses: a copied transcript is retried."""
    from agentcore import LlmResponse

    asked = 0

    def responder(request: LlmRequest) -> str | LlmResponse:
        nonlocal asked
        if request.purpose != "summary":
            return "Noted."
        asked += 1
        if asked > 1:
            return "The user asked about an order."
        lines = request.messages[-1].text.splitlines()
        echoed = "\n".join(line for line in lines if line.startswith(("User:", "Assistant:")))
        return LlmResponse(Message.assistant(echoed + "\nUser: and then"), stop_reason="max_tokens")

    first, calls = await _first_applied(responder, strategy="incremental")  # its retry routes
    assert first.quality is not None
    assert first.quality.attempts >= 2 and len(calls) >= 2
    assert "User:" not in first.summary


async def test_a_summary_its_quotes_would_not_let_shrink_is_applied_without_them() -> None:
    """Degrade, never refuse: quotes are dropped before a summary is."""
    from agentcore_autosummary import compact

    def responder(request: LlmRequest) -> str:
        return "They talked about servers." if request.purpose == "summary" else "Noted."

    config = SummaryConfig(max_context_tokens=4000, keep_recent_tokens=0)
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=responder))
        .store(InMemoryStore())
        .load_plugins(True)
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(Agent("assistant"), "short", bundle, FocusedConfig())
    await session.submit_turn("The server srv-001 listens on port 8001 in rack R7 of hall B2.")
    await session.submit_turn("Thanks.")
    result = await compact(session)  # the quote of the first message would outgrow it
    assert result.summary == "They talked about servers."
    assert await get_conversation_summary(session) == "They talked about servers."


def test_sentences_a_summary_repeats_are_dropped_before_quoting() -> None:
    """A small model writes a list item twice; the repeat would be sent with every turn."""
    summary = (
        "**Summary:**\n\n- 数据库用PostgreSQL\n- 客户追加了两个报表，预算调整为15万元。\n"
        "- 测试环境是test-cn-02\n- 客户追加了两个报表，预算调整为15万元。\n\n"
        "The user asked about the lexer. The fix works. The user asked about the lexer."
    )
    quoted = quote_missing(summary, None, [Message.user("预算调整为15万元。")], COUNTER, 256)
    assert quoted == (
        "**Summary:**\n\n- 数据库用PostgreSQL\n- 客户追加了两个报表，预算调整为15万元。\n"
        "- 测试环境是test-cn-02\n\nThe user asked about the lexer. The fix works."
    )


def test_only_the_newest_sentences_are_looked_at(monkeypatch: Any) -> None:
    """A summary of the whole history (strategy="full") does not read every sentence."""
    from agentcore_autosummary.judging import quoting

    monkeypatch.setattr(quoting, "MAX_SENTENCES", 2)
    messages = [
        Message.user("The staging cluster is stg-harbor-03."),
        Message.user("The database is PostgreSQL 16."),
        Message.user("The rate limit is 2,500 requests per minute."),
    ]
    quoted = quote_missing("The team chose its infrastructure.", None, messages, COUNTER, 256)
    assert _quotes(quoted) == [messages[1].text, messages[2].text]


def test_a_value_written_before_its_subject_is_not_quoted_once_the_summary_changed_it() -> None:
    previous = "- Dana Whitfield as project lead\n- April 14 launch date"
    messages = [Message.user("Which risks go into the report?")]
    summary = "The launch moves: the launch date is now May 5."
    quoted = quote_missing(summary, previous, messages, COUNTER, 256)
    assert _quotes(quoted) == ["Dana Whitfield as project lead"]


async def test_quotes_are_the_default() -> None:
    """Without a retention_check of its own, a session quotes what its summary left out."""

    def responder(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        return "Summary: the user talked about an order and a refund."

    config = SummaryConfig(max_context_tokens=1500, trigger_token_ratio=0.3, debounce_turns=1)
    session = await _run(responder, config, 30)
    summary = await get_conversation_summary(session)
    assert summary is not None and _fact_lines(summary) == [f"- {FACT}"]


# -- the sentence cuts and the statement test, against their regular-expression spelling --

_SENTENCE_TEXT = st.text(
    st.one_of(
        st.sampled_from(".!?;。！？；\n\n \t\r\x0b\x85\u3000-  -abcé’'\"(),:1_=x"),
        st.characters(),
    ),
    max_size=60,
)


def _sentences_by_regex(text: str) -> list[str]:
    # How the quotes' sentences were cut by one regular expression: the reference.
    out = []
    for part in re.split(r"(?<=[.!?;])\s+|\n+|(?<=[。！？；])", text):
        part = re.sub(r"^- ", "", part.strip()).rstrip(";；").rstrip()
        if part:
            out.append(part)
    return out


def _is_statement_by_regex(sentence: str) -> bool:
    if sentence.endswith(("?", "？", ":", "：")) or re.search(r"[=\{\}\[\]`|<>]", sentence):
        return False
    if re.search(r"[\u3400-\u9fff]", sentence):
        return True
    words = sentence.split()
    word = re.compile(r"^[(\"']?[^\W\d_]+(?:[-'’][^\W\d_]+)*[.,;:!?)\"']*$")
    plain = sum(1 for each in words if word.match(each))
    return plain >= 3 and 2 * plain >= len(words)


@given(_SENTENCE_TEXT)
@example("a.\n\n- b;  c。d！\n\ne? f")
@example("。。 \n")
@example("Quoted from the conversation:\n- x. y")
def test_sentences_are_cut_as_the_regular_expression_cuts_them(text: str) -> None:
    assert sentences(text) == _sentences_by_regex(text)


_WORDS = st.lists(
    st.one_of(
        st.sampled_from(["the", "état", "it's", "v2", "x_y", "(so", "well,", "3.12", "½", "Ⅻ"]),
        st.text(st.sampled_from("ab1_'’-.,(\"é½"), min_size=1, max_size=6),
    ),
    max_size=8,
).map(" ".join)


@given(st.one_of(_SENTENCE_TEXT, _WORDS))
@example("The ops team knows MySQL well, it's fine.")
@example("v2 x3 y4 and ok")
@example("état café naïve")
@example(".so .we .go")  # a mark that opens no word: not plain
@example("(so \"we 'go")
@example("( \" ' so, we! go)")
def test_a_statement_is_told_as_the_regular_expression_tells_it(sentence: str) -> None:
    assert is_statement(sentence) == _is_statement_by_regex(sentence)


def _newest_by_message(messages: list[Message], cap: int) -> list[str]:
    # The reference: each message's own sentences (what the user or the assistant wrote),
    # newest message first until the cap is reached, then oldest first.
    newest: list[list[str]] = []
    count = 0
    for message in reversed(messages):
        written = ""
        if message.role in ("user", "assistant"):
            written = "\n".join(
                block.text for block in message.content if isinstance(block, TextBlock)
            )
        parts = sentences(written)
        newest.append(parts)
        count += len(parts)
        if count >= cap:
            break
    return [part for parts in reversed(newest) for part in parts]


_CONVERSATION = st.lists(
    st.tuples(st.sampled_from(["user", "assistant", "tool"]), _SENTENCE_TEXT), max_size=150
).map(
    lambda pairs: [
        Message.tool_result("call_1", text)
        if role == "tool"
        else Message.user(text)
        if role == "user"
        else Message.assistant(text, [ToolUseBlock("call_1", "look", {})] if text else [])
        for role, text in pairs
    ]
)


@given(_CONVERSATION, st.sampled_from([1, 7, 40, quoting.MAX_SENTENCES]))
def test_the_quotes_read_each_message_s_sentences_up_to_the_cap(
    messages: list[Message], cap: int
) -> None:
    # The quotes cut a group of messages at once: the same sentences as message by message.
    kept = quoting.MAX_SENTENCES
    quoting.MAX_SENTENCES = cap
    try:
        assert quoting._newest_sentences(messages) == _newest_by_message(messages, cap)
    finally:
        quoting.MAX_SENTENCES = kept
