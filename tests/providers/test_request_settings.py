"""An agent's reply cap, temperature and stop sequences reach both providers' wire."""

from __future__ import annotations

from agentcore import Agent, AgentBuilder, AgentSession
from agentcore.providers import AnthropicProvider, OpenAIProvider

from .loopback import LlmServer
from .payloads import anthropic_message, openai_completion

AGENT = Agent("capped", max_tokens=64, temperature=0.3, stop=["END", "###"])


def _session(provider: OpenAIProvider | AnthropicProvider, agent: Agent) -> AgentSession:
    bundle = AgentBuilder().provider(provider).load_plugins(False).build()
    return AgentSession(agent, "settings", bundle)


async def test_openai_body_carries_the_agents_settings(
    llm_server: LlmServer, openai_provider: OpenAIProvider
) -> None:
    llm_server.reply_json(openai_completion("ok"))
    llm_server.reply_json(openai_completion("ok"))
    await _session(openai_provider, AGENT).submit_turn("hi")
    body = llm_server.requests[0].json
    assert body["temperature"] == 0.3
    assert body["stop"] == ["END", "###"]
    assert 64 in (body.get("max_tokens"), body.get("max_completion_tokens"))

    await _session(openai_provider, Agent("plain")).submit_turn("hi")
    plain = llm_server.requests[1].json
    assert not {"temperature", "stop", "max_tokens", "max_completion_tokens"} & set(plain)


async def test_anthropic_body_carries_the_agents_settings(
    llm_server: LlmServer, anthropic_provider: AnthropicProvider
) -> None:
    llm_server.reply_json(anthropic_message("ok"))
    await _session(anthropic_provider, AGENT).submit_turn("hi")
    body = llm_server.requests[0].json
    assert body["temperature"] == 0.3
    assert body["stop_sequences"] == ["END", "###"]
    assert body["max_tokens"] == 64
