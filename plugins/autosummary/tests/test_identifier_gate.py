"""The gate refuses a summary that loses identifiers of the previous one (issue 24).

Lost: held by the previous summary, dropped by the new one, and neither
mentioned by the covered messages nor given a new value there. A summary is
refused when it loses at least 2 of them and more than two thirds.
"""

from __future__ import annotations

import re

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
from agentcore_autosummary.judging.gate import judge

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
    assert kept == ("5,000 requests",)
    assert lost == ("/srv/app", "40,000 dollars", "8443")


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


BENCH_PREVIOUS = (
    "**Infrastructure Decisions**: Database version (MySQL 8), staging cluster "
    "(stg-harbor-03).\n\n**Security review outcome**: the auth provider will be Keycloak, "
    "self-hosted. Also the upload limit for attachments is 25 MB per file.\n\n"
    "**Performance notes**: set the cache TTL to 900 seconds for catalogue pages. The code "
    "freeze is April 28."
)


def test_a_real_models_rewrite_that_drops_names_sizes_and_dates_is_refused() -> None:
    # The 3rd summary of the quality bench's project conversation (1.5B model): it
    # rewrote the summary from the new messages alone.
    quality = judge(
        "The team is planning the infrastructure for Harbor, including database version and "
        "staging cluster details. The team has decided to use PostgreSQL 16 instead of MySQL 8 "
        "due to row-level security requirements.",
        BENCH_PREVIOUS,
        [
            Message.user(
                "Change of plan from the ops review: the database is now PostgreSQL 16 "
                "instead, since we need row-level security."
            ),
            Message.user("How should we name the feature branches for the portal work?"),
        ],
        "end_turn",
    )
    assert quality.verdict == "lost"
    assert quality.identifiers_kept == ("MySQL 8",)
    assert quality.identifiers_lost == (
        "April 28",
        "25 MB",
        "900 seconds",
        "stg-harbor-03",
        "Keycloak",
        "TTL",
    )


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
        new_messages = re.findall(r"```text\n(.*?)\n```", request.messages[-1].text, re.DOTALL)
        latest = " ".join(new_messages[-1].split()[-10:])
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
            SummaryConfig(
                max_context_tokens=2000,
                trigger_token_ratio=0.3,
                debounce_turns=1,
                strategy="incremental",
                retention_check="off",  # lost identifiers refuse only without quotes
                request_shape="transcript",
            ),
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


class ErrorRecorder(Recorder):
    def __init__(self) -> None:
        super().__init__()
        self.errors: list[BaseException] = []

    @hookimpl
    def on_summary_error(self, ctx: TurnContext, error: BaseException) -> None:
        self.errors.append(error)


async def test_a_summary_every_route_loses_identifiers_of_is_applied_with_its_verdict() -> None:
    # A summarizer that always drops what the previous summary held: no retry can do
    # better, and a failed attempt would leave whole messages out, so the summary is
    # applied, its quality record saying what it lost.
    def respond(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        return PREVIOUS if "/srv/app" not in request.messages[-1].text else "More steps."

    recorder = ErrorRecorder()
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .store(InMemoryStore())
        .load_plugins(True)
        .plugin(recorder)
        .summary_config(
            SummaryConfig(
                max_context_tokens=2000,
                trigger_token_ratio=0.3,
                debounce_turns=1,
                strategy="incremental",
                retention_check="off",  # lost identifiers refuse only without quotes
                request_shape="transcript",
            )
        )
        .build()
    )
    session = AgentSession(Agent("assistant"), "lossy", bundle, FocusedConfig())
    for number in range(12):
        await session.submit_turn(
            f"step {number}: " + " ".join(f"w{number}x{i}" for i in range(60))
        )
    assert recorder.errors == []
    assert len(recorder.applied) >= 2
    second = recorder.applied[1]
    assert second.summary == "More steps."
    assert second.quality is not None
    assert (second.quality.verdict, second.quality.route) == ("lost", "resummary")
    assert second.quality.refused == ("lost",)
    assert "/srv/app" in second.quality.identifiers_lost


ZH_PREVIOUS = "客户是华信物流，负责人是王磊。数据库用MongoDB，测试环境是test-cn-02，预算是12万元。"


def test_chinese_values_the_messages_changed_are_superseded_and_the_rest_kept() -> None:
    quality = judge(
        "客户是华信物流，负责人是王磊。数据库改为PostgreSQL，测试环境是test-cn-02，预算是15万元。",
        ZH_PREVIOUS,
        [Message.user("数据库改为PostgreSQL。"), Message.user("财务批准了，预算现在是15万元。")],
        "end_turn",
    )
    assert quality.verdict == "kept"
    assert quality.identifiers_kept == ("test-cn-02", "华信物流", "王磊")
    assert quality.identifiers_lost == ()


def test_a_chinese_summary_dropping_names_nothing_superseded_is_refused() -> None:
    quality = judge(
        "预算是12万元。", ZH_PREVIOUS, [Message.user("接口文档什么时候写？")], "end_turn"
    )
    assert quality.verdict == "lost"
    assert quality.identifiers_lost == ("test-cn-02", "MongoDB", "华信物流", "王磊")


async def test_a_full_summary_is_judged_against_what_its_request_read() -> None:
    # strategy="full" reads the newest 30,000 characters of the history: an identifier of
    # the previous summary that only older, unread messages hold is lost by the new one,
    # not excused by messages the summarizer never saw.
    recorder = Recorder()
    # Each later summary names the newest step, a word of its input: not a copy.
    later_steps = [f"The user lists more steps, up to step {n}." for n in range(50)]
    summaries = iter(["The app runs from /srv/app.", *later_steps])

    def respond(request: LlmRequest) -> str:
        return next(summaries) if request.purpose == "summary" else "Noted."

    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .store(InMemoryStore())
        .load_plugins(True)
        .plugin(recorder)
        .summary_config(
            SummaryConfig(
                trigger="cumulative",
                strategy="full",
                max_context_tokens=200_000,
                trigger_token_ratio=0.01,
                debounce_turns=1,
                keep_recent_tokens=0,
                request_shape="transcript",
            )
        )
        .build()
    )
    session = AgentSession(Agent("assistant"), "full", bundle, FocusedConfig())
    await session.submit_turn("We deploy from /srv/app. " + "setup detail " * 100)
    for number in range(40):
        await session.submit_turn(f"step {number}: " + "more detail " * 120)
    assert recorder.applied[0].summary.startswith("The app runs from /srv/app.")
    later = [info.quality for info in recorder.applied[1:] if info.quality is not None]
    # While the first message is still read, /srv/app is excused (the input holds it);
    # once the 30,000 characters read no longer reach it, it is lost.
    assert any("/srv/app" not in quality.identifiers_lost for quality in later)
    assert "/srv/app" in later[-1].identifiers_lost
