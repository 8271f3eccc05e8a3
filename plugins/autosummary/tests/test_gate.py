"""The gate (issue 24): a copy, a reply cut at its cap and an echo are refused, never applied."""

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
    LlmResponse,
    Message,
    SummaryInfo,
    SummaryRequestInfo,
    TurnContext,
    hookimpl,
)
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig

AGENT = Agent("assistant", system_prompt="You are a helpful assistant.")
CONFIG = SummaryConfig(max_context_tokens=2000, trigger_token_ratio=0.3, debounce_turns=1)
FIRST = "The user deploys to /srv/app on port 8443; the release is v2.1."


class Recorder:
    def __init__(self) -> None:
        self.applied: list[SummaryInfo] = []
        self.errors: list[BaseException] = []

    @hookimpl
    def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
        self.applied.append(summary)

    @hookimpl
    def on_summary_error(
        self, ctx: TurnContext, request: SummaryRequestInfo, error: BaseException
    ) -> None:
        self.errors.append(error)


def _words(number: int) -> str:
    return f"step {number}: " + " ".join(f"word{number}x{i}" for i in range(60))


async def _run(bad: Any, turns: int = 16) -> tuple[AgentSession, Recorder, list[str]]:
    """Summaries: first a good one, then ``bad(request)`` twice, then good ones again."""
    made: list[str] = []

    def respond(request: LlmRequest) -> Any:
        if request.purpose != "summary":
            return "Noted."
        made.append("call")
        if len(made) == 1:
            return FIRST
        if len(made) in (2, 3):
            return bad(request)
        latest = request.messages[-1].text.split()[-12:-2]
        return f"{FIRST} Later: {' '.join(latest)}."

    recorder = Recorder()
    provider = MockProvider(responder=respond)
    bundle = (
        AgentBuilder()
        .provider(provider)
        .store(InMemoryStore())
        .load_plugins(True)
        .plugin(recorder)
        .summary_config(CONFIG)
        .build()
    )
    session = AgentSession(AGENT, "gate", bundle, FocusedConfig())
    for number in range(turns):
        await session.submit_turn(_words(number))
    summaries = [info.summary for info in recorder.applied]
    return session, recorder, summaries


def _copy(request: LlmRequest) -> str:
    return FIRST


def _cut(request: LlmRequest) -> LlmResponse:
    return LlmResponse(
        Message.assistant(FIRST + " Later: the user asked"), stop_reason="max_tokens"
    )


def _echo(request: LlmRequest) -> str:
    conversation = request.messages[-1].text.split("```text", 1)[-1]
    return conversation.strip("`\n ")[:1500]


@pytest.mark.parametrize(
    ("bad", "verdict"),
    [(_copy, "copy"), (_cut, "truncated"), (_echo, "echo")],
    ids=["copy-of-previous", "stopped-at-cap", "echo-of-transcript"],
)
async def test_a_bad_summary_is_refused_and_retried_never_applied(bad: Any, verdict: str) -> None:
    session, recorder, summaries = await _run(bad)
    assert summaries[0] == FIRST
    assert len(summaries) >= 2  # retried later, and a good summary applied
    assert all(summary == FIRST or "Later:" in summary for summary in summaries)
    assert not any("User:" in summary for summary in summaries)  # no echo ever applied
    assert not any(summary.endswith("the user asked") for summary in summaries)  # nor a cut one
    assert len(recorder.errors) == 2
    assert all("summary refused" in str(error) for error in recorder.errors)
    quality = getattr(recorder.errors[0], "quality", None)
    if verdict != "truncated":
        assert quality is not None and quality.verdict == verdict
    final = await session.get_conversation_summary()
    assert final is not None and "Later:" in final


async def test_an_applied_summary_carries_its_quality_record() -> None:
    _, recorder, _ = await _run(lambda request: FIRST + " Later: more.")
    first, *later = recorder.applied
    assert first.quality is not None and first.quality.verdict == "kept"
    assert first.quality.stop_reason == "end_turn" and first.quality.overlap_with_previous == 0.0
    kept = later[-1].quality
    assert kept is not None and kept.verdict == "kept"
    assert "/srv/app" in kept.identifiers_kept and kept.identifiers_lost == ()
