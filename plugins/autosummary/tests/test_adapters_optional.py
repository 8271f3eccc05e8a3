"""The adapters import without their libraries, and say which pip install they need."""

from __future__ import annotations

import sys

import pytest

from agentcore.testing import MockProvider
from agentcore_autosummary import Compactor


def test_the_adapters_import_without_their_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "agents",
        "langgraph.prebuilt.chat_agent_executor",
        "langchain_core.runnables",
        "langchain.agents",
    ):
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    from agentcore_autosummary.adapters.langchain import compaction_middleware
    from agentcore_autosummary.adapters.langgraph import compaction_hook, compaction_state_schema
    from agentcore_autosummary.adapters.openai_agents import CompactingSession

    compactor = Compactor(MockProvider(["unused"]))
    with pytest.raises(ImportError, match="pip install openai-agents"):
        CompactingSession(object(), compactor)
    with pytest.raises(ImportError, match="pip install langchain-core"):
        compaction_hook(compactor)
    with pytest.raises(ImportError, match=r"pip install langchain$"):
        compaction_middleware(compactor)
    with pytest.raises(ImportError, match="pip install langgraph"):
        compaction_state_schema()
