"""A slot context's reported size: exact where counted, estimated past the window."""

from __future__ import annotations

from agentcore import ContextSlot, FocusedConfig, Message, SlotConfig, ToolUseBlock
from agentcore.tokens import TokenCounter
from agentcore_autosummary.deciding.context_size import context_size


def _words(text: str) -> int:
    return len(text.split())


def _slot(history: list[Message]) -> ContextSlot:
    return ContextSlot("s", "default", SlotConfig(FocusedConfig()), "sys", messages=history)


def _history(count: int) -> list[Message]:
    return [
        Message.user(f"question {i}: " + "lorem ipsum dolor " * 10)
        if i % 2 == 0
        else Message.assistant(f"answer {i}: " + "sit amet consectetur " * 10)
        for i in range(count)
    ]


async def test_a_context_within_the_window_is_counted_exactly() -> None:
    counter = TokenCounter("m", count_text=_words, name="words")
    slot = _slot(_history(20))
    size = await context_size(slot, counter, window=10_000)
    assert not size.estimated
    assert size.tokens == counter.count_messages(slot.load_messages())


async def test_an_uncounted_context_past_the_window_is_estimated_close_to_its_count() -> None:
    counter = TokenCounter("m", count_text=_words, name="words")
    history = _history(1_000)
    slot = _slot(history)
    exact = TokenCounter("m", count_text=_words, name="apart").count_messages(slot.load_messages())
    size = await context_size(slot, counter, window=2_000)
    assert size.estimated
    assert abs(size.tokens - exact) < exact * 0.05
    # Only the newest messages, as far as the window reaches, were tokenized.
    assert sum(counter.counted(message) for message in history) < 100
    # Once every message carries its count the figure is exact again.
    assert counter.count_messages(history)
    size = await context_size(slot, counter, window=2_000)
    assert not size.estimated and size.tokens == exact


async def test_an_uncounted_message_without_text_makes_the_figure_an_estimate() -> None:
    counter = TokenCounter("m", count_text=_words, name="words")
    calls = [
        Message(
            "assistant",
            [ToolUseBlock(f"call{i}", "lookup", {"query": "x"})],
        )
        for i in range(200)
    ]
    slot = _slot([*calls, *_history(200)])
    size = await context_size(slot, counter, window=500)
    assert size.estimated
    assert size.tokens > counter.count_messages(slot.raw_messages(200))
