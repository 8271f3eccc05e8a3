"""Summary requests sized from stored counts: counted once, within the window, lazy on a backlog."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    Message,
    SlotConfig,
    ToolUseBlock,
)
from agentcore._slot_config_json import config_to_json
from agentcore.messages import token_counts
from agentcore.stores import MessageAppend, StoreWrite
from agentcore.testing import MockProvider
from agentcore.tokens import TokenCounter, get_token_counter
from agentcore_autosummary import SummaryConfig, format_message
from agentcore_autosummary.calling.summarizer import (
    SummaryFailedError,
    SummaryFit,
    request_summary,
)
from agentcore_autosummary.deciding.planner import plan_chunks
from agentcore_autosummary.deciding.token_correction import TokenCorrection
from agentcore_autosummary.requesting.prefix_requests import instruction_message, prefix_instruction
from agentcore_autosummary.requesting.prompt import DEFAULT_SUMMARY_PROMPT
from agentcore_autosummary.requesting.sent import position_of
from agentcore_autosummary.requesting.sizing import entry_tokens_async, transcript_tokens

WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "river", "flows")


class Tally:
    """A tokenizer that counts how often it runs and how many characters it reads."""

    def __init__(self, count: Callable[[str], int] = lambda text: max(1, len(text) // 4)) -> None:
        self.calls = 0
        self.chars = 0
        self._count = count

    def __call__(self, text: str) -> int:
        self.calls += 1
        self.chars += len(text)
        return self._count(text)


def history(count: int) -> list[Message]:
    """``count`` alternating user and assistant messages of about 40 words each."""
    messages: list[Message] = []
    for i in range(count):
        text = f"message {i}: " + " ".join(WORDS[(i + j) % len(WORDS)] for j in range(36))
        messages.append(Message.user(text) if i % 2 == 0 else Message.assistant(text))
    return messages


def representative() -> list[Message]:
    """Prose, logs, code, tool calls and tool results, short and cut."""
    log = "\n".join(
        f"2024-06-11T10:{m:02d}:00Z INFO service=api latency_ms={m * 37}" for m in range(40)
    )
    code = "def f(x):\n    if x:\n        return [x, {'k': 1}]\n    return None\n" * 5
    return [
        Message.system("You are terse."),
        Message.user("Why does the deploy fail?\n\n" + log),
        Message.assistant(
            "Let me look.",
            [ToolUseBlock("call_1", "read_file", {"path": "/srv/app.py", "lines": [1, 400]})],
        ),
        Message.tool_result("call_1", code),
        Message.assistant("", [ToolUseBlock("call_2", "search_docs", {"query": "x" * 300})]),
        Message.tool_result("call_2", "short"),
        Message.tool_result("call_3", "boom\n" * 3, is_error=True),
        Message.assistant("The parser:\n- 1. fails on `None`\n- 2. retries 3 times"),
    ]


async def test_entry_estimates_are_at_least_the_entries_tokens_in_tiktoken() -> None:
    for model in (None, "gpt-4o"):
        counter = TokenCounter(model)
        for message in representative():
            exact = counter.count_text(format_message(message, 500)) + 1  # the blank line
            estimate = await entry_tokens_async(counter, message, 500)
            assert estimate >= exact, format_message(message, 500)


async def test_a_summary_request_counts_its_prompt_once() -> None:
    tally = Tally()
    counter = TokenCounter("m", count_text=tally, name="tally")
    messages = history(60)
    for message in messages:
        counter.count_message(message)  # stored with the messages
    provider = MockProvider(responder=lambda request: "A summary.")
    config = SummaryConfig(max_context_tokens=32_000)
    fit = SummaryFit(counter, TokenCorrection(), None)
    # A first request counts the empty prompt, kept per counter and template.
    await request_summary(provider, config, messages[:2], model=None, max_chars=None, fit=fit)
    before = tally.chars
    reply = await request_summary(provider, config, messages, model=None, max_chars=None, fit=fit)
    request = provider.calls_for("summary")[-1]
    prompt = request.messages[0].text
    # The prompt once, the reply once: the conversation is not counted apart (and a role's
    # text is counted once per counter, by the first request).
    assert tally.chars - before == len(prompt) + len(reply.text)
    assert reply.request_tokens == counter.count_messages(request.messages)
    assert request.max_tokens == min(config.summary_tokens, 32_000 - reply.request_tokens)


def test_a_prefix_instruction_is_tokenized_once_per_counter() -> None:
    # Every prefix-shaped summary of a session ends with the same instruction: the next
    # summary's request reads its count instead of tokenizing it again.
    tally = Tally()
    counter = TokenCounter("m", count_text=tally, name="tally-instruction")
    instruction = prefix_instruction(DEFAULT_SUMMARY_PROMPT, 4, 300)
    first = counter.count_message(instruction_message(instruction))
    calls = tally.calls
    assert counter.count_message(instruction_message(instruction)) == first
    assert tally.calls == calls
    other = prefix_instruction(DEFAULT_SUMMARY_PROMPT, 6, 300)  # another kept tail: counted
    counter.count_message(instruction_message(other))
    assert tally.calls > calls


def superadditive(text: str) -> int:
    """A tokenizer whose count of a whole is far more than the sum of its parts."""
    return len(text) // 4 + len(text) ** 2 // 40_000


texts = st.text(st.characters(codec="utf-8"), max_size=400) | st.builds(
    lambda lines, word: "\n".join(f"{n} {word}" for n in range(lines)),
    st.integers(0, 60),
    st.sampled_from(["ok", "2024-06-11", "  indented", "{'k': 1}", "☃"]),
)


@st.composite
def messages(draw: st.DrawFn) -> list[Message]:
    """Messages of every role, with tool calls and tool results short and long."""
    result: list[Message] = []
    for index in range(draw(st.integers(1, 25))):
        kind = draw(st.sampled_from(["user", "assistant", "system", "call", "result"]))
        text = draw(texts)
        if kind == "call":
            arguments = {"query": draw(texts)}
            result.append(Message.assistant(text, [ToolUseBlock(f"c{index}", "lookup", arguments)]))
        elif kind == "result":
            long = draw(st.booleans())
            body = text * 40 if long else text
            result.append(Message.tool_result(f"c{index}", body, is_error=draw(st.booleans())))
        else:
            result.append(Message(kind, text))  # type: ignore[arg-type]
    return result


@settings(max_examples=150)
@given(
    messages(),
    st.integers(min_value=600, max_value=6_000),
    st.integers(min_value=0, max_value=2_000),
    st.sampled_from(["tiktoken", "superadditive"]),
    st.booleans(),
)
async def test_a_summary_request_never_exceeds_the_window(
    batch: list[Message], window: int, max_tool_result_chars: int, tokenizer: str, stored: bool
) -> None:
    if tokenizer == "tiktoken":
        counter = get_token_counter(None)
    else:
        counter = TokenCounter("m", count_text=superadditive, name="superadditive")
    if stored:
        for message in batch:
            counter.count_message(message)
    provider = MockProvider(responder=lambda request: "A summary.")
    config = SummaryConfig(max_context_tokens=window, max_tool_result_chars=max_tool_result_chars)
    fit = SummaryFit(counter, TokenCorrection(), None)
    try:
        reply = await request_summary(provider, config, batch, model=None, max_chars=None, fit=fit)
    except SummaryFailedError:
        assert not provider.calls  # no room for a request: none is sent
        return
    (request,) = provider.calls_for("summary")
    sent = counter.count_messages(request.messages)
    assert reply.request_tokens == sent
    assert request.max_tokens is not None and request.max_tokens > 0
    assert sent + request.max_tokens <= window


async def test_chunks_are_planned_without_counting_the_messages_no_chunk_reads() -> None:
    tally = Tally()
    counter = TokenCounter("m", count_text=tally, name="tally")
    backlog = history(10_000)
    spans = await plan_chunks(backlog, 2_000, counter, 500, max_chunks=4)
    read = spans[-1][1]
    assert len(spans) == 4 and read < 500
    counted = [index for index, message in enumerate(backlog) if token_counts(message)]
    assert counted and max(counted) <= read  # the chunks' messages, and the one that ended them
    assert tally.chars < sum(len(message.text) for message in backlog[: read + 1]) * 2


async def test_a_chunk_plan_sizes_each_span_as_its_request_would() -> None:
    # The request of a chunk takes the plan's estimate of its entries, not a second sizing.
    counter = get_token_counter(None)
    messages = [*history(30), *representative(), *history(30)]
    sizes: list[int] = []
    spans = await plan_chunks(messages, 400, counter, 500, max_chunks=8, sizes=sizes)
    assert len(spans) > 1 and len(sizes) == len(spans)
    for (start, end), size in zip(spans, sizes, strict=True):
        assert size == await transcript_tokens(counter, messages[start:end], 500)


async def first_backlog_turn(count: int) -> tuple[Tally, list[LlmRequest]]:
    """The tokenizer's work in the first turn after enabling autosummary on ``count`` messages."""
    tally = Tally()
    counter = TokenCounter("m", count_text=tally, name="tally")
    store = InMemoryStore()
    stored = history(count)
    for message in stored:
        counter.count_message(message)  # the counts a session stores with its messages
    await store.write(
        StoreWrite(
            "backlog",
            slot_configs={"default": config_to_json(SlotConfig(FocusedConfig()))},
            appends={"default": MessageAppend(0, stored)},
            expected_versions={"default": 0},
        )
    )

    def reply(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "ok"
        return "Foxes and rivers, up to " + " ".join(request.messages[-1].text.split()[-4:])

    provider = MockProvider(responder=reply)
    config = SummaryConfig(max_summary_calls_per_turn=4, max_context_tokens=8_000)
    bundle = AgentBuilder().provider(provider).store(store).setting("summary_config", config)
    agent = Agent("assistant", system_prompt="Be brief.", model="m", token_counter=counter)
    session = AgentSession(agent, "backlog", bundle.build())
    await session.load()
    tally.calls = tally.chars = 0
    await session.submit_turn("hello again")
    await session.aclose()
    return tally, provider.calls_for("summary")


async def test_a_backlog_turn_tokenizes_what_its_summaries_send_not_the_backlog() -> None:
    small, small_requests = await first_backlog_turn(1_000)
    large, large_requests = await first_backlog_turn(8_000)
    assert len(small_requests) == len(large_requests) == 4
    sent = sum(len(m.text) for request in large_requests for m in request.messages)
    # Each request's prompt is counted once; the messages are read from their stored counts.
    assert large.chars <= 1.25 * sent
    assert large.chars <= small.chars + 2_000  # the same chunks summarized: the same work


def test_the_plan_is_found_in_the_sent_request_by_equality_not_identity() -> None:
    sent = [Message.user(f"question {n}") for n in range(6)]
    # The plan's messages as the store gives them back: equal, other objects.
    wanted = [Message.user("question 1"), Message.user("question 3")]
    assert position_of(sent, wanted) == 4
    assert position_of(sent, sent[2:4]) == 4  # the same objects
    assert position_of(sent, [Message.user("question 9")]) is None
    assert position_of(sent, [sent[3], sent[1]]) is None  # out of order
