"""Helpers shared by the plugin tests."""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from typing import Any, TypedDict

from agentcore import ContextWindowExceededError, LlmRequest, LlmResponse, Message, Usage
from agentcore.budget import reply_reservation
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary.calling.segments import SEGMENTS_HEADER


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


PART_HEAD = re.compile(r"\n\nPart \d+ \((?:turns? [\d-]+, )?messages \d+-\d+\):\n")
"""The line that heads a part of a ``strategy="segments"`` summary."""


def summary_parts(summary: str) -> list[str]:
    """The texts of ``summary``'s parts, oldest first: one text, or each part of a segments one."""
    if not summary.startswith(SEGMENTS_HEADER):
        return [summary]
    return PART_HEAD.split(summary.removeprefix(SEGMENTS_HEADER))[1:]


class WindowSizes(TypedDict):
    """The window fields of a :class:`SummaryConfig`, to pass as ``**sizes``."""

    max_context_tokens: int
    max_summary_tokens: int


TINY_WINDOW: WindowSizes = {"max_context_tokens": 2000, "max_summary_tokens": 200}
"""A window that holds a summary request, for configs whose watermark is tiny."""


class StrictServer:
    """A fake model server that counts tokens its own way and refuses what does not fit.

    It counts ``ratio`` times agentcore's count of a request's messages and tool
    definitions (as a model with another tokenizer and a chat template would),
    refuses a request whose prompt plus ``max_tokens`` exceeds ``window`` with
    :class:`ContextWindowExceededError` carrying its figures (as llama.cpp and
    vLLM do), and reports its own count as the usage. ``over_budget`` counts
    requests whose prompt plus reply reservation (``max_tokens``, or the
    default share of the window) exceeds the window, in the server's tokens.
    ``turn`` and ``summary`` make the replies; use :attr:`provider`.
    """

    def __init__(
        self,
        window: int,
        *,
        ratio: float = 1.3,
        turn: Callable[[LlmRequest], str | LlmResponse] = lambda request: "Sure, noted.",
        summary: Callable[[LlmRequest], Any] | None = None,
        report_usage: bool = True,
    ) -> None:
        self.window = window
        self.ratio = ratio
        self.turn = turn
        self.summary = summary or self._numbered_summary
        self.summaries = 0
        self.report_usage = report_usage
        self.rejected: list[ContextWindowExceededError] = []
        self.over_budget: list[tuple[str, int]] = []
        self.provider = MockProvider(responder=self)

    def _numbered_summary(self, request: LlmRequest) -> str:
        """The default summarizer: a short summary, new each time, as a real one's is."""
        self.summaries += 1
        latest = request.messages[-1].text.split("```text")[-1].split()
        return f"A short summary, number {self.summaries}: {' '.join(latest[-6:-1])}."

    def count(self, request: LlmRequest) -> int:
        counter = get_token_counter(request.model)
        local = counter.count_messages(request.messages) + counter.count_tools(request.tools)
        return math.ceil(local * self.ratio)

    async def __call__(self, request: LlmRequest) -> LlmResponse | BaseException:
        prompt = self.count(request)
        reserve = reply_reservation(request.max_tokens, self.window)
        if prompt + reserve > self.window:
            self.over_budget.append((request.purpose, prompt + reserve))
        if prompt + (request.max_tokens or 0) > self.window:
            error = ContextWindowExceededError(
                f"Requested tokens ({prompt + (request.max_tokens or 0)}) exceed context "
                f"window of {self.window}",
                prompt_tokens=prompt,
                limit_tokens=self.window,
                requested_tokens=prompt + (request.max_tokens or 0),
                status_code=400,
            )
            self.rejected.append(error)
            return error
        if request.purpose == "summary":
            reply: str | LlmResponse = self.summary(request)
            if inspect.isawaitable(reply):
                reply = await reply
        else:
            reply = self.turn(request)
        response = (
            reply if isinstance(reply, LlmResponse) else LlmResponse(Message.assistant(reply))
        )
        counter = get_token_counter(request.model)
        output = math.ceil(counter.count_messages([response.message]) * self.ratio)
        usage = Usage(prompt, output) if self.report_usage else None
        return LlmResponse(response.message, usage, response.stop_reason)

    def calls(self, purpose: str) -> list[LlmRequest]:
        """The requests received for ``purpose``."""
        return self.provider.calls_for(purpose)
