"""Canned, deterministic replies for the demo, for use as a MockProvider responder."""

from __future__ import annotations

import re

from agentcore import LlmRequest
from agentcore.plugin_api import count_text_tokens
from agentcore_autosummary.demo.script import DemoScript
from agentcore_autosummary.recalling.automatic import NEW_MESSAGE_LABEL

FALLBACK_REPLY = "(MockProvider) The demo script has no reply for that message."
"""The reply to a user message the script does not hold."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (all of it when it has one sentence)."""
    text = " ".join(text.split())
    return _SENTENCE_END.split(text, maxsplit=1)[0]


class DemoResponder:
    """Answers the demo's requests the way a model would, without a model.

    A turn request gets the script's canned reply to its last user message (to
    the user's own words, when automatic recall opened it with what it found). A
    request whose ``purpose`` is ``"summary"`` gets a summary built from the
    request itself: the first sentence of every scripted user message found
    anywhere in it (in the transcript or in an earlier summary), oldest
    first, at most ``max_points`` of them (the latest ones) and no more than
    the request's ``max_tokens``.

    :param script: The conversation to answer.
    :param max_points: How many user points a summary keeps at most.
    """

    def __init__(self, script: DemoScript, *, max_points: int = 8) -> None:
        if max_points < 1:
            raise ValueError(f"max_points must be >= 1, got {max_points!r}")
        self._script = script
        self._max_points = max_points

    def __call__(self, request: LlmRequest) -> str:
        """The reply to ``request``."""
        if request.purpose == "summary":
            return self.summarize(request)
        for message in reversed(request.messages):
            if message.role == "user":
                said = message.text.rpartition(f"{NEW_MESSAGE_LABEL}\n")[2]
                return self._script.reply_for(said) or FALLBACK_REPLY
        return FALLBACK_REPLY

    def summarize(self, request: LlmRequest) -> str:
        """A deterministic summary of the conversation that ``request`` carries."""
        text = " ".join(" ".join(message.text for message in request.messages).split())
        points = [
            first_sentence(turn.user)
            for turn in self._script.turns
            if first_sentence(turn.user) in text
        ]
        if not points:
            return f"The conversation so far covered {len(request.messages)} messages."
        kept = points[-self._max_points :]
        while True:
            summary = _render(kept, earlier=len(points) - len(kept))
            too_long = request.max_tokens is not None and (
                count_text_tokens(summary, request.model) > request.max_tokens
            )
            if not too_long or len(kept) == 1:
                return summary
            kept = kept[1:]


def _render(points: list[str], *, earlier: int) -> str:
    lines = ["Conversation so far, oldest first. The user said:"]
    if earlier:
        lines.append(f"- ({earlier} earlier points omitted)")
    lines.extend(f"- {point}" for point in points)
    return "\n".join(lines)
