"""Structured summaries and the retention check."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from summary_helpers import Replies

from agentcore import AgentSession, FocusedConfig
from agentcore.testing import MockProvider
from agentcore_autosummary import (
    STRUCTURED_SUMMARY_PROMPT,
    SummaryConfig,
    get_conversation_summary,
)

MakeSession = Callable[..., AgentSession]

FACTS = (
    "Deploy https://example.com/app/v2?env=prod. to /srv/app/config.yaml, "
    "ticket JIRA-1432, build 123e4567-e89b-12d3-a456-426614174000, 12,500 users, "
    "mail ops@example.org on 2024-05-01. We meet at 9."
)


def test_structured_style_brings_its_prompt_and_refuses_a_custom_one() -> None:
    config = SummaryConfig(summary_style="structured")
    assert config.summary_prompt == STRUCTURED_SUMMARY_PROMPT
    with pytest.raises(ValueError, match="summary_style='structured'"):
        SummaryConfig(summary_style="structured", summary_prompt="Short: {messages}")
    with pytest.raises(ValueError, match="retention_check"):
        SummaryConfig(retention_check="maybe")  # type: ignore[arg-type]


def _config(**fields: object) -> SummaryConfig:
    return SummaryConfig(
        trigger_messages=4,
        keep_recent_messages=2,
        debounce_turns=0,
        **fields,  # type: ignore[arg-type]
    )


async def _two_turns(session: AgentSession) -> None:
    await session.submit_turn(
        FACTS + " Please remember all of this for the release plan: each of these points "
        "matters to the team and to the people who will review the plan with us."
    )
    await session.submit_turn("Thanks, that is everything for the release plan today " * 3)


async def test_structured_summary_asks_for_sections(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(
        provider, summary=_config(summary_style="structured", request_shape="transcript")
    )
    await _two_turns(session)
    (call,) = provider.calls_for("summary")
    prompt = call.messages[-1].text
    for heading in ("## Goals", "## Decisions", "## Facts and identifiers", "## Open tasks"):
        assert heading in prompt
    assert "JIRA-1432" in prompt


async def test_retention_append_lists_what_the_summary_left_out(
    make_session: MakeSession,
) -> None:
    def responder(request: object) -> str:
        if getattr(request, "purpose", None) == "summary":
            return "The user plans a release; ticket JIRA-1432 is open."
        return "Noted."

    session = make_session(
        MockProvider(responder=responder),
        summary=_config(retention_check="append"),
        mode=FocusedConfig(),
    )
    await _two_turns(session)
    summary = await get_conversation_summary(session)
    assert summary is not None
    first, also = summary.split("\n")
    assert first == "The user plans a release; ticket JIRA-1432 is open."
    assert also == (
        "Also mentioned: https://example.com/app/v2?env=prod, ops@example.org, "
        "123e4567-e89b-12d3-a456-426614174000, /srv/app/config.yaml, 2024-05-01, 12,500 users"
    )
    context = await session.load_messages()
    assert "/srv/app/config.yaml" in context[1].text


async def test_retention_log_warns_and_keeps_the_summary(
    make_session: MakeSession, caplog: pytest.LogCaptureFixture
) -> None:
    session = make_session(
        MockProvider(responder=Replies()),
        summary=_config(retention_check="log"),
        mode=FocusedConfig(),
    )
    with caplog.at_level(logging.WARNING, logger="agentcore.autosummary"):
        await _two_turns(session)
    assert await get_conversation_summary(session) == "summary #1"
    assert "leaves out 7 identifier(s)" in caplog.text
    assert "JIRA-1432" in caplog.text
