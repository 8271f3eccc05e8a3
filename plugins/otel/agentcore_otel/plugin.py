"""The hook implementations: a span for each turn, model call and tool call.

- ``on_turn_start`` opens the turn span (``invoke_agent {agent}``) at
  ``ctx.started_at`` and, for a turn of ``submit_turn``, makes it current,
  so spans made during the turn (an HTTP client's, a tool's own) nest under
  it. A streamed turn's span is never made current: the stream runs in its
  consumer's context between events, so the span would stay current in the
  consumer's own code and, were the stream abandoned, could not be detached
  where it was attached. Its model and tool calls are parented to it
  explicitly, and each tool's span is current while the tool runs.
- ``after_model_call`` records each model call (``chat {model}``) as a child
  of the turn span, from its start time and duration: the turn's calls and
  the summary calls a plugin makes through ``ctx.provider``, marked with
  ``agentcore.request.purpose``, with its usage: tokens, cache reads and
  writes, and its cost in dollars at the model's list price (``cost.py``); the
  turn span gets the same for the turn's own usage when it closes.
- ``before_tool_call`` / ``after_tool_call`` open and close a span per tool
  call (``execute_tool {name}``), current while the tool runs.
- ``after_summary`` / ``on_summary_error`` record each summary
  (``summarize {slot}``) as a child of the turn span, from the time
  ``before_summary`` saw it start, with the gate's quality record
  (``agentcore.summary.*``: verdict, stop reason, overlap, identifiers kept
  and lost, the route that made it, the verdicts refused on the way); the
  summary's model calls are its siblings.
- A ``post_turn_end`` wrapper closes the turn span once every
  ``post_turn_end`` implementation (an inline summary included) has run;
  ``on_turn_error`` closes it with the error instead.

Without an OpenTelemetry SDK the API's tracer is a no-op: nothing is recorded.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Sequence
from contextvars import Token
from importlib import metadata
from typing import TYPE_CHECKING, Any

from attrs import define, field
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from agentcore import ModelCallInfo, PluginSetting, ToolCallInfo, TurnContext, hookimpl
from agentcore.plugin_api import StashKey
from agentcore_otel import attributes as attr
from agentcore_otel.content import arguments_json, finish_reason, messages_json, output_json
from agentcore_otel.cost import usage_attributes
from agentcore_otel.settings import SETTINGS, capture_content, tracer_provider
from agentcore_otel.summaries import applied_attributes, error_quality, quality_attributes

if TYPE_CHECKING:  # autosummary's types: the plugin loads without autosummary
    from agentcore_autosummary import RecallInfo, SummaryInfo, SummaryRequestInfo

TRACER_NAME = "agentcore_otel"
"""The instrumentation scope of every span the plugin makes."""

_VERSION = metadata.version("agentcore-otel")


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)


@define
class _TurnTrace:
    """One turn's tracing state, kept in ``ctx.stash`` under :data:`STATE_KEY`."""

    tracer: Tracer
    span: Span
    capture: bool
    token: Token[otel_context.Context] | None = None
    ended: bool = False
    tools: dict[str, tuple[Span, Token[otel_context.Context]]] = field(factory=dict)
    summaries: dict[str, float] = field(factory=dict)
    """Per slot: when the summary being made started, in seconds since the epoch."""

    def parent(self) -> otel_context.Context:
        return trace.set_span_in_context(self.span)


STATE_KEY = StashKey[_TurnTrace]("agentcore_otel turn")
"""The ``ctx.stash`` key that holds the turn's tracing state."""


def _state(ctx: TurnContext) -> _TurnTrace | None:
    return ctx.stash.get(STATE_KEY, None)


def _detach(span: Span, token: Token[otel_context.Context] | None) -> None:
    """Undo an attach, but only where it was made (the span is still current there)."""
    if token is not None and trace.get_current_span() is span:
        otel_context.detach(token)


def _record_error(span: Span, error: BaseException, description: str | None = None) -> None:
    span.set_attribute(attr.ERROR_TYPE, type(error).__qualname__)
    span.record_exception(error)
    span.set_status(Status(StatusCode.ERROR, description or str(error) or type(error).__name__))


@hookimpl
def register_settings() -> Sequence[PluginSetting]:
    """``otel_capture_content`` and ``otel_tracer_provider``."""
    return SETTINGS


@hookimpl
def on_turn_start(ctx: TurnContext) -> None:
    """Open the turn span; make it current unless the turn is streamed."""
    tracer = tracer_provider(ctx.config).get_tracer(TRACER_NAME, _VERSION)
    agent = ctx.session.agent
    span = tracer.start_span(
        f"{attr.OPERATION_INVOKE_AGENT} {agent.name}",
        kind=SpanKind.INTERNAL,
        start_time=_ns(ctx.started_at),
        attributes={
            attr.OPERATION_NAME: attr.OPERATION_INVOKE_AGENT,
            attr.AGENT_NAME: agent.name,
            attr.CONVERSATION_ID: ctx.session_id,
            attr.SESSION_ID: ctx.session_id,
            attr.TURN_INDEX: ctx.turn_index,
            attr.TURN_STREAMED: ctx.is_stream,
            attr.SLOT_ID: ctx.slot.id,
        },
    )
    if agent.model is not None:
        span.set_attribute(attr.REQUEST_MODEL, agent.model)
    state = _TurnTrace(tracer, span, capture_content(ctx.config))
    if state.capture:
        if agent.system_prompt:
            span.set_attribute(attr.SYSTEM_INSTRUCTIONS, agent.system_prompt)
        span.set_attribute(attr.INPUT_MESSAGES, messages_json(ctx.messages))
    if not ctx.is_stream:
        # A streamed turn runs in its consumer's context between events: a span attached
        # here would stay current in the consumer's code, and if the consumer drops the
        # stream its closing runs elsewhere, where the attach cannot be undone.
        state.token = otel_context.attach(state.parent())
    ctx.stash[STATE_KEY] = state


@hookimpl(wrapper=True)
def on_turn_end(ctx: TurnContext) -> Generator[None, list[object], list[object]]:
    """Close the turn span when the turn is cancelled while its ``on_turn_end`` hooks run.

    The turn is stored by then (it succeeded), but ``post_turn_end`` will not
    run, so its span would otherwise stay open.
    """
    try:
        return (yield)
    except BaseException:
        _end_turn(ctx, None)
        raise


@hookimpl(wrapper=True)
def post_turn_end(ctx: TurnContext) -> Generator[None, list[object], list[object]]:
    """Close the turn span after every ``post_turn_end`` implementation has run."""
    try:
        return (yield)
    finally:
        _end_turn(ctx, None)


@hookimpl
def on_turn_error(ctx: TurnContext, error: BaseException) -> None:
    """Close the turn span with the error that stopped the turn."""
    _end_turn(ctx, error)


def _end_turn(ctx: TurnContext, error: BaseException | None) -> None:
    state = _state(ctx)
    if state is None or state.ended:
        return
    state.ended = True
    span = state.span
    if error is not None:
        _record_error(span, error)
    else:
        if ctx.usage is not None:
            span.set_attributes(usage_attributes(ctx.usage, _turn_model(ctx)))
        if ctx.response is not None:
            stop = finish_reason(ctx.response.stop_reason)
            span.set_attribute(attr.RESPONSE_FINISH_REASONS, [stop])
            if state.capture:
                span.set_attribute(
                    attr.OUTPUT_MESSAGES,
                    output_json(ctx.response.message, ctx.response.stop_reason),
                )
    span.end()
    _detach(span, state.token)
    state.token = None


@hookimpl
def after_model_call(ctx: TurnContext, call: ModelCallInfo) -> None:
    """Record the finished model call as a child of the turn span."""
    state = _state(ctx)
    if state is not None:
        tracer, parent, capture = state.tracer, state.parent(), state.capture
    else:
        tracer = tracer_provider(ctx.config).get_tracer(TRACER_NAME, _VERSION)
        parent, capture = None, capture_content(ctx.config)
    model = call.model
    request = call.request
    attributes: dict[str, Any] = {
        attr.OPERATION_NAME: attr.OPERATION_CHAT,
        attr.PROVIDER_NAME: _provider_name(call.provider),
        attr.CONVERSATION_ID: ctx.session_id,
        attr.SESSION_ID: ctx.session_id,
        attr.PURPOSE: call.purpose,
        attr.TURN_INDEX: ctx.turn_index,
        attr.REQUEST_STREAM: call.streamed,
    }
    if model is not None:
        attributes[attr.REQUEST_MODEL] = model
    if request.max_tokens is not None:
        attributes[attr.REQUEST_MAX_TOKENS] = request.max_tokens
    span = tracer.start_span(
        f"{attr.OPERATION_CHAT} {model}" if model else attr.OPERATION_CHAT,
        context=parent,
        kind=SpanKind.CLIENT,
        start_time=_ns(call.started_at),
        attributes=attributes,
    )
    if capture:
        span.set_attribute(attr.INPUT_MESSAGES, messages_json(request.messages))
    response = call.response
    if response is not None:
        if response.model is not None:
            span.set_attribute(attr.RESPONSE_MODEL, response.model)
        span.set_attribute(attr.RESPONSE_FINISH_REASONS, [finish_reason(response.stop_reason)])
        if response.usage is not None:
            span.set_attributes(usage_attributes(response.usage, response.model or model))
        if capture:
            span.set_attribute(
                attr.OUTPUT_MESSAGES, output_json(response.message, response.stop_reason)
            )
    if call.error is not None:
        _record_error(span, call.error)
    span.end(end_time=_ns(call.started_at + call.duration))


def _turn_model(ctx: TurnContext) -> str | None:
    """The model a turn asked for: the agent's, else its provider's default."""
    if ctx.session.agent.model is not None:
        return ctx.session.agent.model
    default = getattr(ctx.provider, "model", None)
    return default if isinstance(default, str) else None


def _provider_name(provider: object) -> str:
    """``openai``, ``anthropic``... from the provider's display name, else its class."""
    name = getattr(provider, "display_name", None)
    if isinstance(name, str) and name:
        return name.lower()
    return type(provider).__name__


@hookimpl
def before_tool_call(ctx: TurnContext, call: ToolCallInfo) -> None:
    """Open the tool call's span; it is current while the tool runs."""
    state = _state(ctx)
    if state is None:
        return
    span = state.tracer.start_span(
        f"{attr.OPERATION_EXECUTE_TOOL} {call.name}",
        context=state.parent(),
        kind=SpanKind.INTERNAL,
        start_time=_ns(call.started_at),
        attributes={
            attr.OPERATION_NAME: attr.OPERATION_EXECUTE_TOOL,
            attr.TOOL_NAME: call.name,
            attr.TOOL_CALL_ID: call.call_id,
            attr.TOOL_TYPE: "function",
            attr.CONVERSATION_ID: ctx.session_id,
            attr.SESSION_ID: ctx.session_id,
            attr.TURN_INDEX: ctx.turn_index,
        },
    )
    if state.capture:
        span.set_attribute(attr.TOOL_CALL_ARGUMENTS, arguments_json(call.arguments))
    token = otel_context.attach(trace.set_span_in_context(span))
    state.tools[call.call_id] = (span, token)


@hookimpl
def after_tool_call(ctx: TurnContext, call: ToolCallInfo) -> None:
    """Close the tool call's span with its outcome."""
    state = _state(ctx)
    if state is None or call.call_id not in state.tools:
        return
    span, token = state.tools.pop(call.call_id)
    result = call.result
    if result is not None:
        span.set_attribute(attr.TOOL_IS_ERROR, result.is_error)
        if state.capture:
            span.set_attribute(attr.TOOL_CALL_RESULT, result.text)
    if call.error is not None:
        _record_error(span, call.error, result.text if result is not None else None)
    elif result is not None and result.is_error:
        span.set_attribute(attr.ERROR_TYPE, "tool_error")
        span.set_status(Status(StatusCode.ERROR, result.text))
    duration = call.duration or 0.0
    span.end(end_time=_ns(call.started_at + duration))
    _detach(span, token)


@hookimpl(optionalhook=True)  # added by autosummary, when installed
def after_recall(ctx: TurnContext, recall: RecallInfo) -> None:
    """Record a recall as an event of its turn's span: the query, what it found and added."""
    state = _state(ctx)
    if state is None or state.ended:
        return
    attributes: dict[str, Any] = {
        attr.RECALL_WAY: recall.way,
        attr.RECALL_FOUND: list(recall.found),
        attr.RECALL_TOKENS: recall.tokens,
        attr.SLOT_ID: recall.slot_id,
    }
    if state.capture:
        attributes[attr.RECALL_QUERY] = recall.query
    state.span.add_event(attr.RECALL_EVENT, attributes)


@hookimpl(optionalhook=True)  # added by autosummary, when installed
def before_summary(ctx: TurnContext, request: SummaryRequestInfo) -> None:
    """Note when the summary of ``request.slot_id`` starts, for its span."""
    state = _state(ctx)
    if state is not None:
        state.summaries[request.slot_id] = time.time()


@hookimpl(optionalhook=True)  # added by autosummary, when installed
def after_summary(ctx: TurnContext, summary: SummaryInfo) -> None:
    """Record the applied summary's span, with its quality record."""
    _summary_span(ctx, summary.slot_id, summary.duration, applied_attributes(summary), None)


@hookimpl(optionalhook=True)  # added by autosummary, when installed
def on_summary_error(ctx: TurnContext, request: SummaryRequestInfo, error: BaseException) -> None:
    """Record the failed (or refused) summary's span, with the refusal's quality record."""
    attributes: dict[str, Any] = {
        attr.SUMMARY_APPLIED: False,
        attr.SUMMARY_REASON: request.reason,
        attr.SUMMARY_COVERS: request.covers,
    }
    quality = error_quality(error)
    if quality is not None:
        attributes.update(quality_attributes(quality))
    _summary_span(ctx, request.slot_id, 0.0, attributes, error)


def _summary_span(
    ctx: TurnContext,
    slot_id: str,
    duration: float,
    attributes: dict[str, Any],
    error: BaseException | None,
) -> None:
    state = _state(ctx)
    now = time.time()
    if state is not None:
        tracer, parent = state.tracer, state.parent()
        started = state.summaries.pop(slot_id, now - duration)
    else:
        tracer = tracer_provider(ctx.config).get_tracer(TRACER_NAME, _VERSION)
        parent, started = None, now - duration
    attributes.update(
        {
            attr.OPERATION_NAME: attr.OPERATION_SUMMARIZE,
            attr.CONVERSATION_ID: ctx.session_id,
            attr.SESSION_ID: ctx.session_id,
            attr.TURN_INDEX: ctx.turn_index,
            attr.SLOT_ID: slot_id,
        }
    )
    span = tracer.start_span(
        f"{attr.OPERATION_SUMMARIZE} {slot_id}",
        context=parent,
        kind=SpanKind.INTERNAL,
        start_time=_ns(min(started, now)),
        attributes=attributes,
    )
    if error is not None:
        _record_error(span, error)
    span.end(end_time=_ns(now))
