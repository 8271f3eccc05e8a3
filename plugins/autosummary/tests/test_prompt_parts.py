"""The summary request: the previous summary and the new messages as separate parts."""

from __future__ import annotations

from collections.abc import Callable

from summary_helpers import Replies

from agentcore import AgentSession, FocusedConfig
from agentcore.testing import MockProvider
from agentcore_autosummary import (
    DEFAULT_SUMMARY_PROMPT,
    ENGLISH_SUMMARY_PROMPT,
    ENGLISH_UPDATE_SUMMARY_PROMPT,
    UPDATE_SUMMARY_PROMPT,
    SummaryConfig,
)
from agentcore_autosummary.requesting.prompt import NO_PREVIOUS_SUMMARY

MakeSession = Callable[..., AgentSession]


def _config(**fields: object) -> SummaryConfig:
    return SummaryConfig(
        strategy="incremental",  # an update request: the previous summary and the messages
        trigger_messages=4,
        keep_recent_messages=2,
        debounce_turns=1,
        request_shape="transcript",  # the parts of a transcript request are what is tested
        **fields,  # type: ignore[arg-type]
    )


async def _second_request(make_session: MakeSession, reply: str, **fields: object) -> str:
    replies = Replies()

    def respond(request: object) -> str:
        if getattr(request, "purpose", None) == "summary":
            return reply
        return replies(request)  # type: ignore[arg-type]

    provider = MockProvider(responder=respond)
    session = make_session(provider, summary=_config(**fields), mode=FocusedConfig())
    for number in range(12):
        await session.submit_turn(
            f"Step {number}: the budget is {40 + number},000 dollars. " + "More notes. " * 40
        )
        if len(provider.calls_for("summary")) >= 2:
            break
    first, second, *_ = provider.calls_for("summary")
    if "{previous}" in str(fields.get("summary_prompt", "")):
        assert NO_PREVIOUS_SUMMARY in first.messages[-1].text
    return second.messages[-1].text


async def test_an_update_has_the_previous_summary_as_its_own_part_without_label_or_indent(
    make_session: MakeSession,
) -> None:
    prompt = await _second_request(
        make_session, "- budget: 41,000 dollars\n- owner: Dana Whitfield"
    )
    assert prompt.startswith(ENGLISH_UPDATE_SUMMARY_PROMPT.split("{previous}")[0])
    previous, messages = prompt.rsplit("```text", 1)
    assert "```text\n- budget: 41,000 dollars\n- owner: Dana Whitfield\n```" in previous
    assert "[上下文摘要]" not in prompt and "System:" not in prompt
    assert "User: Step" in messages and "Dana Whitfield" not in messages


async def test_a_custom_prompt_without_previous_gets_the_summary_as_the_first_entry(
    make_session: MakeSession,
) -> None:
    prompt = await _second_request(
        make_session, "budget: 41,000 dollars", summary_prompt="Summarize:\n{messages}"
    )
    assert prompt.startswith("Summarize:\n```text\nSystem: [上下文摘要] budget: 41,000 dollars\n\n")


async def test_a_custom_prompt_may_place_the_previous_summary_itself(
    make_session: MakeSession,
) -> None:
    prompt = await _second_request(
        make_session,
        "budget: 41,000 dollars",
        summary_prompt="New:\n{messages}\nOld:\n{previous}\nMerge them.",
    )
    new, old = prompt.split("Old:")
    assert "User: Step" in new and "budget: 41,000 dollars" not in new
    assert old == "\n```text\nbudget: 41,000 dollars\n```\nMerge them."


async def test_a_chinese_conversation_is_asked_for_in_the_seed_prompt_and_an_english_one_in_english(
    make_session: MakeSession,
) -> None:
    async def requests(step: str) -> list[str]:
        provider = MockProvider(
            responder=lambda r: "摘要：预算四万美元。" if r.purpose == "summary" else "好的。"
        )
        config = _config()
        session = make_session(provider, summary=config, mode=FocusedConfig())
        for number in range(12):
            await session.submit_turn(step.format(number=number))
            if len(provider.calls_for("summary")) >= 2:
                break
        return [call.messages[-1].text for call in provider.calls_for("summary")[:2]]

    first, second = await requests(
        "第{number}步：预算是四万美元，负责人是王芳。" + "更多说明。" * 40
    )
    assert first.startswith(DEFAULT_SUMMARY_PROMPT.split("{messages}")[0])
    assert second.startswith(UPDATE_SUMMARY_PROMPT.split("{previous}")[0])
    # The previous summary is in Chinese; the messages decide, and they are English.
    first, second = await requests("Step {number}: the budget is 40,000 dollars. " + "Notes. " * 40)
    assert first.startswith(ENGLISH_SUMMARY_PROMPT.split("{messages}")[0])
    assert second.startswith(ENGLISH_UPDATE_SUMMARY_PROMPT.split("{previous}")[0])
    assert "摘要：预算四万美元。" in second
