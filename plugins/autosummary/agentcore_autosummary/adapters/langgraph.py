"""A LangGraph ``pre_model_hook`` that compacts the messages before each model call.

:func:`compaction_hook` makes the hook for LangGraph's prebuilt agent
(``langgraph.prebuilt.create_react_agent(..., pre_model_hook=hook,
state_schema=compaction_state_schema())``). Before each model call it runs
the graph's ``messages`` through a :class:`~agentcore_autosummary.Compactor`
and hands the model the result as ``llm_input_messages``: the graph's
``messages`` keep the whole history, and the compactor state is kept in the
graph state under ``state_key`` (so a checkpointer stores it with the
thread). LangChain and LangGraph are imported only when these are called;
without them they raise ``ImportError`` naming the ``pip install``.
"""

from __future__ import annotations

from typing import Any

from agentcore import ConfigError, Usage
from agentcore_autosummary.compactor.compactor import Compaction, Compactor
from agentcore_autosummary.compactor.compactor_state import CompactorState

__all__ = ["compaction_hook", "compaction_state_schema"]

STATE_KEY = "compaction"
"""The graph-state key the hook keeps the compactor state under, by default."""


def _import(module: str, package: str) -> Any:
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as exc:
        raise ImportError(f"the LangGraph hook needs {package}: pip install {package}") from exc


def langchain_messages(messages: list[Any], result: Compaction) -> list[Any]:
    """The LangChain messages of ``result``: the caller's own objects for those sent verbatim."""
    from agentcore.plugin_api import to_langchain

    return [
        messages[source] if source is not None else to_langchain([message])[0]
        for message, source in zip(result.sent, result.sources, strict=True)
    ]


def last_usage(messages: list[Any]) -> Usage | None:
    """The usage the newest AI message reports (``usage_metadata``), if it reports one.

    In an agent's state the newest AI message answers the previous model call,
    the request the previous compaction made: the compactor learns from it
    how the server counts.
    """
    for message in reversed(messages):
        if getattr(message, "type", None) == "ai":
            metadata = getattr(message, "usage_metadata", None)
            if not metadata:
                return None
            try:
                return Usage(int(metadata["input_tokens"]), int(metadata["output_tokens"]))
            except (KeyError, TypeError, ValueError):
                return None
    return None


def compaction_state_schema(state_key: str = STATE_KEY) -> type:
    """The prebuilt agent's ``AgentState`` with ``state_key`` added for the compactor state.

    Pass it as ``create_react_agent(..., state_schema=compaction_state_schema())``:
    a graph state must declare every key a node writes.
    """
    prebuilt = _import("langgraph.prebuilt.chat_agent_executor", "langgraph")
    from typing_extensions import NotRequired

    annotations = {state_key: NotRequired[Any]}
    return type("CompactingAgentState", (prebuilt.AgentState,), {"__annotations__": annotations})


def compaction_hook(
    compactor: Compactor,
    *,
    system_prompt: str | None = None,
    reserve_tokens: int = 0,
    state_key: str = STATE_KEY,
) -> Any:
    """A ``pre_model_hook`` that sends the model the compacted ``messages`` of the graph state.

    :param compactor: The :class:`~agentcore_autosummary.Compactor` (its
        ``SummaryConfig.max_context_tokens`` is the model's window, its ``tools``
        the agent's tool definitions, counted).
    :param system_prompt: The agent's ``prompt`` when it is a string, which the agent
        puts before the hook's messages: counted, not returned.
    :param reserve_tokens: Room kept in each request for anything else the model
        call adds.
    :param state_key: The graph-state key holding the compactor state (declared by
        :func:`compaction_state_schema`).

    The hook is a runnable with a sync and an async form (``invoke`` and
    ``ainvoke`` of the graph both work). The usage the newest AI message
    reports (``usage_metadata``) teaches the compactor how the server counts.
    Messages it sends verbatim are the graph's own objects (ids kept); the
    summary and any note are new messages.
    """
    runnables = _import("langchain_core.runnables", "langchain-core")
    if not isinstance(compactor, Compactor):
        raise ConfigError(f"compactor must be a Compactor, got {compactor!r:.100}")
    if not isinstance(state_key, str) or not state_key:
        raise ConfigError(f"state_key must be a non-empty str, got {state_key!r}")

    def arguments(state: Any) -> tuple[list[Any], CompactorState | None]:
        if not isinstance(state, dict) or "messages" not in state:
            raise ConfigError(
                f"the pre_model_hook expects the agent's state (a dict with 'messages'), "
                f"got {state!r:.100}"
            )
        stored = state.get(state_key)
        return list(state["messages"]), None if stored is None else CompactorState.from_json(stored)

    def update(messages: list[Any], result: Compaction) -> dict[str, Any]:
        sent = langchain_messages(messages, result)
        return {"llm_input_messages": sent, state_key: result.state.to_json()}

    def hook(state: Any) -> dict[str, Any]:
        messages, stored = arguments(state)
        result = compactor.compact_sync(
            messages,
            stored,
            format="langchain",
            system_prompt=system_prompt,
            reserve_tokens=reserve_tokens,
            usage=last_usage(messages),
        )
        return update(messages, result)

    async def ahook(state: Any) -> dict[str, Any]:
        messages, stored = arguments(state)
        result = await compactor.compact(
            messages,
            stored,
            format="langchain",
            system_prompt=system_prompt,
            reserve_tokens=reserve_tokens,
            usage=last_usage(messages),
        )
        return update(messages, result)

    return runnables.RunnableLambda(hook, afunc=ahook, name="compaction_hook")
