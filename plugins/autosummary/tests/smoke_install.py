"""Run in a clean virtualenv after ``pip install "agentcore[autosummary]"``: one summarizing turn.

The plugin must be active with no registration code: found through its entry point.
"""

from __future__ import annotations

import asyncio
import faulthandler
import importlib.metadata
import sys

from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, LlmRequest
from agentcore.cli import build_parser
from agentcore.plugins import list_plugins
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryInfo, compact, get_conversation_summary


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
    # The summary is applied as data: fenced behind its label, its text unchanged.
    assert "[上下文摘要] <summary>\nThey greeted each other.\n</summary>" in context, context
    # Compacting at once, without the watermark: the plugin's compact() between turns.
    quiet = (
        AgentBuilder()
        .provider(MockProvider(responder=reply))
        .setting("summary_config", {"max_context_tokens": 2000, "trigger_token_ratio": 1.0})
        .build()
    )
    later = AgentSession(Agent("smoke", system_prompt="Be brief."), "later", quiet, FocusedConfig())
    for number in range(3):
        await later.submit_turn(f"message {number}: " + "words to fold away. " * 6)
    info = await compact(later, "keep the greetings")
    print("compacted:", info.covers, "messages;", info.tokens_before, "->", info.tokens_after)
    assert isinstance(info, SummaryInfo) and info.reason == "compact" and info.covers > 0
    # The plugin's commands, found through its entry point.
    help_text = " ".join(build_parser().format_help().split())
    print("agentcore --help:", help_text)
    assert "(from autosummary)" in help_text and "demo" in help_text
    return 0


if __name__ == "__main__":
    # A hang fails the run within minutes, with every thread's traceback, instead of
    # holding it until CI's time runs out.
    faulthandler.dump_traceback_later(300, exit=True)
    sys.exit(asyncio.run(main()))
