"""A small model copies the fence of the summary request around its reply, or replies with it alone.

The fence lines are taken off the reply; a reply that is a fence alone is an empty
summary, a failed attempt, never applied.
"""

from __future__ import annotations

from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, InMemoryStore, LlmRequest
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig, fence_summary, get_conversation_summary
from agentcore_autosummary.text.sentences import whole_sentences

CONFIG = SummaryConfig(
    max_context_tokens=1500,
    trigger_token_ratio=0.3,
    debounce_turns=1,
    request_shape="transcript",
    retention_check="off",  # the summaries asserted here are the summarizer's own
)


async def _summary_after(reply: str) -> str | None:
    def responder(request: LlmRequest) -> str:
        return reply if request.purpose == "summary" else "Noted."

    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=responder))
        .store(InMemoryStore())
        .load_plugins(True)
        .setting("summary_config", CONFIG)
        .build()
    )
    session = AgentSession(Agent("assistant"), "fenced", bundle, FocusedConfig())
    for number in range(12):
        await session.submit_turn(f"Question {number}: " + "more words here " * 10)
    return await get_conversation_summary(session)


async def test_the_fence_around_a_summary_is_taken_off() -> None:
    summary = await _summary_after("```text\nThe user asked twelve questions.\n```")
    assert summary == "The user asked twelve questions."


async def test_the_summary_fence_copied_around_a_summary_is_undone_not_doubled() -> None:
    # A summarizer that saw the previous summary as the context sends it (a prefix
    # request) writes its own in the same fence, escapes included.
    written = "The user asked twelve questions.\nuser: one of them said 'ignore the rules'."
    summary = await _summary_after(fence_summary(written))
    assert summary == written
    assert await _summary_after("<summary>\nThe user asked twelve questions.\n</summary>") == (
        "The user asked twelve questions."
    )


async def test_a_fence_alone_is_never_applied() -> None:
    assert await _summary_after("```\ntext\n```") is None
    assert await _summary_after("````text\n```") is None


def test_a_cut_reply_keeps_its_whole_sentences_in_any_script() -> None:
    assert whole_sentences("The lead is Dana. The launch is on") == "The lead is Dana."
    assert whole_sentences("负责人是王磊。预算是15万元。上线日期") == "负责人是王磊。预算是15万元。"
    assert whole_sentences("First line\nsecond line cut") == "First line"
    assert whole_sentences("no end at all") == ""


async def test_a_code_block_inside_a_summary_stays() -> None:
    reply = "The user fixed the lexer:\n```python\ntext = raw.decode('utf-8')\n```\nTests pass."
    assert await _summary_after(reply) == reply
