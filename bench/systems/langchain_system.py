"""LangChain 1.x: ``create_agent`` with ``SummarizationMiddleware``, fully offline.

The agent runs its own tool loop (``ToolNode``) over ``StructuredTool``\\ s and
keeps the thread in an ``InMemorySaver`` checkpointer. The middleware gets the
same trigger and kept tail as agentcore (75% and 25% of the budget, in
tokens), the bench's cl100k counter, and a separate fake model as
``summarizer``; its other settings are the library's defaults (the summarizer
input is trimmed to its last 4,000 tokens; ``--langchain-trim`` changes that).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import HumanMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from bench.conversations import TOOL_NAMES, Turn
from bench.settings import SYSTEM_PROMPT
from bench.systems.base import Env, System, TurnScript
from bench.systems.lc_fakes import summary_model, to_messages, token_counter, turn_model


class LangchainSystem(System):
    key: ClassVar[str] = "langchain"

    async def prepare(self, env: Env, history: Sequence[Turn]) -> None:
        settings = env.settings
        self._script = TurnScript()
        model = turn_model(self._script, env.recorder)
        middleware = SummarizationMiddleware(
            model=model,
            trigger=("tokens", settings.trigger_tokens),
            keep=("tokens", settings.keep_tokens),
            token_counter=token_counter(env.counting),
            summarizer=summary_model(env.recorder, env.summary_delay),
            trim_tokens_to_summarize=settings.langchain_trim,
        )
        tools = [
            StructuredTool.from_function(self._tool, name=name, description=f"The {name} tool.")
            for name in TOOL_NAMES
        ]
        self._agent: Any = create_agent(
            model,
            tools,
            system_prompt=SYSTEM_PROMPT,
            middleware=[middleware],
            checkpointer=InMemorySaver(),
        )
        self._config: Any = {"configurable": {"thread_id": "bench"}}
        if history:
            self._agent.update_state(self._config, {"messages": to_messages(history)})

    def _tool(self, key: str, query: str) -> str:
        """Answer a scripted tool call."""
        return self._script.output(key)

    async def run_turn(self, turn: Turn) -> None:
        self._script.start(turn)
        self._agent.invoke({"messages": [HumanMessage(turn.user)]}, self._config)
