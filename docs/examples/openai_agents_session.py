"""An OpenAI Agents SDK agent whose session is compacted to a 2,048-token window.

Runs offline: a fake SDK model answers the turns and agentcore's MockProvider
writes the summaries; both count the tokens of every request they receive.
Needs ``pip install openai-agents agentcore-autosummary``.

    python docs/examples/openai_agents_session.py
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from agents import (
    Agent,
    ModelSettings,
    Runner,
    SQLiteSession,
    function_tool,
    set_tracing_disabled,
)
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from agentcore import LlmRequest, Message, ToolSpec
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary import Compactor, SummaryConfig
from agentcore_autosummary.adapters.openai_agents import CompactingSession
from agentcore_autosummary.adapters.responses_items import items_to_messages

WINDOW = 2048
REPLY_TOKENS = 256  # the reply each request reserves (ModelSettings.max_tokens)
TURNS = 300
counter = get_token_counter(None)
WORDS = ["apple", "river", "stone", "cloud", "green", "table", "music", "light"]


def words(count: int, seed: int) -> str:
    """``count`` words, varied by ``seed``."""
    return " ".join(WORDS[(seed * 5 + i * 3) % len(WORDS)] for i in range(count))


@function_tool
def lookup(topic: str) -> str:
    """Look a topic up in the notes."""
    return f"notes on {topic}: {words(60, len(topic))}"


LOOKUP = ToolSpec(lookup.name, lookup.description, lookup.params_json_schema)


class FakeModel(Model):
    """Answers every request; calls ``lookup`` every third turn; counts each request."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    async def get_response(
        self, system_instructions: str | None, input: str | list[Any], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        """A reply to ``input``: a call of ``lookup`` every third request, else text."""
        items = [{"role": "user", "content": input}] if isinstance(input, str) else input
        messages, _ = items_to_messages(items)
        system = [Message.system(system_instructions)] if system_instructions else []
        size = counter.count_messages([*system, *messages]) + counter.count_tools([LOOKUP])
        self.sizes.append(size + REPLY_TOKENS)
        number = len(self.sizes)
        if items[-1].get("type") != "function_call_output" and number % 3 == 0:
            call = ResponseFunctionToolCall(
                arguments=json.dumps({"topic": words(2, number)}),
                call_id=f"call_{number}",
                name="lookup",
                type="function_call",
                id=f"fc_{number}",
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        text = ResponseOutputText(
            text=f"reply {number}: {words(40, number)}", type="output_text", annotations=[]
        )
        message = ResponseOutputMessage(
            id=f"msg_{number}", content=[text], role="assistant", status="completed", type="message"
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """Not used: the example runs without streaming."""
        raise NotImplementedError("this example runs without streaming")


class Summarizer:
    """The summary model: a new summary each call; counts each request."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.provider = MockProvider(responder=self.respond)

    def respond(self, request: LlmRequest) -> str:
        """A summary of ``request``, a new one each time."""
        self.sizes.append(counter.count_messages(request.messages) + (request.max_tokens or 0))
        return f"Summary {len(self.sizes)}: the user asked about {words(8, len(self.sizes))}."


async def main() -> dict[str, int]:
    """Run the conversation; return what it measured."""
    set_tracing_disabled(True)  # offline: no traces to export
    model, summarizer = FakeModel(), Summarizer()
    instructions = "You answer questions about the notes."
    agent = Agent(
        name="notes",
        instructions=instructions,
        model=model,
        tools=[lookup],
        model_settings=ModelSettings(max_tokens=REPLY_TOKENS),
    )
    compactor = Compactor(
        summarizer.provider,
        SummaryConfig(max_context_tokens=WINDOW),
        max_tokens=REPLY_TOKENS,
        tools=[LOOKUP],
    )
    stored = SQLiteSession("chat")  # keeps the whole history
    session = CompactingSession(stored, compactor, instructions=instructions, reserve_tokens=400)
    for turn in range(TURNS):
        await Runner.run(agent, f"question {turn}: {words(30, turn)}", session=session)
    requests = model.sizes + summarizer.sizes
    return {
        "turns": TURNS,
        "stored items": len(await stored.get_items()),
        "model requests": len(model.sizes),
        "summary requests": len(summarizer.sizes),
        "largest request": max(requests),
        "requests over the window": sum(size > WINDOW for size in requests),
    }


if __name__ == "__main__":
    for name, value in asyncio.run(main()).items():
        print(f"{name}: {value:,}")
