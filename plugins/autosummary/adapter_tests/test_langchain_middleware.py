"""The LangChain v1 agent middleware against the real create_agent (offline, a fake model)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from adapter_helpers import summarizer
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from agentcore import ConfigError, ToolSpec
from agentcore.budget import reply_reservation
from agentcore.formats import from_langchain
from agentcore.tokens import get_token_counter
from agentcore_autosummary import Compactor, CompactorState, SummaryConfig
from agentcore_autosummary.adapters.langchain import compaction_middleware

WINDOW = 2048
COUNTER = get_token_counter(None)


@tool
def lookup(topic: str) -> str:
    """Look a topic up in the notes."""
    return f"notes on {topic}: " + "green table music light " * 15


FUNCTION = convert_to_openai_tool(lookup)["function"]
LOOKUP = ToolSpec(FUNCTION["name"], FUNCTION["description"], FUNCTION["parameters"])


class Recording(BaseChatModel):
    """Calls ``lookup`` every third request, else answers; keeps what it received."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recording"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Recording:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.received.append(list(messages))
        number = len(self.received)
        if messages[-1].type != "tool" and number % 3 == 0:
            call = {"name": "lookup", "args": {"topic": "rivers"}, "id": f"call_{number}"}
            reply = AIMessage(content="", tool_calls=[call])
        else:
            reply = AIMessage(content=f"answer {number}: " + "green table music light " * 10)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def agent(model: Recording) -> Any:
    compactor = Compactor(summarizer(), SummaryConfig(max_context_tokens=WINDOW), tools=[LOOKUP])
    return create_agent(
        model,
        [lookup],
        system_prompt="Be brief.",
        middleware=[compaction_middleware(compactor)],
        checkpointer=InMemorySaver(),
    )


def sizes(model: Recording) -> list[int]:
    return [
        COUNTER.count_messages(from_langchain(request)) + COUNTER.count_tools([LOOKUP])
        for request in model.received
    ]


async def test_each_model_call_gets_the_compacted_messages_and_the_state_keeps_all() -> None:
    model = Recording()
    graph = agent(model)
    thread = {"configurable": {"thread_id": "t"}}
    for turn in range(40):
        question = HumanMessage(f"question {turn}: " + "apple river stone cloud " * 10)
        state = await graph.ainvoke({"messages": [question]}, thread)
    assert len(state["messages"]) > 80  # every question, answer, call and result
    stored = CompactorState.from_json(state["compaction"])
    assert stored.summary is not None and stored.covered > 0
    last = model.received[-1]
    assert isinstance(last[0], SystemMessage) and last[0].content == "Be brief."
    assert "Summary" in str(last[1].content)
    assert max(sizes(model)) + reply_reservation(None, WINDOW) <= WINDOW
    calls = {c["id"] for m in last if isinstance(m, AIMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in last if m.type == "tool" and isinstance(m, ToolMessage)}
    assert calls == results  # no call without its result in any request
    ids = {message.id for message in state["messages"]}
    verbatim = [message for message in last[1:] if message.id is not None]
    assert verbatim and all(message.id in ids for message in verbatim)


def test_the_sync_middleware_runs_under_invoke() -> None:
    model = Recording()
    graph = agent(model)
    thread = {"configurable": {"thread_id": "t"}}
    for turn in range(3):
        state = graph.invoke({"messages": [HumanMessage(f"hello {turn}")]}, thread)
    assert CompactorState.from_json(state["compaction"]).calls == len(model.received)


def test_bad_arguments_are_refused_naming_them() -> None:
    compactor = Compactor(summarizer(), SummaryConfig(max_context_tokens=WINDOW))
    with pytest.raises(ConfigError, match="compactor must be a Compactor"):
        compaction_middleware("compactor")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="state_key must be a non-empty str"):
        compaction_middleware(compactor, state_key="")
