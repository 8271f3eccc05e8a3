"""The gate refuses a summary that loses identifiers of the previous one (issue 24).

Lost: held by the previous summary, dropped by the new one, and neither
mentioned by the covered messages nor given a new value there. A summary is
refused when it loses at least 2 of them and more than a third.
"""

from __future__ import annotations

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    Message,
    TurnContext,
    hookimpl,
)
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryConfig, SummaryInfo
from agentcore_autosummary.gate import judge

PREVIOUS = (
    "The rate limit is 5,000 requests per minute; the budget is 40,000 dollars; "
    "the app deploys to /srv/app on port 8443."
)


def _judge(summary: str, *messages: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    quality = judge(summary, PREVIOUS, [Message.user(text) for text in messages], "end_turn")
    return quality.verdict, quality.identifiers_kept, quality.identifiers_lost


def test_an_update_that_replaces_values_the_messages_changed_is_kept() -> None:
    verdict, kept, lost = _judge(
        "The rate limit is 2,500 requests per minute; the budget is 48,000 dollars; "
        "the app deploys to /srv/app on port 8443.",
        "The gateway cannot keep up: the rate limit is now 2,500 requests per minute.",
        "Load tests were added, so the budget is 48,000 dollars.",
    )
    assert verdict == "kept"
    assert kept == ("/srv/app", "8443") and lost == ()


def test_a_summary_dropping_identifiers_nothing_superseded_is_refused() -> None:
    verdict, kept, lost = _judge(
        "The rate limit is 5,000 requests per minute. The user asked about the logo.",
        "What colour should the logo be?",
    )
    assert verdict == "lost"
    assert kept == ("5,000",)
    assert lost == ("/srv/app", "40,000", "8443")


def test_one_lost_identifier_in_four_is_reported_but_not_refused() -> None:
    verdict, _, lost = _judge(
        "The rate limit is 5,000 requests per minute; the budget is 40,000 dollars; "
        "the app deploys to /srv/app.",
        "What colour should the logo be?",
    )
    assert verdict == "kept" and lost == ("8443",)


def test_identifiers_the_covered_messages_mention_are_not_lost() -> None:
    verdict, _, lost = _judge(
        "The user moved the app off the old server.",
        "We retire /srv/app and port 8443; the 5,000 limit and the 40,000 budget are gone.",
    )
    assert verdict == "kept" and lost == ()


class Recorder:
    def __init__(self) -> None:
        self.applied: list[SummaryInfo] = []

    @hookimpl
    def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
        self.applied.append(summary)


async def test_a_lossy_summary_is_retried_as_a_resummary_and_never_applied() -> None:
    requests: list[LlmRequest] = []

    def respond(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        requests.append(request)
        latest = " ".join(request.messages[-1].text.split()[-12:-2])
        if len(requests) == 1:
            return PREVIOUS
        if len(requests) == 2:
            return f"The user went through more steps. Later: {latest}."
        return f"{PREVIOUS} Later: {latest}."

    recorder = Recorder()
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .store(InMemoryStore())
        .load_plugins(True)
        .plugin(recorder)
        .setting(
            "summary_config",
            SummaryConfig(max_context_tokens=2000, trigger_token_ratio=0.3, debounce_turns=1),
        )
        .build()
    )
    session = AgentSession(Agent("assistant"), "lost", bundle, FocusedConfig())
    for number in range(12):
        await session.submit_turn(
            f"step {number}: " + " ".join(f"w{number}x{i}" for i in range(60))
        )
    assert len(recorder.applied) >= 2
    assert not any("more steps" in info.summary for info in recorder.applied)
    second = recorder.applied[1].quality
    assert second is not None
    assert (second.route, second.refused, second.identifiers_lost) == ("resummary", ("lost",), ())
    assert "/srv/app" in second.identifiers_kept
