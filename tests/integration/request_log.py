"""An OpenAIProvider that records every request it sends and what the server answered.

Each record holds agentcore's own count of the request (cl100k, as the
budget uses it today) beside the server's ``prompt_tokens``, so a test can
report how far apart the two tokenizers are, and count the requests the
server rejected for their length.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

import attrs
from attrs import define

from agentcore import LlmError, LlmRequest, LlmResponse, ResponseComplete, StreamEvent
from agentcore.providers.openai import OpenAIProvider
from agentcore.tokens import count_text_tokens, count_tokens

_REQUESTED = re.compile(
    r"maximum context length is (\d+) tokens.*?requested (\d+) tokens "
    r"\((\d+) in the messages, (\w+) in the completion\)",
    re.DOTALL,
)


@define
class RequestRecord:
    """One request and its outcome."""

    purpose: str
    stream: bool
    max_tokens: int | None
    local_tokens: int
    local_tool_tokens: int
    messages: int
    started: float
    seconds: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    stop_reason: str | None = None
    error: str | None = None
    status_code: int | None = None
    length_error: bool = False

    @property
    def ok(self) -> bool:
        """The server answered with a reply."""
        return self.error is None

    @property
    def ratio(self) -> float | None:
        """Server prompt tokens per locally counted token (messages only)."""
        if self.prompt_tokens is None or not self.local_tokens:
            return None
        return self.prompt_tokens / self.local_tokens

    def finish(self, response: LlmResponse) -> None:
        """Record a reply."""
        self.seconds = time.monotonic() - self.started
        self.stop_reason = response.stop_reason
        if response.usage is not None:
            self.prompt_tokens = response.usage.input_tokens
            self.completion_tokens = response.usage.output_tokens

    def fail(self, exc: BaseException) -> None:
        """Record a failure; a length error keeps the server's figures."""
        self.seconds = time.monotonic() - self.started
        self.error = f"{type(exc).__name__}: {exc}"
        self.status_code = getattr(exc, "status_code", None)
        text = str(exc)
        match = _REQUESTED.search(text)
        if match is not None:
            self.prompt_tokens = int(match.group(3))
        self.length_error = (
            type(exc).__name__ == "ContextWindowExceededError"
            or getattr(exc, "code", None) == "context_length_exceeded"
            or match is not None
            or "context window" in text.lower()
            or "context length" in text.lower()
        )


class RecordingProvider(OpenAIProvider):
    """:class:`OpenAIProvider` that appends a :class:`RequestRecord` per request to ``records``.

    A subclass rather than a wrapper, so that anything agentcore learns about
    the provider (its type, its model, its attributes) is what a user's
    OpenAIProvider would show.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records: list[RequestRecord] = []

    def _record(self, request: LlmRequest, *, stream: bool) -> RequestRecord:
        model = request.model
        tools = sum(
            count_text_tokens(
                json.dumps({"name": t.name, "description": t.description, **t.parameters}), model
            )
            for t in request.tools
        )
        record = RequestRecord(
            purpose=request.purpose,
            stream=stream,
            max_tokens=request.max_tokens,
            local_tokens=count_tokens(request.messages, model),
            local_tool_tokens=tools,
            messages=len(request.messages),
            started=time.monotonic(),
        )
        self.records.append(record)
        return record

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """Send ``request`` and record the outcome."""
        record = self._record(request, stream=False)
        try:
            response = await super().complete(request)
        except LlmError as exc:
            record.fail(exc)
            raise
        record.finish(response)
        return response

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """Stream ``request`` and record the outcome."""
        record = self._record(request, stream=True)
        try:
            async for event in super().stream(request):
                if isinstance(event, ResponseComplete):
                    record.finish(event.response)
                yield event
        except LlmError as exc:
            record.fail(exc)
            raise


def summarize_records(records: list[RequestRecord], n_ctx: int) -> dict[str, Any]:
    """The figures of one conversation: requests, rejections, token ratios, overruns."""
    ratios = [r.ratio for r in records if r.ratio is not None and not r.local_tool_tokens]
    over_reply = [
        r
        for r in records
        if r.ok and r.prompt_tokens is not None and r.max_tokens is not None
        if r.prompt_tokens + r.max_tokens > n_ctx
    ]
    return {
        "requests": len(records),
        "turn_requests": sum(r.purpose == "turn" for r in records),
        "summary_requests": sum(r.purpose == "summary" for r in records),
        "failed": sum(not r.ok for r in records),
        "rejected_for_length": sum(r.length_error for r in records),
        "rejected_summaries": sum(r.length_error and r.purpose == "summary" for r in records),
        "rejected_turns": sum(r.length_error and r.purpose == "turn" for r in records),
        "reply_room_short": len(over_reply),
        "cut_by_window": sum(
            r.stop_reason == "max_tokens"
            and r.max_tokens is not None
            and r.completion_tokens is not None
            and r.completion_tokens < r.max_tokens
            for r in records
        ),
        "max_prompt_tokens": max((r.prompt_tokens or 0 for r in records), default=0),
        "max_local_tokens": max((r.local_tokens for r in records), default=0),
        "ratio_min": round(min(ratios), 3) if ratios else None,
        "ratio_median": round(statistics.median(ratios), 3) if ratios else None,
        "ratio_max": round(max(ratios), 3) if ratios else None,
        "seconds": round(sum(r.seconds or 0.0 for r in records), 1),
        "errors": sorted({r.error[:300] for r in records if r.error}),
    }


def record_to_json(record: RequestRecord) -> dict[str, Any]:
    """One record as JSON-ready data."""
    data = attrs.asdict(record)
    data["ratio"] = record.ratio
    return data
