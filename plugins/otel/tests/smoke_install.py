"""Run in a clean virtualenv after ``pip install "agentcore[autosummary,otel]" opentelemetry-sdk``.

A chat with a summary, traced with no registration code: the otel plugin is found
through its entry point and sends its spans to OpenTelemetry's global tracer provider.
"""

from __future__ import annotations

import asyncio
import faulthandler
import importlib.metadata
import sys

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, LlmRequest
from agentcore.testing import MockProvider
from agentcore_autosummary import compact


def reply(request: LlmRequest) -> str:
    if request.purpose != "summary":
        return "Hello!"
    said = " ".join(message.text for message in request.messages)
    # Each summary names the newest words it read (reversed, so no run of them is
    # copied): the gate applies an update that adds what the new messages said.
    latest = ", ".join(reversed(said.split()[-6:]))
    return f"They greeted each other and spoke of {latest} ({len(said)} characters read)."


async def main() -> int:
    dists = ("agentcore", "agentcore-autosummary", "agentcore-otel")
    versions = {dist: importlib.metadata.version(dist) for dist in dists}
    print("installed:", versions)
    assert set(versions.values()) == {"0.3.0"}, versions
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=reply))
        .setting(
            "summary_config",
            {
                "max_context_tokens": 600,
                "max_summary_tokens": 32,
                "keep_recent_tokens": 10,
                "trigger_token_ratio": 0.02,
            },
        )
        .build()
    )
    agent = Agent("smoke", system_prompt="Be brief.", model="mock-model")
    session = AgentSession(agent, "smoke-session", bundle, FocusedConfig())
    await session.submit_turn("Hi there! " + "This message crosses the tiny watermark. " * 4)
    spans = sorted(exporter.get_finished_spans(), key=lambda span: span.start_time or 0)
    for span in spans:
        attributes = dict(span.attributes or {})
        print(
            f"span: {span.name!r} purpose={attributes.get('agentcore.request.purpose')} "
            f"input_tokens={attributes.get('gen_ai.usage.input_tokens')} "
            f"session={attributes.get('gen_ai.conversation.id')}"
        )
    names = [span.name for span in spans]
    expected = ["invoke_agent smoke", "chat mock-model", "summarize default", "chat mock-model"]
    assert names == expected, names
    purposes = [dict(span.attributes or {}).get("agentcore.request.purpose") for span in spans]
    assert purposes == [None, "turn", None, "summary"], purposes
    # A summary the user asks for (autosummary's compact(), between turns) is traced too.
    await session.submit_turn("And now? " + "More words for the summary to fold. " * 4)
    exporter.clear()
    info = await compact(session)
    print("compacted:", info.covers, "messages;", info.tokens_before, "->", info.tokens_after)
    spans = sorted(exporter.get_finished_spans(), key=lambda span: span.start_time or 0)
    reasons = [dict(span.attributes or {}).get("agentcore.summary.reason") for span in spans]
    print("compact spans:", [span.name for span in spans], reasons)
    assert "summarize default" in [span.name for span in spans]
    assert "compact" in reasons, reasons
    return 0


if __name__ == "__main__":
    # A hang fails the run within minutes, with every thread's traceback, instead of
    # holding it until CI's time runs out.
    faulthandler.dump_traceback_later(300, exit=True)
    sys.exit(asyncio.run(main()))
