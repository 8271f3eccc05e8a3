"""Cost on the spans: cache reads and writes, and dollars at the model's list price."""

from __future__ import annotations

import pytest
from otel_helpers import Traces

from agentcore import Agent, AgentBuilder, AgentSession, InMemoryStore, LlmResponse, Message, Usage
from agentcore.pricing import PriceTable
from agentcore.testing import MockProvider

USAGE = Usage(20_000, 500, cached_input_tokens=15_000, cache_write_tokens=3_000)


def _session(traces: Traces, model: str) -> AgentSession:
    reply = LlmResponse(Message.assistant("Hi!"), usage=USAGE, model=model)
    builder = AgentBuilder().provider(MockProvider([reply])).store(InMemoryStore())
    builder.load_plugins(True).setting("otel_tracer_provider", traces.provider)
    return AgentSession(Agent("helper", model=model), "cost-1", builder.build())


async def test_the_chat_and_turn_spans_carry_cache_use_and_dollars(traces: Traces) -> None:
    session = _session(traces, "claude-sonnet-4-5-20250929")
    await session.submit_turn("Hello")
    turn, chat = traces.spans()
    expected = PriceTable().dollars(USAGE, "claude-sonnet-4-5")
    # 2,000 uncached at $3, 15,000 read at $0.30, 3,000 written at $3.75, 500 out at $15 per M.
    assert expected == pytest.approx(0.006 + 0.0045 + 0.01125 + 0.0075)
    for span in (turn, chat):
        attributes = dict(span.attributes or {})
        assert attributes["gen_ai.usage.cache_read.input_tokens"] == 15_000
        assert attributes["gen_ai.usage.cache_creation.input_tokens"] == 3_000
        assert attributes["agentcore.usage.cost_usd"] == pytest.approx(expected)


async def test_a_model_without_a_list_price_gets_no_cost(traces: Traces) -> None:
    session = _session(traces, "my-local-model")
    await session.submit_turn("Hello")
    for span in traces.spans():
        attributes = dict(span.attributes or {})
        assert "agentcore.usage.cost_usd" not in attributes
        assert attributes["gen_ai.usage.input_tokens"] == 20_000
