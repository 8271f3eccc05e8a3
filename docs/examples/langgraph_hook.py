"""A LangGraph prebuilt agent whose model calls are compacted to a 2,048-token window.

Runs offline: a fake LangChain chat model answers the turns and agentcore's
MockProvider writes the summaries; both count the tokens of every request
they receive. Needs ``pip install langgraph agentcore-autosummary``.

    python docs/examples/langgraph_hook.py
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent

from agentcore import LlmRequest, ToolSpec
from agentcore.formats import from_langchain
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary import Compactor, SummaryConfig
from agentcore_autosummary.adapters.langgraph import compaction_hook, compaction_state_schema

WINDOW = 2048
REPLY_TOKENS = 256  # the reply each request reserves
TURNS = 300
counter = get_token_counter(None)
WORDS = ["apple", "river", "stone", "cloud", "green", "table", "music", "light"]
SIZES: list[int] = []  # every request the chat model received, reply reserved


def words(count: int, seed: int) -> str:
    """``count`` words, varied by ``seed``."""
    return " ".join(WORDS[(seed * 5 + i * 3) % len(WORDS)] for i in range(count))


@tool
def lookup(topic: str) -> str:
    """Look a topic up in the notes."""
    return f"notes on {topic}: {words(60, len(topic))}"


function = convert_to_openai_tool(lookup)["function"]
LOOKUP = ToolSpec(function["name"], function["description"], function["parameters"])


class FakeChatModel(BaseChatModel):
    """Answers every request; calls ``lookup`` every third turn; counts each request."""

    @property
    def _llm_type(self) -> str:
        return "fake-counting"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> FakeChatModel:
        """The model itself: it knows its one tool."""
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        size = counter.count_messages(from_langchain(messages)) + counter.count_tools([LOOKUP])
        SIZES.append(size + REPLY_TOKENS)
        number = len(SIZES)
        if not isinstance(messages[-1], ToolMessage) and number % 3 == 0:
            call = {"name": "lookup", "args": {"topic": words(2, number)}, "id": f"call_{number}"}
            reply = AIMessage(content="", tool_calls=[call])
        else:
            reply = AIMessage(content=f"reply {number}: {words(40, number)}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


class Summarizer:
    """The summary model: a new summary each call; counts each request."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.provider = MockProvider(responder=self.respond)

    def respond(self, request: LlmRequest) -> str:
        """A summary of ``request``, a new one each time."""
        self.sizes.append(counter.count_messages(request.messages) + (request.max_tokens or 0))
        return f"Summary {len(self.sizes)}: the user asked about {words(8, len(self.sizes))}."


def main() -> dict[str, int]:
    """Run the conversation; return what it measured."""
    SIZES.clear()
    summarizer = Summarizer()
    prompt = "You answer questions about the notes."
    compactor = Compactor(
        summarizer.provider,
        SummaryConfig(max_context_tokens=WINDOW),
        max_tokens=REPLY_TOKENS,
        tools=[LOOKUP],
    )
    with warnings.catch_warnings():  # LangGraph 1.x marks its prebuilt agent deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = create_react_agent(
            FakeChatModel(),
            [lookup],
            prompt=prompt,
            pre_model_hook=compaction_hook(compactor, system_prompt=prompt),
            state_schema=compaction_state_schema(),
            checkpointer=InMemorySaver(),  # keeps the thread's messages and compactor state
        )
    thread = {"configurable": {"thread_id": "chat"}}
    for turn in range(TURNS):
        question = HumanMessage(f"question {turn}: {words(30, turn)}")
        state = agent.invoke({"messages": [question]}, thread)
    requests = SIZES + summarizer.sizes
    return {
        "turns": TURNS,
        "messages in the graph state": len(state["messages"]),
        "model requests": len(SIZES),
        "summary requests": len(summarizer.sizes),
        "largest request": max(requests),
        "requests over the window": sum(size > WINDOW for size in requests),
    }


if __name__ == "__main__":
    for name, value in main().items():
        print(f"{name}: {value:,}")
