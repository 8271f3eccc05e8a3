"""Run in a clean virtualenv after ``pip install "agentcore[autosummary]"``: one summarizing turn.

The plugin must be active with no registration code: found through its entry point.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import sys

from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, LlmRequest
from agentcore.plugins import list_plugins
from agentcore.testing import MockProvider
from agentcore_autosummary import get_conversation_summary


def reply(request: LlmRequest) -> str:
    return "They greeted each other." if request.purpose == "summary" else "Hello!"


async def main() -> int:
    versions = {
        dist: importlib.metadata.version(dist) for dist in ("agentcore", "agentcore-autosummary")
    }
    print("installed:", versions)
    assert versions == {"agentcore": "0.3.0", "agentcore-autosummary": "0.3.0"}, versions
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=reply))
        .setting(
            "summary_config",
            {
                "max_context_tokens": 2000,
                "max_summary_tokens": 200,
                "trigger_token_ratio": 0.005,
                "keep_recent_tokens": 5,
            },
        )
        .build()
    )
    print("plugins:", [info.as_dict() for info in list_plugins(bundle.plugin_manager)])
    session = AgentSession(
        Agent("smoke", system_prompt="Be brief."), "smoke", bundle, FocusedConfig()
    )
    # Long enough that the summary (sent as a user message with an acknowledgement) is
    # smaller than what it replaces.
    await session.submit_turn("Hi there! " + "This message crosses the tiny watermark. " * 6)
    summary = await get_conversation_summary(session)
    context = [message.text for message in await session.load_messages()]
    print("summary:", summary)
    print("next context:", context)
    assert summary == "They greeted each other.", summary
    assert "[上下文摘要] They greeted each other." in context
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
