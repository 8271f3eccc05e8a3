"""End to end: the spans of a summarizing chat exported over OTLP/HTTP to a local collector."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, LlmRequest
from agentcore.testing import MockProvider


class Collector:
    """A stand-in for an OpenTelemetry collector: records what is POSTed to /v1/traces."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.content_types: list[str] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                collector.requests.append(request)
                collector.content_types.append(self.headers.get("Content-Type", ""))
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/v1/traces"

    def spans(self) -> list[Any]:
        return [
            span
            for request in self.requests
            for resource_spans in request.resource_spans
            for scope_spans in resource_spans.scope_spans
            for span in scope_spans.spans
        ]


@pytest.fixture
def collector() -> Iterator[Collector]:
    running = Collector()
    running.thread.start()
    try:
        yield running
    finally:
        running.server.shutdown()
        running.server.server_close()
        running.thread.join(timeout=5)


def value(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return tuple(value(item) for item in any_value.array_value.values)
    return getattr(any_value, kind) if kind else None


def attributes(span: Any) -> dict[str, Any]:
    return {item.key: value(item.value) for item in span.attributes}


def reply(request: LlmRequest) -> str:
    return "They greeted each other." if request.purpose == "summary" else "Hello!"


async def test_a_summarizing_chat_reaches_an_otlp_collector(collector: Collector) -> None:
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": "chat-service"}))
    exporter = OTLPSpanExporter(endpoint=collector.endpoint, timeout=5)
    tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
    try:
        bundle = (
            AgentBuilder()
            .provider(MockProvider(responder=reply))
            .load_plugins(True)
            .setting(
                "summary_config",
                {
                    "max_context_tokens": 600,
                    "max_summary_tokens": 32,
                    "keep_recent_tokens": 10,
                    "trigger_token_ratio": 0.02,
                },
            )
            .setting("otel_tracer_provider", tracer_provider)
            .build()
        )
        agent = Agent("greeter", system_prompt="Be brief.", model="mock-model")
        session = AgentSession(agent, "otlp-session", bundle, FocusedConfig())
        await session.submit_turn("Hi there! " + "This message crosses the tiny watermark. " * 4)
        assert tracer_provider.force_flush(timeout_millis=5000)
    finally:
        tracer_provider.shutdown()

    assert collector.content_types and set(collector.content_types) == {"application/x-protobuf"}
    resource = collector.requests[0].resource_spans[0].resource
    assert attributes(resource)["service.name"] == "chat-service"
    spans = sorted(collector.spans(), key=lambda span: span.start_time_unix_nano)
    assert [span.name for span in spans] == [
        "invoke_agent greeter",
        "chat mock-model",
        "summarize default",
        "chat mock-model",
    ]
    turn, turn_call, summarized, summary_call = spans
    assert summarized.parent_span_id == turn.span_id
    assert attributes(summarized)["agentcore.summary.verdict"] == "kept"
    assert turn_call.parent_span_id == summary_call.parent_span_id == turn.span_id
    assert turn_call.trace_id == summary_call.trace_id == turn.trace_id
    assert attributes(turn)["gen_ai.conversation.id"] == "otlp-session"
    assert attributes(turn_call)["agentcore.request.purpose"] == "turn"
    summary = attributes(summary_call)
    assert summary["agentcore.request.purpose"] == "summary"
    assert summary["gen_ai.operation.name"] == "chat"
    assert summary["gen_ai.usage.input_tokens"] > 0 and summary["gen_ai.usage.output_tokens"] > 0
    assert summary["gen_ai.response.finish_reasons"] == ("stop",)
    assert turn.end_time_unix_nano >= summary_call.end_time_unix_nano
