"""The twelve tests of the original design, under their names."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from summary_helpers import TINY_WINDOW, Replies

from agentcore import (
    AgentSession,
    FocusedConfig,
    LlmError,
    LlmRequest,
    Message,
    SlotConfig,
    ToolUseBlock,
    Usage,
)
from agentcore.testing import MockProvider
from agentcore_autosummary import (
    DEFAULT_SUMMARY_PROMPT,
    SummaryConfig,
    fence_summary,
    format_messages_as_text,
    get_conversation_summary,
)

MakeSession = Callable[..., AgentSession]
# The original design sent the summary as a system message, and asked for it in a
# transcript prompt, with nothing quoted after it; these tests keep all three.
TINY = SummaryConfig(
    **TINY_WINDOW,
    trigger_token_ratio=0.005,
    keep_recent_tokens=5,
    summary_role="system",
    request_shape="transcript",
    retention_check="off",
)
# Long enough that its summary, fenced (``<summary>`` ... ``</summary>``), is smaller.
GETTING_LONG = "Hello there, this conversation is getting long, so long that a summary is due."


def test_summary_config_defaults() -> None:
    config = SummaryConfig()
    # 0.8 of the window, an eighth of it kept verbatim (the seed's: 0.75 and a quarter).
    assert config.trigger_token_ratio == 0.8
    assert config.keep_recent_tokens is None and config.recent_budget == 32_000 // 8
    # None: discovered from the model; the seed's 32,000 when nothing is known.
    assert config.max_context_tokens is None and config.window == 32_000
    assert config.summary_prompt == DEFAULT_SUMMARY_PROMPT
    assert "{messages}" in DEFAULT_SUMMARY_PROMPT
    assert config.debounce_turns == 3
    assert config.summary_model is None
    assert config.max_tool_result_chars == 500
    assert (config.trigger, config.strategy, config.mode) == ("context", "segments", "inline")
    # None: derived from the window, 1,024 tokens from a window of 8,192 up.
    assert config.max_summary_tokens is None and config.summary_tokens == 1024
    assert config.memory_key == "conversation_summary"


async def test_summary_not_generated_below_threshold(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies(), usage=Usage.from_input_output(10, 5))
    session = make_session(provider, summary=SummaryConfig(), mode=FocusedConfig())
    for i in range(10):
        await session.submit_turn(f"message {i}")
    assert provider.calls_for("summary") == []
    assert await get_conversation_summary(session) is None


async def test_summary_generated_above_threshold(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=TINY, mode=FocusedConfig())
    await session.submit_turn(
        "Please remember that my name is Ada and that I work as an engineer by the sea."
    )
    (call,) = provider.calls_for("summary")
    assert call.tools == () and call.max_tokens == TINY.max_summary_tokens
    assert (
        "User: Please remember that my name is Ada and that I work as an engineer by the sea."
        in call.messages[0].text
    )
    assert await get_conversation_summary(session) == "summary #1"


async def test_summary_debounce_works(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=TINY, mode=FocusedConfig())
    summarized_at: list[int] = []
    for turn in range(8):
        before = len(provider.calls_for("summary"))
        await session.submit_turn(f"turn {turn} has enough words to cross the tiny watermark")
        if len(provider.calls_for("summary")) > before:
            summarized_at.append(turn)
    assert summarized_at == [0, 3, 6]


async def test_summary_injected_into_focused(make_session: MakeSession) -> None:
    session = make_session(summary=TINY, mode=FocusedConfig())
    await session.submit_turn(GETTING_LONG)
    context = await session.load_messages()
    assert Message.system(f"[上下文摘要] {fence_summary('summary #1')}") in context
    slot = await session.get_slot()
    assert slot.config.focused is not None
    assert slot.config.focused.summary_override == fence_summary("summary #1")


async def test_summary_written_to_session_memory(make_session: MakeSession) -> None:
    session = make_session(summary=TINY, mode=FocusedConfig())
    await session.submit_turn(GETTING_LONG)
    assert await session.get_session_data("conversation_summary") == "summary #1"


async def test_summary_not_injected_in_full_mode(make_session: MakeSession) -> None:
    session = make_session(summary=TINY, mode="full")
    await session.submit_turn(GETTING_LONG)
    slot = await session.get_slot()
    assert slot.config == SlotConfig()
    assert all("[上下文摘要]" not in m.text for m in await session.load_messages())
    assert await session.get_session_data("conversation_summary") == "summary #1"


async def test_summary_failure_does_not_block(
    make_session: MakeSession, caplog: pytest.LogCaptureFixture
) -> None:
    def responder(request: LlmRequest) -> str | Exception:
        if request.purpose == "summary":
            return LlmError("summary model is down")
        return "the answer"

    provider = MockProvider(responder=responder)
    session = make_session(provider, summary=TINY, mode=FocusedConfig())
    with caplog.at_level(logging.ERROR, logger="agentcore.autosummary"):
        reply = await session.submit_turn(GETTING_LONG)
    assert reply.text == "the answer"
    assert len(await session.history()) == 2
    assert await get_conversation_summary(session) is None
    assert (await session.get_slot()).config.focused == FocusedConfig()
    (record,) = caplog.records
    message = record.getMessage()
    assert "session=chat" in message and "turn=0" in message
    assert "summary model is down" in message


async def test_summary_stream_path(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=TINY, mode=FocusedConfig())
    stream = session.submit_turn_stream(GETTING_LONG)
    text = "".join([event.text async for event in stream])
    assert text == "Sure, noted."
    assert len(provider.calls_for("summary")) == 1
    assert await get_conversation_summary(session) == "summary #1"
    state = await session.get_session_data("autosummary/default")
    assert state["last_summary_turn"] == 0  # the streamed turn's index, not the advanced one
    assert session.turn_index == 1


def test_summary_format_messages() -> None:
    messages = [
        Message.system("你是一个翻译助手"),
        Message.user("把这段英文翻译成中文"),
        Message.assistant("请提供英文文本", [ToolUseBlock("call_1", "translate", {"q": "x"})]),
        Message.tool_result("call_1", "这是中文翻译" * 100),
        Message.tool_result("call_2", "failed", is_error=True),
        Message.user_image(url="https://example.com/a.png"),
        Message.user("谢谢"),
        Message.assistant("不客气"),
    ]
    text = format_messages_as_text(messages, max_tool_result_chars=6)
    assert text.split("\n\n") == [
        "System: 你是一个翻译助手",
        "User: 把这段英文翻译成中文",
        "Assistant: 请提供英文文本 [Tool: translate]",
        "Tool Result [call_1]: 这是中文翻译",
        "Tool Error [call_2]: failed",
        "User: [image: a.png]",
        "User: 谢谢",
        "Assistant: 不客气",
    ]


async def test_summary_skipped_for_empty_messages(make_session: MakeSession) -> None:
    # Every message fits in the verbatim tail: there is nothing to summarize.
    config = SummaryConfig(**TINY_WINDOW, trigger_token_ratio=0.025, keep_recent_tokens=40)
    provider = MockProvider(responder=Replies(), usage=Usage(90, 10))
    session = make_session(provider, summary=config, mode=FocusedConfig())
    await session.submit_turn("hi")
    assert provider.calls_for("summary") == []
    assert format_messages_as_text([]) == ""


async def test_summary_not_generated_if_max_context_unreachable(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    config = SummaryConfig(max_context_tokens=10**9)
    session = make_session(provider, summary=config, mode=FocusedConfig())
    for i in range(20):
        await session.submit_turn(f"a fairly long message number {i} " * 20)
    assert provider.calls_for("summary") == []
