"""Helpers shared by the otel plugin tests."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Traces:
    """A real SDK tracer provider whose spans land in memory."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def spans(self) -> list[ReadableSpan]:
        """The finished spans, in start order."""
        return sorted(self.exporter.get_finished_spans(), key=lambda span: span.start_time or 0)

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [span for span in self.spans() if span.name.startswith(prefix)]
