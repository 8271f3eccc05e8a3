"""What the LangChain and LangGraph adapter tests share: the summarizer of their compactors."""

from __future__ import annotations

from agentcore import LlmRequest
from agentcore.testing import MockProvider

TOPICS = ["rivers", "stones", "clouds", "tables", "music", "light", "apples", "trees"]
"""The words the summaries name, a different few in each, so the gate applies every one."""


def summarizer() -> MockProvider:
    """A summarizer whose every summary is unlike the one before it."""

    def respond(request: LlmRequest) -> str:
        number = len(provider.calls)
        topics = " ".join(TOPICS[(number * 3 + i) % len(TOPICS)] for i in range(4 + number % 4))
        return f"Summary {number}: the user asked about {topics}."

    provider = MockProvider(responder=respond)
    return provider
