"""The adapters with the app's own model as the summarizer, against the real libraries (offline).

A LangChain chat model summarizes for the LangChain middleware and the LangGraph hook; for
the OpenAI Agents SDK, the agent's own model (an ``agents.Model``) and an ``AsyncOpenAI``
client whose HTTP goes to a mock transport. No agentcore provider is made by the app.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from typing import Any, cast

import httpx
from agents import Model, ModelResponse, SQLiteSession
from agents import Usage as AgentsUsage
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from openai import AsyncOpenAI
from openai.types.responses import ResponseOutputMessage, ResponseOutputText
from pydantic import Field

from agentcore_autosummary import Compactor, CompactorState, SummaryConfig, unfence_summary
from agentcore_autosummary.adapters.langchain import compaction_middleware
from agentcore_autosummary.adapters.langgraph import compaction_hook, compaction_state_schema
from agentcore_autosummary.adapters.openai_agents import CompactingSession

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from langgraph.prebuilt import create_react_agent

WINDOW = 2048
TOPICS = ["rivers", "stones", "clouds", "tables", "music", "light", "apples", "trees"]


def summary_text(number: int) -> str:
    """A summary unlike the one before it, so the gate applies each."""
    topics = " ".join(TOPICS[(number * 3 + i) % len(TOPICS)] for i in range(4 + number % 4))
    return f"Summary {number}: the user asked about {topics}."


class Answering(BaseChatModel):
    """The agent's model: answers every request at length."""

    @property
    def _llm_type(self) -> str:
        return "answering"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Answering:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        reply = AIMessage(content="answer " + "green table music light " * 10)
        return ChatResult(generations=[ChatGeneration(message=reply)])


class Summarizing(BaseChatModel):
    """The app's own cheaper model, given to the compactor; it reports its usage."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "summarizing"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.received.append(list(messages))
        usage = {"input_tokens": 900, "output_tokens": 30, "total_tokens": 930}
        reply = AIMessage(content=summary_text(len(self.received)), usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=reply)])


async def forty_turns(graph: Any) -> CompactorState:
    """Forty questions through ``graph`` on one thread; the compactor state it keeps."""
    thread = {"configurable": {"thread_id": "t"}}
    for turn in range(40):
        question = HumanMessage(f"question {turn}: " + "apple river stone cloud " * 10)
        state = await graph.ainvoke({"messages": [question]}, thread)
    return CompactorState.from_json(state["compaction"])


async def test_a_langchain_model_summarizes_for_the_middleware() -> None:
    summarizer = Summarizing()
    compactor = Compactor(summarizer, SummaryConfig(max_context_tokens=WINDOW))
    graph: Any = create_agent(
        Answering(),
        [],
        system_prompt="Be brief.",
        middleware=[compaction_middleware(compactor)],
        checkpointer=InMemorySaver(),
    )
    stored = await forty_turns(graph)
    assert summarizer.received, "the app's model was never asked for a summary"
    assert all(isinstance(m, BaseMessage) for request in summarizer.received for m in request)
    assert stored.summary is not None
    # Its latest reply, as written: the newest part of the summary.
    assert unfence_summary(stored.summary).endswith(summary_text(len(summarizer.received)))


async def test_a_langchain_model_summarizes_for_the_langgraph_hook() -> None:
    summarizer = Summarizing()
    compactor = Compactor(summarizer, SummaryConfig(max_context_tokens=WINDOW))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        graph: Any = create_react_agent(
            Answering(),
            [],
            prompt="Be brief.",
            pre_model_hook=compaction_hook(compactor, system_prompt="Be brief."),
            state_schema=compaction_state_schema(),
            checkpointer=InMemorySaver(),
        )
    stored = await forty_turns(graph)
    assert summarizer.received and stored.summary is not None
    assert unfence_summary(stored.summary).endswith(summary_text(len(summarizer.received)))


class AgentsModel(Model):
    """An OpenAI Agents SDK model, as ``agent.model`` holds one; it answers with a summary."""

    def __init__(self) -> None:
        self.inputs: list[Any] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self.inputs.append(input)
        message = ResponseOutputMessage(
            id=f"msg_{len(self.inputs)}",
            content=[
                ResponseOutputText(
                    annotations=[], text=summary_text(len(self.inputs)), type="output_text"
                )
            ],
            role="assistant",
            status="completed",
            type="message",
        )
        usage = AgentsUsage(requests=1, input_tokens=800, output_tokens=25, total_tokens=825)
        return ModelResponse(output=[message], usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a summary is never streamed")


def history(turns: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for turn in range(turns):
        words = " ".join(["apple river stone cloud"] * 10)
        items.append({"role": "user", "content": f"question {turn}: {words}"})
        items.append({"role": "assistant", "content": f"answer {turn}: {words}"})
    return items


async def test_the_agents_own_model_summarizes_for_the_session() -> None:
    model = AgentsModel()
    compactor = Compactor(model, SummaryConfig(max_context_tokens=WINDOW))
    stored = SQLiteSession("s")
    await stored.add_items(history(60))  # type: ignore[arg-type]
    sent = await CompactingSession(stored, compactor).get_items()
    assert model.inputs, "the agent's model was never asked for a summary"
    assert all(isinstance(item, dict) for request in model.inputs for item in request)
    assert sent[0]["role"] == "user" and summary_text(len(model.inputs)) in str(sent[0]["content"])


async def test_an_async_openai_client_summarizes_for_the_session() -> None:
    bodies: list[dict[str, Any]] = []

    def serve(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/chat/completions"
        bodies.append(json.loads(request.content))
        reply = {
            "id": f"chatcmpl-{len(bodies)}",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": summary_text(len(bodies))},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 700, "completion_tokens": 20, "total_tokens": 720},
        }
        return httpx.Response(200, json=reply)

    client = AsyncOpenAI(
        api_key="test-key",
        base_url="http://127.0.0.1:9/v1",
        # The client's HTTP goes to the handler above (typed for the client's own httpx).
        http_client=cast(Any, httpx.AsyncClient(transport=httpx.MockTransport(serve))),
    )
    compactor = Compactor(client, SummaryConfig(max_context_tokens=WINDOW), model="gpt-4o-mini")
    stored = SQLiteSession("s")
    await stored.add_items(history(60))  # type: ignore[arg-type]
    sent = await CompactingSession(stored, compactor).get_items()
    assert bodies and {body["model"] for body in bodies} == {"gpt-4o-mini"}
    assert all(
        message["role"] in ("system", "user", "assistant")
        for b in bodies
        for message in b["messages"]
    )
    assert summary_text(len(bodies)) in str(sent[0]["content"])
    await client.close()
