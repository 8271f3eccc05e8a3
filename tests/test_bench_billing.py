"""The bench's prefix-cache model (bench/billing.py) follows the providers' published rules."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

from agentcore import LlmRequest, Message, ToolUseBlock, Usage
from agentcore.pricing import LIST_PRICES
from agentcore.providers._anthropic_codec import encode_request


def _load_billing() -> ModuleType:
    """bench/billing.py by its path: the bench is not a package the test envs install."""
    path = Path(__file__).resolve().parents[1] / "bench" / "billing.py"
    spec = importlib.util.spec_from_file_location("bench_billing", path)
    assert spec is not None and spec.loader is not None, f"cannot load {path}"
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:  # the types of the module loaded below
    from bench import billing
else:
    billing = _load_billing()
TTL_SECONDS = billing.TTL_SECONDS
AnthropicCache = billing.AnthropicCache
Bill = billing.Bill
Block = billing.Block
OpenAICache = billing.OpenAICache
turn_start = billing.turn_start


def _blocks(*tokens: int, start: int = 0) -> list[Block]:
    return [Block(key, count) for key, count in enumerate(tokens, start)]


def test_openai_reads_a_shared_prefix_in_128_token_steps() -> None:
    cache = OpenAICache()
    first = _blocks(600, 600, 300)  # 1,500 tokens: cached whole
    assert cache.bill(first, now=0.0).cache_read == 0
    # The next request shares 1,500 tokens: 1,024 + 3 steps of 128 = 1,408 are read.
    grown = [*first, *_blocks(200, start=10)]
    billed = cache.bill(grown, now=30.0)
    assert billed.input_tokens == 1700
    assert billed.cache_read == 1024 + 3 * 128
    assert billed.cache_write == 0  # OpenAI has no write premium


def test_openai_caches_nothing_below_1024_tokens() -> None:
    cache = OpenAICache()
    short = _blocks(500, 500)  # 1,000 tokens: below the minimum
    cache.bill(short, now=0.0)
    assert cache.bill(short, now=1.0).cache_read == 0


def test_a_changed_block_ends_the_shared_prefix() -> None:
    cache = OpenAICache()
    cache.bill(_blocks(2000, 2000), now=0.0)
    rewritten = [Block(0, 2000), Block(99, 1500)]  # the second block differs
    assert cache.bill(rewritten, now=10.0).cache_read == 1024 + (2000 - 1024) // 128 * 128


def test_anthropic_hit_at_a_breakpoint_reads_and_writes_the_rest() -> None:
    cache = AnthropicCache()
    first = _blocks(1000, 1000, 500)
    billed = cache.bill(first, breakpoints=[2], now=0.0)
    assert (billed.cache_read, billed.cache_write) == (0, 2500)
    grown = [*first, *_blocks(300, 200, start=10)]
    billed = cache.bill(grown, breakpoints=[4], now=60.0)
    # The previous breakpoint lies two blocks back: found, read; the new part written.
    assert (billed.cache_read, billed.cache_write, billed.uncached) == (2500, 500, 0)


def test_anthropic_misses_after_the_ttl() -> None:
    cache = AnthropicCache()
    request = _blocks(1500, 500)
    cache.bill(request, breakpoints=[1], now=0.0)
    assert cache.bill(request, breakpoints=[1], now=TTL_SECONDS - 1).cache_read == 2000
    # Each hit refreshed the entry: 5 minutes after the last read, still there...
    assert cache.bill(request, breakpoints=[1], now=2 * TTL_SECONDS - 2).cache_read == 2000
    # ...and gone once 5 minutes pass without one: a miss, written again.
    billed = cache.bill(request, breakpoints=[1], now=4 * TTL_SECONDS)
    assert (billed.cache_read, billed.cache_write) == (0, 2000)


def test_anthropic_caches_nothing_without_a_breakpoint_or_below_1024_tokens() -> None:
    cache = AnthropicCache()
    cache.bill(_blocks(3000), breakpoints=[], now=0.0)
    assert cache.bill(_blocks(3000), breakpoints=[], now=1.0).cache_read == 0
    small = _blocks(800, start=5)
    assert cache.bill(small, breakpoints=[0], now=2.0).cache_write == 0
    assert cache.bill(small, breakpoints=[0], now=3.0).cache_read == 0


def test_anthropic_looks_back_at_most_20_blocks() -> None:
    cache = AnthropicCache()
    first = _blocks(2000)
    cache.bill(first, breakpoints=[0], now=0.0)
    near = [*first, *_blocks(*[10] * 20, start=100)]  # the old breakpoint 20 blocks back
    assert cache.bill(near, breakpoints=[20], now=1.0).cache_read == 2000
    cache = AnthropicCache()
    cache.bill(first, breakpoints=[0], now=0.0)
    far = [*first, *_blocks(*[10] * 21, start=100)]  # 21 blocks back: not found
    assert cache.bill(far, breakpoints=[21], now=1.0).cache_read == 0


def test_a_break_longer_than_the_ttl_comes_every_25_turns() -> None:
    assert turn_start(1) - turn_start(0) < TTL_SECONDS
    assert turn_start(25) - turn_start(24) > TTL_SECONDS


def test_a_bill_prices_a_conversation_that_grows_at_list_prices() -> None:
    bill = Bill("agentcore-full")
    pairs: list[tuple[str, str]] = [("system", "You are terse.")]
    counts = [10]
    for turn in range(4):
        pairs += [("user", f"question {turn} " + "x" * 10), ("assistant", f"answer {turn}")]
        counts += [900, 100]
        bill.add(turn, pairs[:-1], counts[:-1])
    figures = bill.figures()
    anthropic, openai = figures["anthropic"], figures["openai"]
    assert anthropic["input"] == openai["input"] == sum(10 + 1000 * turn + 900 for turn in range(4))
    assert anthropic["cache_read"] > 0 and anthropic["cache_write"] > 0
    assert openai["cache_read"] > 0 and openai["cache_write"] == 0
    usage = Usage(
        anthropic["input"],
        0,
        cached_input_tokens=anthropic["cache_read"],
        cache_write_tokens=anthropic["cache_write"],
    )
    assert anthropic["dollars"] == pytest.approx(LIST_PRICES["claude-sonnet-4-5"].dollars(usage))
    uncached = LIST_PRICES["claude-sonnet-4-5"].dollars(Usage(anthropic["input"], 0))
    assert anthropic["dollars"] < uncached


def test_systems_that_set_no_breakpoint_are_not_cached_at_anthropic() -> None:
    bill = Bill("langmem")
    pairs = [("system", "s"), ("user", "u" * 10)]
    for turn in range(3):
        bill.add(turn, pairs, [1500, 1500])
    assert bill.figures()["anthropic"]["cache_read"] == 0
    assert bill.figures()["openai"]["cache_read"] > 0


def test_a_bill_of_growing_and_rewritten_requests_matches_billing_each_whole() -> None:
    requests = []
    pairs: list[tuple[str, str]] = [("system", "s")]
    for turn in range(6):
        pairs = [*pairs, ("user", f"u{turn}"), ("assistant", f"a{turn}")]
        requests.append(list(pairs))
    requests.append([("system", "s"), ("user", "summary"), *pairs[-2:]])  # a compaction
    requests.append([*requests[-1], ("user", "next")])
    bill = Bill("agentcore-inline")
    whole = OpenAICache()
    expected = 0
    for turn, request in enumerate(requests):
        counts = [400] * len(request)
        bill.add(turn, request, counts)
        now = turn_start(turn)
        blocks = [Block(hash(pair), 400) for pair in request]
        expected += whole.bill(blocks, now).cache_read
    assert bill.figures()["openai"]["cache_read"] == expected > 0


def test_one_hour_entries_outlive_the_break_and_cost_twice_the_input_to_write() -> None:
    bill = Bill("agentcore-full")
    pairs: list[tuple[str, str]] = [("system", "You are terse.")]
    counts = [10]
    for turn in range(22, 28):  # turn 25 starts after the 10-minute break
        pairs += [("user", f"question {turn} " + "x" * 10), ("assistant", f"answer {turn}")]
        counts += [900, 100]
        bill.add(turn, pairs[:-1], counts[:-1])
    figures = bill.figures()
    five, hour = figures["anthropic"], figures[billing.ONE_HOUR]
    assert five["input"] == hour["input"]
    # After the break the 5-minute entries are gone and the prefix is written again.
    assert hour["cache_read"] > five["cache_read"]
    assert hour["cache_write"] < five["cache_write"]
    usage = Usage(
        hour["input"],
        0,
        cached_input_tokens=hour["cache_read"],
        cache_write_tokens=hour["cache_write"],
    )
    price = LIST_PRICES["claude-sonnet-4-5"]
    assert hour["dollars"] == pytest.approx(price.dollars(usage, cache_ttl="1h"))
    assert price.dollars(usage, cache_ttl="1h") > price.dollars(usage)


def _provider_marks(messages: list[Message], *, cache_newest: bool = True) -> set[int]:
    """Which of ``messages`` agentcore's Anthropic provider ends with a ``cache_control``.

    Every message's text is ``m<index>`` (after the recall label in a recalled turn's
    user message) and every tool call's id ``call<index>``, so a marked block names
    its message.
    """
    body = encode_request(
        LlmRequest(messages=messages, cache_newest=cache_newest),
        model="claude",
        stream=False,
        default_max_tokens=64,
        cache_ttl="5m",
    )
    blocks = [*body.get("system", []), *(b for turn in body["messages"] for b in turn["content"])]
    owners: set[int] = set()
    for block in blocks:
        if "cache_control" not in block:
            continue
        if block["type"] == "tool_use":
            owners.add(int(block["id"].removeprefix("call")))
        elif block["type"] == "tool_result":
            owners.add(int(block["tool_use_id"].removeprefix("call")) + 1)
        else:
            owners.add(int(block["text"].rpartition("m")[2]))
    return owners


@pytest.mark.parametrize(
    "roles",
    [
        ("system", "user"),
        ("system", "user", "assistant", "user"),
        ("system", "user", "assistant", "tool"),
        ("system", "user", "assistant", "tool", "assistant", "user"),
        ("system", "user", "assistant", "assistant", "user"),
        ("user", "assistant", "user", "assistant", "user"),
    ],
)
def test_agentcore_breakpoints_are_where_its_anthropic_provider_puts_them(
    roles: tuple[str, ...],
) -> None:
    # Marked only at the newest message, a request would never read the entry the turn
    # before wrote once anything at the end of a request changes: the bench would bill
    # agentcore a write of its whole tail at every turn.
    messages: list[Message] = []
    for index, role in enumerate(roles):
        text = f"m{index}"
        if role == "tool":
            messages.append(Message.tool_result(f"call{index - 1}", text))
        elif role == "assistant" and roles[index + 1 : index + 2] == ("tool",):
            messages.append(Message.assistant(tool_calls=[ToolUseBlock(f"call{index}", "t")]))
        elif role == "assistant":
            messages.append(Message.assistant(text))
        else:
            messages.append(Message.system(text) if role == "system" else Message.user(text))
    pairs = [(role, f"m{index}") for index, role in enumerate(roles)]
    assert set(billing.ANTHROPIC_MARKS["agentcore"](pairs, "turn")) == _provider_marks(messages)
    # A summary request asks for no entry at its end (``cache_newest=False``).
    assert set(billing.ANTHROPIC_MARKS["agentcore"](pairs, "summary")) == _provider_marks(
        messages, cache_newest=False
    )


def test_a_turn_opened_by_recall_is_billed_without_an_entry_at_its_end() -> None:
    recalled = f"{billing.RECALLED_OPENING} ...:\nm1"
    messages = [Message.system("m0"), Message.user(recalled)]
    pairs = [("system", "m0"), ("user", recalled)]
    marks = set(billing.ANTHROPIC_MARKS["agentcore"](pairs, "turn"))
    assert marks == _provider_marks(messages, cache_newest=False) == {0}
    plain = [("system", "m0"), ("user", "m1")]
    assert set(billing.ANTHROPIC_MARKS["agentcore"](plain, "turn")) == {0, 1}
