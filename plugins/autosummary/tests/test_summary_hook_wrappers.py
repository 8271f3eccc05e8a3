"""A ``wrapper=True`` implementation runs on every hook autosummary adds.

The hooks are those the plugin's ``register_hookspecs`` adds to a manager
(read from the manager, so a new one is covered without touching this
file); a summary that succeeds and one that fails, both through the public
``compact``, fire them, and a turn after the summary recalls. The core's own
hooks: ``tests/test_hook_wrappers.py``.
"""

from __future__ import annotations

from typing import Any

import pluggy
import pytest

from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, LlmRequest
from agentcore.errors import ServiceUnavailableError
from agentcore.plugins import create_plugin_manager
from agentcore.testing import MockProvider, wrapper_plugin
from agentcore_autosummary import CompactError, compact
from agentcore_autosummary import plugin as autosummary_plugin

LONG = "the deployment uses /srv/app/config.toml and port 8443; " * 8


def _spec_names(pm: pluggy.PluginManager) -> set[str]:
    callers: dict[str, pluggy.HookCaller] = vars(pm.hook)
    return {name for name, caller in callers.items() if caller.spec is not None}


def _plugin_hooks() -> list[str]:
    """The hooks autosummary adds to a plugin manager."""
    core = _spec_names(create_plugin_manager(load_entrypoints=False))
    with_plugin = create_plugin_manager(load_entrypoints=False, plugins=[autosummary_plugin])
    return sorted(_spec_names(with_plugin) - core)


async def _session(fail: bool, wrappers: object) -> AgentSession:
    def respond(request: LlmRequest) -> Any:
        if request.purpose == "summary":
            return ServiceUnavailableError("the summarizer is down") if fail else "Set up."
        return "Noted."

    builder = AgentBuilder().provider(MockProvider(responder=respond)).load_plugins(False)
    builder.plugin(autosummary_plugin).plugin(wrappers)
    builder.setting(
        "summary_config",
        {
            "max_context_tokens": 4000,
            "keep_recent_tokens": 100,
            "retention_check": "off",
            "recall": "auto",
        },
    )
    session = AgentSession(Agent("a"), "s", builder.build(), FocusedConfig())
    for index in range(4):
        await session.submit_turn(f"step {index}: {LONG}")
    return session


async def test_a_wrapper_runs_on_every_hook_autosummary_adds() -> None:
    names = _plugin_hooks()
    assert {"before_summary", "after_summary", "on_summary_error"} <= set(names)
    fired: list[str] = []
    wrappers = wrapper_plugin(names, fired)

    session = await _session(False, wrappers)
    result = await compact(session)
    assert result.summary == "Set up."
    await session.submit_turn("Which port does the deployment use?")  # recalls
    with pytest.raises(CompactError, match="summary failed"):
        await compact(await _session(True, wrappers))

    assert sorted(set(fired)) == names
