"""An app's own OpenAI Chat Completions history, compacted to a 2,048-token window.

The app keeps its ``messages`` list and its turn loop; before each request
it asks the compactor what to send. Runs offline: a fake chat endpoint
answers and agentcore's MockProvider writes the summaries; both count the
tokens of every request they receive. Needs ``pip install agentcore-autosummary``.

    python docs/examples/compact_openai_dicts.py
"""

from __future__ import annotations

import json
from typing import Any

from agentcore import LlmRequest
from agentcore.formats import from_openai
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary import Compactor, CompactorState, SummaryConfig

WINDOW = 2048
REPLY_TOKENS = 256  # the app's max_tokens
TURNS = 300
counter = get_token_counter(None)
WORDS = ["apple", "river", "stone", "cloud", "green", "table", "music", "light"]


def words(count: int, seed: int) -> str:
    """``count`` words, varied by ``seed``."""
    return " ".join(WORDS[(seed * 5 + i * 3) % len(WORDS)] for i in range(count))


class FakeChatCompletions:
    """Stands in for ``client.chat.completions.create``; counts each request."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def create(self, *, messages: list[dict[str, Any]], max_tokens: int) -> dict[str, Any]:
        """A reply to ``messages``, shaped as the API's."""
        self.sizes.append(counter.count_messages(from_openai(messages)) + max_tokens)
        reply = f"reply {len(self.sizes)}: {words(40, len(self.sizes))}"
        return {"choices": [{"message": {"role": "assistant", "content": reply}}]}


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
    chat, summarizer = FakeChatCompletions(), Summarizer()
    compactor = Compactor(
        summarizer.provider, SummaryConfig(max_context_tokens=WINDOW), max_tokens=REPLY_TOKENS
    )
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You answer briefly."}]
    stored_state = None  # the app keeps this beside its messages, as JSON
    for turn in range(TURNS):
        messages.append({"role": "user", "content": f"question {turn}: {words(30, turn)}"})
        state = None if stored_state is None else CompactorState.from_json(json.loads(stored_state))
        compaction = compactor.compact_sync(messages, state)
        stored_state = json.dumps(compaction.state.to_json())
        response = chat.create(messages=compaction.messages, max_tokens=REPLY_TOKENS)
        messages.append(response["choices"][0]["message"])  # the app's history stays whole
    requests = chat.sizes + summarizer.sizes
    return {
        "turns": TURNS,
        "messages kept by the app": len(messages),
        "model requests": len(chat.sizes),
        "summary requests": len(summarizer.sizes),
        "largest request": max(requests),
        "requests over the window": sum(size > WINDOW for size in requests),
    }


if __name__ == "__main__":
    for name, value in main().items():
        print(f"{name}: {value:,}")
