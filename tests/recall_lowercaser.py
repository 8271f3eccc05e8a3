"""Another third-party plugin: implements recall_plugin's ``before_recall`` hook."""

from __future__ import annotations

from typing import Any

from agentcore import TurnContext, hookimpl


@hookimpl(optionalhook=True)  # loads without recall_plugin too
def before_recall(ctx: TurnContext, query: dict[str, Any]) -> None:
    """Look queries up in lower case."""
    query["text"] = query["text"].lower()
