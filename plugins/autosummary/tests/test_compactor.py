"""The compactor: the plugin's summaries over a message list an app keeps itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from summary_helpers import summary_parts

from agentcore import (
    ConfigError,
    ContextWindowExceededError,
    LlmError,
    LlmRequest,
    Message,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from agentcore.budget import reply_reservation
from agentcore.formats import from_anthropic, from_openai
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary import (
    CORRECTION_KEY,
    Compaction,
    Compactor,
    CompactorState,
    SummaryConfig,
    unfence_summary,
)

WINDOW = 2048
COUNTER = get_token_counter(None)
GUIDE = Path(__file__).resolve().parents[3] / "docs" / "compactor.md"
WORDS = ["apple", "river", "stone", "cloud", "green", "table", "music", "light"]


def text(words: int, seed: int) -> str:
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(words))


class Summarizer:
    """A fake model for summary calls: a new summary each time; it records every request size."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.sizes: list[int] = []
        self.provider = MockProvider(responder=self.respond)

    def respond(self, request: LlmRequest) -> str:
        size = COUNTER.count_messages(request.messages) + COUNTER.count_tools(request.tools)
        self.sizes.append(size + reply_reservation(request.max_tokens, WINDOW))
        if self.fail:
            raise LlmError("the summarizer is down")
        number = len(self.sizes)
        return f"Summary {number}: the talk covered {text(6 + number % 5, number)}."


def request_size(sent: list[Message], tools: tuple[ToolSpec, ...] = ()) -> int:
    """A request's size as a server with agentcore's tokenizer counts it, reply reserved."""
    return (
        COUNTER.count_messages(sent) + COUNTER.count_tools(tools) + reply_reservation(None, WINDOW)
    )


def compactor(summarizer: Summarizer, **kwargs: Any) -> Compactor:
    return Compactor(summarizer.provider, SummaryConfig(max_context_tokens=WINDOW), **kwargs)


async def test_a_300_turn_openai_conversation_stays_inside_the_window() -> None:
    summarizer = Summarizer()
    compact = compactor(summarizer)
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    stored: Any = None
    sizes = []
    for turn in range(300):
        history.append({"role": "user", "content": f"question {turn}: {text(30, turn)}"})
        state = None if stored is None else CompactorState.from_json(json.loads(stored))
        result = await compact.compact(history, state)
        stored = json.dumps(result.state.to_json())  # the app stores the state as JSON
        sizes.append(request_size(from_openai(result.messages)))
        assert result.messages[0] == {"role": "system", "content": "Be brief."}
        assert result.messages[-1] == history[-1]  # the new message, verbatim
        history.append({"role": "assistant", "content": f"answer {turn}: {text(25, turn)}"})
    assert max(sizes) <= WINDOW
    assert max(summarizer.sizes) <= WINDOW  # the summary requests too
    assert len(summarizer.sizes) >= 10
    final = CompactorState.from_json(json.loads(stored))
    assert final.summary is not None and final.summary.startswith("<summary>\n")
    parts = summary_parts(unfence_summary(final.summary))
    assert parts[-1].startswith("Summary")  # the newest part as the summarizer wrote it
    assert all(part.startswith(("Summary", "- Summary")) for part in parts)  # older: merged
    assert final.covered > 400
    assert final.calls == 300


async def test_the_request_holds_the_summary_then_the_verbatim_tail() -> None:
    summarizer = Summarizer()
    compact = compactor(summarizer)
    history = []
    for turn in range(60):
        history += [Message.user(f"q{turn} {text(40, turn)}"), Message.assistant(text(30, turn))]
    history.append(Message.user("and now?"))
    result = await compact.compact(history)
    assert isinstance(result, Compaction)
    assert result.summarized and result.usage.total_tokens > 0
    assert result.sent[0].text.startswith("[") and "Summary" in result.sent[0].text
    assert result.sources[0] is None  # made by the compaction
    tail = [index for index in result.sources if index is not None]
    assert tail == list(range(result.state.covered, len(history)))  # the tail, in order
    assert result.messages == result.sent  # agentcore messages come back as such
    assert result.left_out == 0
    assert result.tokens <= result.window == WINDOW
    assert request_size(result.sent) <= WINDOW


async def test_a_short_conversation_is_sent_unchanged_and_nothing_is_summarized() -> None:
    summarizer = Summarizer()
    history = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "bye"},
    ]
    result = await compactor(summarizer).compact(history)
    assert result.messages == history
    assert result.sources == (0, 1, 2, 3)
    assert not result.summarized and summarizer.sizes == []
    assert result.state.covered == 0 and result.state.calls == 1


async def test_anthropic_turns_come_back_as_anthropic_turns_with_tool_calls_whole() -> None:
    summarizer = Summarizer()
    turns: list[dict[str, Any]] = []
    for turn in range(40):
        call = f"toolu_{turn}"
        turns += [
            {"role": "user", "content": f"look up {turn}: {text(30, turn)}"},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": call, "name": "lookup", "input": {"n": turn}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call, "content": text(40, turn)}
                ],
            },
            {"role": "assistant", "content": f"found {text(20, turn)}"},
        ]
    turns.append({"role": "user", "content": "summarize what you found"})
    tool = ToolSpec("lookup", "Look a number up.", {"type": "object", "properties": {}})
    result = await compactor(summarizer, tools=(tool,)).compact(
        turns, system_prompt="You look things up."
    )
    assert result.summarized
    assert result.system == "You look things up."
    sent = from_anthropic(result.messages, result.system)
    assert request_size(sent, (tool,)) <= WINDOW
    calls = {block.id for m in sent for block in m.content if isinstance(block, ToolUseBlock)}
    answered = {m.tool_call_id for m in sent if m.role == "tool"}
    assert calls == answered  # no call without its result, no result without its call
    assert sent[-1] == Message.user("summarize what you found")


async def test_the_tool_definitions_given_count_in_every_request() -> None:
    """A request is sized with the tools it carries, below the trigger and past it."""
    tools = tuple(
        ToolSpec(f"tool_{n}", f"Look up {text(30, n)}.", {"type": "object", "properties": {}})
        for n in range(8)
    )
    history: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]
    bare = await compactor(Summarizer()).compact(history)
    armed = await compactor(Summarizer(), tools=tools).compact(history)
    assert armed.tokens - bare.tokens == COUNTER.count_tools(tools)
    summarizer = Summarizer()
    compact = compactor(summarizer, tools=tools)
    state = None
    for turn in range(40):
        history.append({"role": "user", "content": f"question {turn}: {text(40, turn)}"})
        result = await compact.compact(history, state)
        state = result.state
        assert request_size(from_openai(result.messages), tools) <= WINDOW
        history.append({"role": "assistant", "content": f"answer {turn}: {text(30, turn)}"})
    assert summarizer.sizes, "the tools left room for no summary"


async def test_a_failing_summarizer_degrades_to_leaving_the_oldest_out() -> None:
    summarizer = Summarizer(fail=True)
    compact = compactor(summarizer)
    history: list[dict[str, Any]] = []
    state = None
    for turn in range(80):
        history.append({"role": "user", "content": f"q{turn} {text(40, turn)}"})
        result = await compact.compact(history, state)
        state = result.state
        assert request_size(from_openai(result.messages)) <= WINDOW
        history.append({"role": "assistant", "content": text(30, turn)})
    assert result.left_out > 0
    assert result.state.summary is None
    note = [m["content"] for m in result.messages if m["role"] == "system"]
    assert note and f"[{result.left_out} earlier messages" in note[0]
    assert json.loads(json.dumps(result.state.to_json()))["data"]  # the failures are kept


def test_compact_sync_runs_from_plain_code() -> None:
    summarizer = Summarizer()
    compact = compactor(summarizer)
    history = [Message.user(text(40, 0)), Message.assistant("ok")]
    first = compact.compact_sync(history)
    second = compact.compact_sync([*history, Message.user("more")], first.state)
    assert second.state.calls == 2
    assert second.sent[-1] == Message.user("more")


async def test_a_state_of_another_conversation_is_refused() -> None:
    summarizer = Summarizer()
    compact = compactor(summarizer)
    history = []
    for turn in range(60):
        history += [Message.user(f"q{turn} {text(40, turn)}"), Message.assistant(text(30, turn))]
    state = (await compact.compact(history)).state
    assert state.covered > 0
    changed = [Message.user("something else"), *history[1:]]
    with pytest.raises(ConfigError, match="not the ones the state's summary covers"):
        await compact.compact(changed, state)
    with pytest.raises(ConfigError, match=r"covers \d+ messages but the list holds 2"):
        await compact.compact(history[:2], state)


@pytest.mark.parametrize(
    ("messages", "kwargs", "message"),
    [
        ("hello", {}, "messages must be a list of messages, got str"),
        ([Message.user("a"), {"role": "user", "content": "b"}], {}, r"messages\[1\] is a dict"),
        ([42], {}, r"messages\[0\] is a int: expected an agentcore Message"),
        ([{"role": "wizard", "content": "x"}], {}, "unknown role 'wizard'"),
        ([Message.user("a")], {"format": "xml"}, "format must be one of auto, agentcore"),
        ([Message.user("a"), Message.system("b")], {}, r"messages\[1\] is a system message"),
        ([Message.user("a")], {"state": "x"}, "state must be a CompactorState"),
        ([Message.user("a")], {"reserve_tokens": -1}, "reserve_tokens must be an int >= 0"),
        ([Message.user("a")], {"pinned": [3]}, "pinned index 3 names no message"),
        ([Message.user("a")], {"system_prompt": 1}, "system_prompt must be a str or None"),
    ],
)
async def test_bad_input_is_refused_naming_the_problem(
    messages: Any, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await compactor(Summarizer()).compact(messages, **kwargs)


def test_a_damaged_stored_state_is_refused_naming_the_field() -> None:
    with pytest.raises(ConfigError, match="not a stored CompactorState"):
        CompactorState.from_json({"covered": "ten"})
    with pytest.raises(ConfigError, match="not a stored CompactorState"):
        CompactorState.from_json({"covered": 1, "unknown": 2})
    with pytest.raises(ConfigError, match=r"CompactorState.covered must be an int >= 0"):
        CompactorState(covered=-1)
    with pytest.raises(
        ConfigError, match=r"\(CompactorState.covered must be an int >= 0, got -1\)"
    ):
        CompactorState.from_json({"covered": -1})
    with pytest.raises(ConfigError, match="expected the dict of to_json"):
        CompactorState.from_json("covered=1")
    state = CompactorState(summary="s", covered=2, covered_digest="d", calls=3, data={"k": [1]})
    assert CompactorState.from_json(json.loads(json.dumps(state.to_json()))) == state


async def test_reserve_tokens_keeps_room_for_what_the_app_adds() -> None:
    summarizer = Summarizer()
    compact = compactor(summarizer)
    history = []
    for turn in range(10):
        history += [Message.user(f"q{turn} {text(40, turn)}"), Message.assistant(text(30, turn))]
    plain = await compact.compact(history)
    assert not plain.summarized  # under the watermark: sent whole
    reserved = await compact.compact(history, reserve_tokens=1200)
    assert reserved.summarized  # 1,200 more tokens would not fit beside it
    assert request_size(reserved.sent) + 1200 <= WINDOW
    assert reserved.tokens <= WINDOW


async def test_pinned_messages_are_sent_verbatim_with_their_tool_group() -> None:
    summarizer = Summarizer()
    compact = compactor(summarizer)
    call = ToolUseBlock("c1", "lookup", {"n": 1})
    history = [
        Message.user("remember the code word: heron"),
        Message.assistant("", [call]),
        Message.tool_result("c1", "looked up"),
        Message.assistant("noted"),
    ]
    for turn in range(60):
        history += [Message.user(f"q{turn} {text(40, turn)}"), Message.assistant(text(30, turn))]
    history.append(Message.user("what was the code word?"))
    state = None
    for _ in range(2):  # the second call imports the covered messages as stand-ins
        result = await compact.compact(history, state, pinned=[0, 1])
        state = result.state
        assert result.state.covered > 4
        assert {0, 1, 2} <= set(result.sources)  # the pins, and the result of the pinned call
        assert 3 not in result.sources  # not pinned: covered by the summary
        assert request_size(result.sent) <= WINDOW


USAGE_TURNS = 80
USAGE_TRIGGER = 0.5
"""The trigger of the usage scenario (at the default 0.8 more requests go over without usage)."""


async def serve_counting_twice(
    report_usage: bool,
) -> tuple[Compactor, list[dict[str, Any]], CompactorState, list[int]]:
    """80 turns against a server that counts twice what agentcore does.

    Returns the compactor, the history, the last state and each request's size as the
    server counts it (reply reserved). With ``report_usage`` each reply's usage is
    passed back to the next call.
    """
    summarizer = Summarizer()
    compact = Compactor(
        summarizer.provider,
        SummaryConfig(max_context_tokens=WINDOW, trigger_token_ratio=USAGE_TRIGGER),
    )
    history: list[dict[str, Any]] = []
    state = None
    usage = None
    sizes = []
    for turn in range(USAGE_TURNS):
        history.append({"role": "user", "content": f"q{turn} {text(40, turn)}"})
        result = await compact.compact(history, state, usage=usage)
        state = result.state
        served = COUNTER.count_messages(from_openai(result.messages)) * 2
        sizes.append(served + reply_reservation(None, WINDOW))
        if report_usage:
            usage = Usage(served, 30)
        history.append({"role": "assistant", "content": text(30, turn)})
    assert state is not None  # the loop ran
    return compact, history, state, sizes


async def test_the_reported_usage_teaches_how_the_server_counts() -> None:
    compact, history, state, sizes = await serve_counting_twice(report_usage=True)
    assert max(sizes) <= WINDOW  # sized in the server's tokens once it reported them
    assert CORRECTION_KEY in state.data  # learned, and kept in the state
    assert state.sent_tokens is not None
    *_, unreported = await serve_counting_twice(report_usage=False)
    assert max(unreported) > WINDOW  # without the usage, the same turns go over
    with pytest.raises(ConfigError, match="usage must be an agentcore Usage"):
        await compact.compact(history, state, usage={"input_tokens": 5})  # type: ignore[arg-type]


async def test_the_compactor_guide_quotes_the_usage_figures() -> None:
    *_, reported = await serve_counting_twice(report_usage=True)
    *_, unreported = await serve_counting_twice(report_usage=False)
    over = sum(size > WINDOW for size in unreported)
    expected = (
        f"with `trigger_token_ratio={USAGE_TRIGGER}`, {USAGE_TURNS} turns went out with "
        f"{sum(size > WINDOW for size in reported)} requests over {WINDOW:,} of its tokens "
        f"(the largest {max(reported):,}) when each reply's usage was passed back, and "
        f"{over} over (the largest {max(unreported):,}) when it was not"
    )
    guide = " ".join(GUIDE.read_text("utf-8").split())
    assert expected in guide, f"docs/compactor.md should say: {expected!r}"


async def test_the_log_lines_name_the_callers_list_not_an_internal_session(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("INFO", logger="agentcore")
    summarizer = Summarizer(fail=True)
    compact = compactor(summarizer)
    history: list[dict[str, Any]] = []
    state = None
    for turn in range(40):
        history.append({"role": "user", "content": f"q{turn} {text(40, turn)}"})
        state = (await compact.compact(history, state)).state
        history.append({"role": "assistant", "content": text(30, turn)})
    failed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("summary failed")]
    assert failed, "no summary failure was logged"
    assert all(line.startswith("summary failed (the message list of ") for line in failed)
    assert "compaction-" not in caplog.text
    lines = [record.getMessage() for record in caplog.records]
    assert not [line for line in lines if "turn=" in line or " turn " in line]


async def test_a_turn_in_flight_larger_than_the_window_is_refused_naming_the_list() -> None:
    compact = compactor(Summarizer())
    history = [{"role": "user", "content": text(3000, 1)}]
    with pytest.raises(ContextWindowExceededError) as info:
        await compact.compact(history)
    message = str(info.value)
    assert message.startswith("the message list of 1 message cannot fit the window")
    assert "stored" not in message and "session" not in message
    assert info.value.limit_tokens == WINDOW
    assert info.value.requested_tokens is not None and info.value.requested_tokens > WINDOW
