"""Plugin modules outside agentcore: one declares a hook, another implements it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import recall_lowercaser
import recall_plugin

from agentcore import AgentBuilder, AgentSession, ConfigError
from agentcore.plugins import list_plugins
from agentcore.testing import MockProvider


@pytest.fixture(autouse=True)
def _fresh_queries() -> Iterator[None]:
    recall_plugin.queries.clear()
    yield
    recall_plugin.queries.clear()


def _builder() -> AgentBuilder:
    return AgentBuilder().provider(MockProvider(responder=lambda r: "ok")).load_plugins(False)


async def test_a_plugin_module_declares_a_hook_that_another_module_implements(
    agent: Any,
) -> None:
    bundle = _builder().plugin(recall_lowercaser).plugin(recall_plugin).build()
    session = AgentSession(agent, "s", bundle)
    await session.submit_turn("WHERE Is The Config?")
    assert recall_plugin.queries == [{"text": "where is the config?"}]
    assert bundle.plugin_manager.hook.before_recall.spec is not None
    hooks = {info.name: info.hooks for info in list_plugins(bundle.plugin_manager)}
    assert [name for name, names in hooks.items() if "before_recall" in names]


async def test_without_the_implementer_the_hook_is_declared_and_called_empty(agent: Any) -> None:
    session = AgentSession(agent, "s", _builder().plugin(recall_plugin).build())
    await session.submit_turn("Hello")
    assert recall_plugin.queries == [{"text": "Hello"}]


def test_without_the_declaring_plugin_the_hook_does_not_exist() -> None:
    bundle = _builder().plugin(recall_lowercaser).build()  # optionalhook: it loads
    assert bundle.plugin_manager.hook.before_recall.spec is None  # known to nobody

    class Strict:
        from agentcore import hookimpl

        @hookimpl
        def before_recall(self, ctx: Any, query: Any) -> None: ...

    with pytest.raises(ConfigError, match="unknown hook 'before_recall'"):
        _builder().plugin(Strict()).build()
