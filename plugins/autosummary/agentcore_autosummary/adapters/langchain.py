"""A LangChain v1 agent middleware that compacts the messages of each model call.

:func:`compaction_middleware` makes a middleware for
``langchain.agents.create_agent(..., middleware=[...])``. Around each model
call it runs the request's messages through a
:class:`~agentcore_autosummary.Compactor` and calls the model with the
result; the agent state's ``messages`` keep the whole history, and the
compactor state is stored in the agent state under ``state_key`` (the
middleware declares it), so a checkpointer keeps it with the thread.
LangChain is imported only when this is called; without it, it raises
``ImportError`` naming ``pip install langchain``.
"""

from __future__ import annotations

from typing import Any

from agentcore import ConfigError
from agentcore_autosummary.adapters.langgraph import STATE_KEY, langchain_messages, last_usage
from agentcore_autosummary.compactor.compactor import Compaction, Compactor
from agentcore_autosummary.compactor.compactor_state import CompactorState

__all__ = ["compaction_middleware"]


def compaction_middleware(
    compactor: Compactor, *, reserve_tokens: int = 0, state_key: str = STATE_KEY
) -> Any:
    """An ``AgentMiddleware`` that sends the model the compacted messages of each request.

    :param compactor: The :class:`~agentcore_autosummary.Compactor` (its
        ``SummaryConfig.max_context_tokens`` is the model's window, its ``tools``
        the agent's tool definitions, counted).
    :param reserve_tokens: Room kept in each request for anything else the call adds.
    :param state_key: The agent-state key holding the compactor state.

    The request's system message is counted and left as it is; the usage the
    newest AI message reports (``usage_metadata``) teaches the compactor how
    the server counts. Both
    ``invoke`` and ``ainvoke`` of the agent work. Messages sent verbatim are
    the agent state's own objects (ids kept).
    """
    try:
        from langchain.agents import middleware as lc
        from langgraph.types import Command
        from typing_extensions import NotRequired
    except ImportError as exc:
        raise ImportError(
            "the LangChain middleware needs langchain: pip install langchain"
        ) from exc
    if not isinstance(compactor, Compactor):
        raise ConfigError(f"compactor must be a Compactor, got {compactor!r:.100}")
    if not isinstance(state_key, str) or not state_key:
        raise ConfigError(f"state_key must be a non-empty str, got {state_key!r}")
    schema = type(
        "CompactingAgentState", (lc.AgentState,), {"__annotations__": {state_key: NotRequired[Any]}}
    )

    def arguments(request: Any) -> tuple[list[Any], CompactorState | None, str | None]:
        stored = (request.state or {}).get(state_key)
        system = request.system_message.text if request.system_message is not None else None
        state = None if stored is None else CompactorState.from_json(stored)
        return list(request.messages), state, system or None

    def respond(response: Any, result: Compaction) -> Any:
        update: dict[str, Any] = {state_key: result.state.to_json()}
        if isinstance(response, lc.ExtendedModelResponse):
            inner = response.command
            if inner is not None and isinstance(inner.update, dict):
                update = {**inner.update, **update}
            response = response.model_response
        elif not isinstance(response, lc.ModelResponse):
            response = lc.ModelResponse(result=[response])
        return lc.ExtendedModelResponse(model_response=response, command=Command(update=update))

    class CompactionMiddleware(lc.AgentMiddleware):  # type: ignore[misc,unused-ignore]
        """Compacts the messages of each model call (see :func:`compaction_middleware`)."""

        state_schema = schema

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            """Call the model with the compacted messages; store the compactor state."""
            messages, state, system = arguments(request)
            result = compactor.compact_sync(
                messages,
                state,
                format="langchain",
                system_prompt=system,
                reserve_tokens=reserve_tokens,
                usage=last_usage(messages),
            )
            sent = langchain_messages(messages, result)
            return respond(handler(request.override(messages=sent)), result)

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            """:meth:`wrap_model_call` for ``ainvoke``."""
            messages, state, system = arguments(request)
            result = await compactor.compact(
                messages,
                state,
                format="langchain",
                system_prompt=system,
                reserve_tokens=reserve_tokens,
                usage=last_usage(messages),
            )
            sent = langchain_messages(messages, result)
            return respond(await handler(request.override(messages=sent)), result)

    return CompactionMiddleware()
