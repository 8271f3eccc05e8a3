from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st

from agentcore import _tiktoken_loading, tokens
from agentcore.encodings import load_bundled_encoding
from agentcore.messages import ImageBlock, Message, TextBlock, ToolUseBlock, token_counts

# estimate_text_tokens: agentcore.tokens re-exports it without marking it exported.
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

_real_load = _tiktoken_loading._load_encoding

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
def no_encodings(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(name: str) -> tiktoken.Encoding:
        raise OSError(f"cannot fetch {name}")

    monkeypatch.setattr(_tiktoken_loading, "_load_encoding", fail)
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


def test_default_counter_counts_cl100k_offline_but_is_no_exact_count() -> None:
    counter = get_token_counter()
    assert counter.encoding_name == "cl100k_base"
    # the model is unknown: cl100k stands in for its tokenizer
    assert not counter.exact
    assert counter.count_text("hello world") == 2
    assert count_text_tokens("hello world") == 2
    assert counter.count_text("") == 0
    # special tokens are plain text, never an error
    assert counter.count_text("<|endoftext|>") > 1


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
        + text("call_1")
        + text("weather")
        + text('{"city": "Paris"}')
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

    # A role's text is counted once per counter: the history's messages counted it already.
    assert spy.texts == ["And tomorrow?", "Rain is expected."]
    assert after == before + sum(counter.count_message(m) for m in new)


def test_a_count_travels_with_the_message_under_the_counter_key() -> None:
    message = Message.user("message one two three")
    first = TokenCounter("gpt-4o").count_message(message)
    assert token_counts(message) == ((TokenCounter("gpt-4o").key, first),)
    # Another counter with the same key reads it without counting again.
    calls: list[str] = []
    same_key = TokenCounter("gpt-4o")
    same_key._encoding = None  # counting would now estimate: a reuse is visible
    assert same_key.count_message(message) == first

    # A counter with another key counts afresh and keeps both counts.
    def count_calls(text: str) -> int:
        calls.append(text)
        return 1

    other = TokenCounter("m", count_text=count_calls, name="words-v1")
    assert other.key == "custom:words-v1/1"
    assert other.count_message(message) == 3 + 2
    assert calls == ["user", "message one two three"]
    assert dict(token_counts(message)) == {other.key: 5, same_key.key: first}
    # Counts are a cache beside the fields: equality and hashing ignore them.
    assert message == Message.user("message one two three")
    assert hash(message) == hash(Message.user("message one two three"))


def test_a_custom_counter_is_named_after_its_function_unless_given_a_name() -> None:
    def my_tokenizer(text: str) -> int:
        return len(text)

    assert TokenCounter(count_text=my_tokenizer).key == (
        f"custom:None:{__name__}.test_a_custom_counter_is_named_after_its_function_unless_given_a_name"
        ".<locals>.my_tokenizer/1"
    )
    with pytest.raises(TypeError, match="name"):
        TokenCounter(count_text=my_tokenizer, name="")


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


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4o", "gpt-4", "openai/gpt-4o"])
def test_openai_models_count_exactly_without_the_network(
    monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    def no_network(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("counting tried to download an encoding")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    monkeypatch.setattr(tiktoken, "get_encoding", no_network)
    counter = get_token_counter(model)
    assert counter.encoding_name == encoding_for_model(model)
    assert counter.exact
    assert counter.count_text("hello world") == 2


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_bundled_encodings_are_tiktokens_own(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    # Build the encoding the way tiktoken does, with its expected hash, reading
    # the bundled file instead of downloading: the hash must match and the
    # pattern and special tokens must be tiktoken's, so every count is equal.
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public  # type: ignore[import-untyped]  # no py.typed

    from agentcore.encodings import bundled_path, load_bundled_encoding

    def local(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        assert url.endswith(f"/{name}.tiktoken")
        return load_tiktoken_bpe(bundled_path(name), expected_hash=expected_hash)

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", local)
    reference = tiktoken.Encoding(**getattr(openai_public, name)())
    ours = load_bundled_encoding(name)
    assert ours.n_vocab == reference.n_vocab
    for text in (ENGLISH, CHINESE, "  trailing spaces   \n\n x", "I'm 12345 'LL", "😀 a/b\r\n"):
        assert ours.encode_ordinary(text) == reference.encode_ordinary(text)
        assert ours.encode(text, allowed_special="all") == reference.encode(
            text, allowed_special="all"
        )


def test_a_damaged_bundled_file_is_refused(tmp_path: object) -> None:
    from pathlib import Path

    from tiktoken.load import load_tiktoken_bpe

    from agentcore.encodings import BUNDLED, bundled_path

    damaged = Path(str(tmp_path)) / "o200k_base.tiktoken"
    damaged.write_bytes(Path(bundled_path("o200k_base")).read_bytes()[:-10])
    with pytest.raises(ValueError, match=r"[Hh]ash"):
        load_tiktoken_bpe(str(damaged), expected_hash=BUNDLED["o200k_base"].sha256)


@pytest.mark.parametrize("model", ["claude-3-5-sonnet-latest", "llama-3.1-8b", None])
def test_stand_in_encoding_says_it_is_an_estimate(model: str | None) -> None:
    counter = get_token_counter(model)
    assert counter.encoding_name == "cl100k_base"
    assert not counter.exact


def test_a_users_exact_tokenizer_replaces_tiktoken() -> None:
    counter = TokenCounter("smollm2", count_text=lambda text: len(text.split()) * 2)
    assert counter.exact
    assert counter.encoding_name == "custom"
    assert counter.count_text("a b c") == 6
    assert counter.count_message(Message.user("a b")) == TOKENS_PER_MESSAGE + 2 + 4
    guess = TokenCounter("smollm2", count_text=len, exact=False)
    assert not guess.exact
    with pytest.raises(TypeError, match="int >= 0"):
        TokenCounter("m", count_text=lambda text: -1).count_text("x")


def test_slow_load_of_an_unbundled_encoding_falls_back_promptly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()
    loads: list[str] = []

    def load(name: str) -> tiktoken.Encoding:
        if name == "cl100k_base":
            return _real_load(name)
        loads.append(name)
        release.wait(30)
        raise OSError("no network")

    monkeypatch.setattr(_tiktoken_loading, "_load_encoding", load)
    monkeypatch.setenv("AGENTCORE_TIKTOKEN_TIMEOUT", "0.2")
    try:
        start = time.monotonic()
        counter = get_token_counter("text-davinci-003")
        elapsed = time.monotonic() - start
    finally:
        release.set()
    assert elapsed < 15  # the load would have gone on for 30 s
    assert counter.wanted_encoding == "p50k_base"
    assert counter.encoding_name == "cl100k_base"
    assert not counter.exact
    # the failed load is not retried
    assert get_token_counter("text-davinci-002").encoding_name == "cl100k_base"
    assert loads == ["p50k_base"]


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
    assert "Reinstall agentcore" in warnings[0].getMessage()
    assert "TIKTOKEN_CACHE_DIR" in warnings[0].getMessage()


def test_estimate_is_sane_for_english_and_chinese() -> None:
    assert estimate_text_tokens("") == 0
    assert estimate_text_tokens("hello world") == 3
    assert estimate_text_tokens("你好世界") == 4
    for text in (ENGLISH, CHINESE, ENGLISH + CHINESE):
        counts = [estimate_text_tokens(text[:i]) for i in range(len(text) + 1)]
        assert counts == sorted(counts)


def test_estimate_is_close_to_the_real_count() -> None:
    encoding = load_bundled_encoding("cl100k_base")
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


def test_long_texts_are_counted_in_slices_with_the_same_result() -> None:
    import random

    rng = random.Random(4)
    pieces = ["word", "Hello", "x1", "  ", "\n", "\n\n", " \n ", "don't", "你好", "😀", "1234"]
    text = "".join(rng.choice(pieces) + (" " if rng.random() < 0.6 else "") for _ in range(20_000))
    for name, model in (("cl100k_base", "gpt-4"), ("o200k_base", "gpt-4o")):
        encoding = load_bundled_encoding(name)
        assert get_token_counter(model).count_text(text) == len(encoding.encode_ordinary(text))


async def test_async_counts_equal_sync_counts() -> None:
    counter = get_token_counter("gpt-4o-mini")
    big = Message.user("lorem ipsum dolor " * 20_000)
    small = Message.user("hello")
    expected = TokenCounter("gpt-4o-mini").count_messages([big, small])
    assert await counter.count_messages_async([big, small]) == expected
    assert await counter.count_text_async(big.text) == counter.count_text(big.text)


def test_cut_middle_keeps_head_and_tail_and_says_how_much_is_left_out() -> None:
    counter = get_token_counter("gpt-4o-mini")
    text = "START " + "filler words here " * 5000 + " END"
    cut = counter.cut_middle(text, 200)
    assert counter.count_text(cut) <= 200
    assert cut.startswith("START") and cut.endswith("END")
    assert "tokens left out" in cut
    left_out = int(cut.split("[… ")[1].split(" tokens")[0])
    assert left_out > counter.count_text(text) - 220
    assert counter.cut_middle("short", 200) == "short"
    estimated = TokenCounter("m", count_text=lambda value: len(value) // 4 + 1)
    assert estimated.count_text(estimated.cut_middle(text, 100)) <= 100


def test_tool_definitions_are_counted_as_sent() -> None:
    from agentcore.llm import ToolSpec
    from agentcore.tokens import TOKENS_PER_TOOL

    counter = get_token_counter("gpt-4o")
    spec = ToolSpec("search", "Search the web.", {"type": "object", "properties": {}})
    sent = (
        '{"type": "function", "function": {"name": "search", "description": '
        '"Search the web.", "parameters": {"type": "object", "properties": {}}}}'
    )
    assert counter.count_tools([spec]) == TOKENS_PER_TOOL + counter.count_text(sent)
    assert counter.count_tools([]) == 0


def test_each_tool_definition_is_counted_once_per_counter() -> None:
    from agentcore import ToolRegistry
    from agentcore.llm import ToolSpec

    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return len(text.split())

    registry = ToolRegistry()
    for name in ("search", "fetch", "sum", "weather"):

        def tool(query: str) -> str:
            """Do something with the query."""
            return query

        registry.register(tool, name=name)
    counter = TokenCounter("m", count_text=count)
    first = counter.count_tools(registry.specs())
    assert len(counted) == 4
    for _ in range(5):
        assert counter.count_tools(registry.specs()) == first
    # The same definitions in new spec objects are not counted again either.
    copies = [ToolSpec(s.name, s.description, dict(s.parameters)) for s in registry.specs()]
    assert counter.count_tools(copies) == first
    assert len(counted) == 4
    # A changed definition is counted afresh, and so is everything by another counter.
    changed = ToolSpec("search", "Search the whole web, newest first.", copies[0].parameters)
    assert counter.count_tools([changed]) != counter.count_tools(copies[:1])
    assert len(counted) == 5
    other = TokenCounter("m", count_text=lambda text: 2 * count(text), name="double")
    assert other.count_tools(registry.specs()) == 2 * first - 4 * tokens.TOKENS_PER_TOOL
    assert len(counted) == 9


def test_the_tool_count_cache_does_not_keep_every_spec_alive() -> None:
    import gc
    import weakref

    from agentcore.llm import ToolSpec

    counter = TokenCounter("m", count_text=lambda text: 1)
    first = ToolSpec("t", "A tool.", {"type": "object", "properties": {}})
    assert counter.count_tools([first]) == tokens.TOKENS_PER_TOOL + 1
    kept = weakref.ref(first)
    del first
    for index in range(tokens.TOOL_CACHE_SIZE * 2):
        spec = ToolSpec(f"t{index}", "A tool.", {"type": "object", "properties": {}})
        assert counter.count_tools([spec]) == tokens.TOKENS_PER_TOOL + 1
    gc.collect()
    assert kept() is None
