"""The LangGraph pre_model_hook against the real prebuilt agent (offline, a fake chat model)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import pytest
from adapter_helpers import summarizer
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from agentcore import ConfigError
from agentcore.budget import reply_reservation
from agentcore.formats import from_langchain
from agentcore.tokens import get_token_counter
from agentcore_autosummary import CORRECTION_KEY, Compactor, CompactorState, SummaryConfig
from agentcore_autosummary.adapters.langgraph import compaction_hook, compaction_state_schema

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from langgraph.prebuilt import create_react_agent

WINDOW = 2048
COUNTER = get_token_counter(None)


class Recording(BaseChatModel):
    """Answers every request and keeps what it received; reports ``factor`` times its size."""

    received: list[list[BaseMessage]] = Field(default_factory=list)
    factor: int = 0

    @property
    def _llm_type(self) -> str:
        return "recording"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Recording:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.received.append(list(messages))
        reply = AIMessage(content="answer " + "green table music light " * 10)
        if self.factor:
            served = COUNTER.count_messages(from_langchain(messages)) * self.factor
            usage = {"input_tokens": served, "output_tokens": 40, "total_tokens": served + 40}
            reply = AIMessage(content=reply.content, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=reply)])


def agent(model: Recording, prompt: str = "Be brief.") -> Any:
    compactor = Compactor(summarizer(), SummaryConfig(max_context_tokens=WINDOW))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(
            model,
            [],
            prompt=prompt,
            pre_model_hook=compaction_hook(compactor, system_prompt=prompt),
            state_schema=compaction_state_schema(),
            checkpointer=InMemorySaver(),
        )


async def test_the_model_gets_the_compacted_messages_and_the_graph_keeps_all() -> None:
    model = Recording()
    graph = agent(model)
    thread = {"configurable": {"thread_id": "t"}}
    for turn in range(40):
        question = HumanMessage(f"question {turn}: " + "apple river stone cloud " * 10)
        state = await graph.ainvoke({"messages": [question]}, thread)  # the async hook
    assert len(state["messages"]) == 80  # the graph's history stays whole
    stored = CompactorState.from_json(state["compaction"])
    assert stored.summary is not None and stored.covered > 0
    last = model.received[-1]
    assert isinstance(last[0], SystemMessage) and last[0].content == "Be brief."
    assert "Summary" in str(last[1].content)
    sizes = [COUNTER.count_messages(from_langchain(request)) for request in model.received]
    assert max(sizes) + reply_reservation(None, WINDOW) <= WINDOW
    # Messages sent verbatim are the graph's own objects: their ids are kept.
    ids = {message.id for message in state["messages"]}
    verbatim = [message for message in last[1:] if message.id is not None]
    assert len(verbatim) >= len(last) - 3  # all but the prompt, the summary and its reply
    assert all(message.id in ids for message in verbatim)
    assert last[-1].id == state["messages"][-2].id  # the newest question, the one it answered


async def test_the_usage_the_model_reports_sizes_the_requests_in_its_tokens() -> None:
    model = Recording(factor=2)  # the server counts twice what agentcore does
    graph = agent(model)
    thread = {"configurable": {"thread_id": "t"}}
    for turn in range(40):
        question = HumanMessage(f"question {turn}: " + "apple river stone cloud " * 10)
        state = await graph.ainvoke({"messages": [question]}, thread)
    served = [2 * COUNTER.count_messages(from_langchain(request)) for request in model.received]
    assert max(served) + reply_reservation(None, WINDOW) <= WINDOW
    assert CORRECTION_KEY in CompactorState.from_json(state["compaction"]).data


def test_the_sync_hook_runs_under_invoke() -> None:
    model = Recording()
    graph = agent(model)
    thread = {"configurable": {"thread_id": "t"}}
    for turn in range(3):
        state = graph.invoke({"messages": [HumanMessage(f"hello {turn}")]}, thread)
    assert len(state["messages"]) == 6
    assert CompactorState.from_json(state["compaction"]).calls == 3
    assert [m.content for m in model.received[-1][1:]] == [m.content for m in state["messages"][:5]]


def test_bad_arguments_are_refused_naming_them() -> None:
    compactor = Compactor(summarizer(), SummaryConfig(max_context_tokens=WINDOW))
    with pytest.raises(ConfigError, match="compactor must be a Compactor"):
        compaction_hook("compactor")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="state_key must be a non-empty str"):
        compaction_hook(compactor, state_key="")
    hook = compaction_hook(compactor)
    with pytest.raises(ConfigError, match="expects the agent's state"):
        hook.invoke({"no messages": []})
