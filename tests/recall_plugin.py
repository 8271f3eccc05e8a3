"""A third-party plugin with a hook of its own: ``before_recall``, declared with register_hookspecs.

Used by tests/test_plugin_hookspecs_external.py; nothing in agentcore knows of it.
"""

from __future__ import annotations

from typing import Any

import pluggy

from agentcore import TurnContext, hookimpl
from agentcore.hook_calls import call_hook
from agentcore.hookspecs import hook_policy, hookspec


class RecallSpecs:
    """The hooks this plugin adds."""

    @hookspec
    @hook_policy(isolate=True)
    def before_recall(self, ctx: TurnContext, query: dict[str, Any]) -> None:
        """The plugin is about to look ``query["text"]`` up; a hook may rewrite it.

        :param ctx: The turn's context.
        :param query: The query, editable.
        """


queries: list[dict[str, Any]] = []
"""Every query looked up, as the hooks left it."""


@hookimpl
def register_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Declare ``before_recall``."""
    pluginmanager.add_hookspecs(RecallSpecs)


@hookimpl
async def on_turn_start(ctx: TurnContext) -> None:
    """Look the user's message up, after the ``before_recall`` hooks had their say."""
    query: dict[str, Any] = {"text": ctx.messages[-1].text}
    pm = ctx.session.bundle.plugin_manager
    await call_hook(pm.hook.before_recall, ctx=ctx, query=query)
    queries.append(query)
