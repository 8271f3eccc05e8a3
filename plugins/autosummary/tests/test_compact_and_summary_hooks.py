"""Compacting and the summary hooks autosummary adds, seen from a plugin and a user."""

from __future__ import annotations

from typing import Any

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    ReadonlySessionError,
    TurnContext,
    hookimpl,
)
from agentcore.errors import ServiceUnavailableError
from agentcore.testing import MockProvider
from agentcore_autosummary import (
    CompactError,
    SummaryInfo,
    SummaryRequestInfo,
    compact,
    get_conversation_summary,
)
from agentcore_autosummary import plugin as autosummary_plugin

LONG = "the deployment uses /srv/app/config.toml and port 8443; " * 8


def _summarizing_provider(fail: bool = False) -> MockProvider:
    def respond(request: LlmRequest) -> Any:
        if request.purpose == "summary":
            if fail:
                return ServiceUnavailableError("the summarizer is down")
            return "They set up the deployment."
        return "Noted."

    return MockProvider(responder=respond)


async def _session(agent: Agent, *plugins: object, fail: bool = False, **config: Any) -> Any:
    builder = AgentBuilder().provider(_summarizing_provider(fail)).store(InMemoryStore())
    builder.load_plugins(False).plugin(autosummary_plugin)
    for plugin in plugins:
        builder.plugin(plugin)
    settings = {
        "max_context_tokens": 4000,
        "max_summary_tokens": 200,
        "keep_recent_tokens": 100,
        "trigger_token_ratio": 1.0,
        "retention_check": "off",  # the summaries asserted here are the summarizer's own
        **config,
    }
    builder.setting("summary_config", settings)
    session = AgentSession(agent, "s", builder.build(), FocusedConfig())
    for index in range(4):
        await session.submit_turn(f"step {index}: {LONG}")
    return session


async def test_compact_summarizes_now_with_focus_instructions(agent: Agent) -> None:
    session = await _session(agent, request_shape="transcript")
    provider = session.bundle.provider
    assert await get_conversation_summary(session) is None  # the watermark was never reached
    result = await compact(session, "keep the API design decisions")
    assert result.reason == "compact" and result.summary == "They set up the deployment."
    assert result.start == 0 and 0 < result.covers <= 8
    assert result.tokens_after < result.tokens_before
    (call,) = provider.calls_for("summary")
    prompt = call.messages[-1].text
    assert "keep the API design decisions" in prompt
    assert prompt.index("keep the API") < prompt.index("step 0")
    slot = await session.get_slot()
    assert slot.config.focused is not None
    assert slot.config.focused.summary_covers == result.covers
    assert await get_conversation_summary(session) == result.summary
    # What is left is the last exchange's reply: nothing more to fold.
    with pytest.raises(CompactError, match="nothing to compact"):
        await compact(session)


async def test_compact_on_a_short_conversation_in_a_large_window(agent: Agent) -> None:
    # Issue 20: 12 turns in a 100,000-token window were refused ("every message ...
    # is within the recent tail"); a user who asks to compact wants it now.
    builder = AgentBuilder().provider(_summarizing_provider()).load_plugins(False)
    builder.plugin(autosummary_plugin).setting("summary_config", {"max_context_tokens": 100_000})
    bundle = builder.build()
    session = AgentSession(agent, "short", bundle, FocusedConfig())
    for number in range(12):
        await session.submit_turn(f"point {number}")
    result = await compact(session)
    assert result.covers == 22 and result.summary == "They set up the deployment."
    assert [m.text for m in await session.load_messages()][-2:] == ["point 11", "Noted."]


async def test_compact_refuses_a_full_slot_and_reports_a_failed_summary(agent: Agent) -> None:
    session = await _session(agent, fail=True)
    with pytest.raises(CompactError, match="summary failed") as raised:
        await compact(session)
    assert isinstance(raised.value.__cause__, ServiceUnavailableError)
    assert (await session.get_slot()).config.focused.summary_override is None
    await session.set_mode("full")
    with pytest.raises(CompactError, match="Full mode"):
        await compact(session)


async def test_hook_before_summary(agent: Agent) -> None:
    class Editor:
        @hookimpl
        def before_summary(self, ctx: TurnContext, request: SummaryRequestInfo) -> None:
            request.prompt = "Only the port numbers, please.\n{messages}"
            request.messages = request.messages[:1]

    session = await _session(agent, Editor())
    result = await compact(session)
    (call,) = session.bundle.provider.calls_for("summary")
    prompt = call.messages[-1].text
    assert prompt.startswith("Only the port numbers") and "step 0" in prompt
    assert "step 1" not in prompt  # the hook narrowed the messages read...
    assert result.covers > 1  # ...not what the summary covers

    class Veto:
        @hookimpl
        def before_summary(self, ctx: TurnContext, request: SummaryRequestInfo) -> bool:
            return False

    vetoed = await _session(agent, Veto())
    with pytest.raises(CompactError, match="vetoed"):
        await compact(vetoed)
    assert vetoed.bundle.provider.calls_for("summary") == []


async def test_hook_after_summary(agent: Agent) -> None:
    seen: list[SummaryInfo] = []

    class Listener:
        @hookimpl
        def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
            seen.append(summary)

    # An automatic summary: the watermark is reached during the fourth turn.
    session = await _session(agent, Listener(), trigger_token_ratio=0.1, debounce_turns=10)
    (auto,) = seen
    assert auto.reason == "watermark" and auto.summary == "They set up the deployment."
    assert auto.usage is not None and auto.usage.total_tokens > 0 and auto.duration >= 0
    assert auto.tokens_after < auto.tokens_before
    assert await get_conversation_summary(session) == auto.summary


async def test_hook_on_summary_error(agent: Agent) -> None:
    errors: list[tuple[str, BaseException]] = []

    class Listener:
        @hookimpl
        def on_summary_error(
            self, ctx: TurnContext, request: SummaryRequestInfo, error: BaseException
        ) -> None:
            errors.append((request.reason, error))

    session = await _session(agent, Listener(), fail=True, trigger_token_ratio=0.1)
    # The automatic attempts failed quietly; the turns went on.
    assert session.turn_index == 4
    assert errors and all(reason == "watermark" for reason, _ in errors)
    assert all(isinstance(error, ServiceUnavailableError) for _, error in errors)


async def test_compact_without_summaries_enabled_is_a_clear_error(agent: Agent) -> None:
    bundle = AgentBuilder().provider(_summarizing_provider()).load_plugins(False).build()
    session = AgentSession(agent, "plain", bundle, FocusedConfig())
    with pytest.raises(CompactError, match="summaries are not enabled"):
        await compact(session)
    with pytest.raises(ValueError, match="instructions must be a non-empty str"):
        await compact(session, "  ")
    with pytest.raises(ValueError, match="session must be an AgentSession"):
        await compact("plain")  # type: ignore[arg-type]
    assert await get_conversation_summary(session) is None
    await session.set_session_data("conversation_summary", "stored by the original design")
    assert await get_conversation_summary(session) == "stored by the original design"


async def test_compact_of_a_readonly_session_is_refused(agent: Agent) -> None:
    session = await _session(agent)
    reader = AgentSession(agent, "s", session.bundle, readonly=True)
    with pytest.raises(ReadonlySessionError, match="read-only: cannot compact"):
        await compact(reader)
    assert session.bundle.provider.calls_for("summary") == []
