"""The span of each summary carries the gate's quality record (issue 24)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode
from otel_helpers import Traces

from agentcore import AgentSession, FocusedConfig, LlmRequest, LlmResponse, Message
from agentcore.testing import MockProvider

MakeSession = Callable[..., AgentSession]
# Without quotes: a reply cut at its cap is then refused (with quotes, its whole
# sentences are applied), which the refused span's test needs.
SUMMARY = {
    "strategy": "incremental",  # its quality record: the previous summary and the routes
    "max_context_tokens": 2000,
    "trigger_token_ratio": 0.3,
    "debounce_turns": 1,
    "retention_check": "off",
}
FIRST = "The user deploys to /srv/app on port 8443."


def attrs_of(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _summarizer(bad: Callable[[int], bool]) -> Callable[[LlmRequest], str]:
    calls: list[LlmRequest] = []

    def respond(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        calls.append(request)
        if len(calls) == 1 or bad(len(calls)):
            return FIRST  # after the first: a copy of the previous summary
        latest = request.messages[-1].text.split()[-12:-2]
        return f"{FIRST} Later: {' '.join(latest)}."

    return respond


async def _run(
    make_session: MakeSession, respond: Callable[[LlmRequest], str | LlmResponse]
) -> None:
    session = make_session(MockProvider(responder=respond), summary=SUMMARY, mode=FocusedConfig())
    for number in range(12):
        await session.submit_turn(
            f"step {number}: " + " ".join(f"w{number}x{i}" for i in range(60))
        )


async def test_an_applied_summary_span_holds_its_quality_record(
    make_session: MakeSession, traces: Traces
) -> None:
    await _run(make_session, _summarizer(lambda number: False))
    first, second, *_ = traces.named("summarize")
    turns = {s.context.span_id for s in traces.named("invoke_agent") if s.context is not None}
    assert first.parent is not None and first.parent.span_id in turns  # under its turn
    values = attrs_of(first)
    assert values["agentcore.summary.applied"] is True
    assert values["agentcore.summary.verdict"] == "kept"
    assert values["agentcore.summary.stop_reason"] == "end_turn"
    assert values["agentcore.summary.route"] == "update"
    assert values["agentcore.summary.attempts"] == 1
    assert values["agentcore.summary.refused"] == ()
    assert values["agentcore.summary.overlap_with_previous"] == 0.0
    assert values["agentcore.summary.tokens_after"] < values["agentcore.summary.tokens_before"]
    later = attrs_of(second)
    assert later["agentcore.summary.identifiers_kept"] == 2  # /srv/app and 8443
    assert later["agentcore.summary.identifiers_lost"] == 0
    assert 0 < later["agentcore.summary.overlap_with_previous"] < 1
    # The span covers the summary's model call.
    call = next(
        s
        for s in traces.named("chat")
        if attrs_of(s)["agentcore.request.purpose"] == "summary" and s.parent == first.parent
    )
    assert first.start_time is not None and call.start_time is not None
    assert first.end_time is not None and call.end_time is not None
    assert first.start_time <= call.start_time and call.end_time <= first.end_time


async def test_a_retried_summary_span_says_which_route_made_it(
    make_session: MakeSession, traces: Traces
) -> None:
    await _run(make_session, _summarizer(lambda number: number == 2))
    second = attrs_of(traces.named("summarize")[1])
    assert second["agentcore.summary.applied"] is True
    assert second["agentcore.summary.route"] == "resummary"
    assert second["agentcore.summary.attempts"] == 2
    assert second["agentcore.summary.refused"] == ("copy",)


async def test_a_refused_summary_span_is_an_error_with_its_verdict(
    make_session: MakeSession, traces: Traces
) -> None:
    summary_calls: list[LlmRequest] = []

    def cut_after_the_first(request: LlmRequest) -> str | LlmResponse:
        if request.purpose == "summary":
            summary_calls.append(request)
            if len(summary_calls) > 1:
                # Every summary call after the first stops at its cap, by every route and
                # in either request shape.
                text = f"{FIRST} Later, the"
                return LlmResponse(Message.assistant(text), stop_reason="max_tokens")
        return _summarizer(lambda number: False)(request)

    await _run(make_session, cut_after_the_first)
    refused = [s for s in traces.named("summarize") if not attrs_of(s)["agentcore.summary.applied"]]
    assert refused
    values = attrs_of(refused[0])
    assert values["agentcore.summary.verdict"] == "truncated"
    assert values["agentcore.summary.stop_reason"] == "max_tokens"
    assert values["agentcore.summary.attempts"] >= 2
    assert values["error.type"] == "SummaryRejectedError"
    assert refused[0].status.status_code is StatusCode.ERROR


async def test_a_copy_the_retry_gave_again_is_an_applied_span_with_its_verdict(
    make_session: MakeSession, traces: Traces
) -> None:
    await _run(make_session, _summarizer(lambda number: number >= 2))
    _, *copies = traces.named("summarize")
    assert copies
    values = attrs_of(copies[0])
    assert values["agentcore.summary.applied"] is True
    assert values["agentcore.summary.verdict"] == "copy"
    assert values["agentcore.summary.route"] == "resummary"
    assert values["agentcore.summary.refused"] == ("copy",)
    assert values["agentcore.summary.overlap_with_previous"] == 1.0
    assert copies[0].status.status_code is not StatusCode.ERROR


def test_an_estimated_context_size_is_marked_on_the_span() -> None:
    from agentcore_autosummary import SummaryInfo
    from agentcore_otel.summaries import applied_attributes

    def info(estimated: bool) -> SummaryInfo:
        return SummaryInfo(
            slot_id="default",
            turn_index=1,
            reason="budget",
            summary="s",
            start=0,
            end=10,
            covers=10,
            tokens_before=90_000,
            tokens_after=85_000,
            tokens_estimated=estimated,
        )

    assert applied_attributes(info(True))["agentcore.summary.tokens_estimated"] is True
    assert "agentcore.summary.tokens_estimated" not in applied_attributes(info(False))


async def test_a_recall_is_an_event_of_its_turns_span(
    make_session: MakeSession, traces: Traces
) -> None:
    summary = {**SUMMARY, "recall": "auto"}
    session = make_session(
        MockProvider(responder=_summarizer(lambda number: False)),
        summary=summary,
        mode=FocusedConfig(),
    )
    await session.submit_turn("The billing service listens on port 8443, said the team.")
    for number in range(12):
        await session.submit_turn(f"step {number}: " + " ".join(f"w{n}" for n in range(60)))
    await session.submit_turn("Which port does the billing service listen on?")
    last = traces.named("invoke_agent")[-1]
    events = [event for event in last.events if event.name == "agentcore.recall"]
    assert len(events) == 1
    values: dict[str, Any] = dict(events[0].attributes or {})
    assert values["agentcore.recall.way"] == "auto"
    assert values["agentcore.recall.found"] == (0,)  # the first message: summarized away
    assert values["agentcore.recall.tokens"] > 0
    assert "agentcore.recall.query" not in values  # content is not captured by default
