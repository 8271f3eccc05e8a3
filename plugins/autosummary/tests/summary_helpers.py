"""Helpers shared by the plugin tests."""

from __future__ import annotations

from agentcore import LlmRequest


class Replies:
    """A responder: numbered summaries for summary calls, a fixed reply for turns."""

    def __init__(self, reply: str = "Sure, noted.") -> None:
        self.reply = reply
        self.summaries = 0

    def __call__(self, request: LlmRequest) -> str:
        if request.purpose == "summary":
            self.summaries += 1
            return f"summary #{self.summaries}"
        return self.reply
