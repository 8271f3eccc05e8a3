"""The summary call itself, sized to fit the window."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from attrs import frozen

from agentcore import AgentCoreError, LlmCycle, LlmProvider, Message, Usage
from agentcore.budget import TokenCorrection
from agentcore.errors import ContextWindowExceededError
from agentcore.messages import valid_text
from agentcore.tokens import INLINE_COUNT_CHARS, TokenCounter
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.formatting import format_messages_as_text
from agentcore_autosummary.prompt import build_prompt

T = TypeVar("T")

logger = logging.getLogger("agentcore.autosummary")

MIN_CONVERSATION_TOKENS = 32
"""A summary request with less room than this for the conversation is not sent."""

_FIT_MARGIN_TOKENS = 8


class SummaryFailedError(AgentCoreError):
    """The model gave no usable summary, or no summary request could fit the window.

    ``usage`` is what the call cost when one returned with an unusable reply
    (empty, or stopped at its cap): paid for, so it is counted like any
    summary call's. None when no call returned.
    """

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class SummaryOverflowError(SummaryFailedError):
    """The server refused a summary request as too long for its window.

    ``local_tokens`` is the request's local count, ``max_tokens`` the reply
    it reserved and ``error`` the server's refusal.
    """

    def __init__(
        self, local_tokens: int, max_tokens: int, error: ContextWindowExceededError
    ) -> None:
        super().__init__(f"the server refused the summary request as too long: {error}")
        self.local_tokens = local_tokens
        self.max_tokens = max_tokens
        self.error = error


@frozen
class SummaryFit:
    """How a summary request is counted: the counter and correction of its model."""

    counter: TokenCounter
    correction: TokenCorrection
    model: str | None
    """The model name the correction is kept under."""


@frozen
class SummaryReply:
    """A summary and what its request cost.

    ``usage`` is the provider's report, or counted when it gave none
    (``reported`` False); ``request_tokens`` is the local count of the request.
    """

    text: str
    usage: Usage
    request_tokens: int
    reported: bool
    stop_reason: str = "end_turn"


async def _cut(counter: TokenCounter, text: str, max_tokens: int) -> str:
    if len(text) <= INLINE_COUNT_CHARS:
        return counter.cut_middle(text, max_tokens)
    return await asyncio.to_thread(counter.cut_middle, text, max_tokens)


async def request_summary(
    provider: LlmProvider,
    config: SummaryConfig,
    messages: Sequence[Message],
    *,
    model: str | None,
    max_chars: int | None,
    fit: SummaryFit,
) -> SummaryReply:
    """Ask the model to summarize ``messages``; return the summary and its cost.

    One tool-less request with ``purpose="summary"`` that always fits
    ``config.window`` in the model's corrected tokens: a
    conversation too long for the room left after the prompt and
    ``config.summary_reserve`` is cut in the middle (head and tail kept, a
    marker says how many tokens were left out); ``max_tokens`` is what the
    window leaves after the input, never more than ``config.summary_tokens``.
    A summary longer than ``max_summary_tokens`` is cut to it; lone surrogates
    in it are repaired like a turn's text. No messages: an empty summary, and
    no call (the seed's rule). An empty or
    blank reply, a reply stopped at its cap (both with the call's ``usage``),
    or a window with no room for the request, raises
    :class:`SummaryFailedError`; the server's refusal of the request as too
    long raises :class:`SummaryOverflowError`; other provider errors and
    timeouts (``config.timeout``) propagate.
    """
    counter = fit.counter
    if not messages:
        return SummaryReply("", Usage(0, 0), 0, reported=False)  # the seed: no call
    conversation = format_messages_as_text(
        messages, config.max_tool_result_chars, max_chars=max_chars
    )
    if config.window_guard:
        prompt, local, max_tokens = await _sized_request(config, conversation, fit)
    else:  # the original design: a fixed max_tokens, the conversation cut by characters only
        prompt = build_prompt(config.summary_prompt, conversation)
        local = await counter.count_messages_async([Message.user(prompt)])
        max_tokens = config.summary_tokens
    cycle = LlmCycle(provider, model=model, max_tokens=max_tokens, purpose="summary")
    try:
        result = await _within(config.timeout, cycle.submit_messages([Message.user(prompt)]))
    except ContextWindowExceededError as exc:
        raise SummaryOverflowError(local, max_tokens, exc) from exc
    text = valid_text(result.final_message.text).strip()
    paid = result.response.usage
    if paid is None:
        paid = Usage(local, await counter.count_text_async(text))
    if not text:
        raise SummaryFailedError("the model returned an empty summary", usage=paid)
    stop_reason = result.response.stop_reason
    if stop_reason == "max_tokens":
        raise SummaryFailedError(
            f"summary refused: the reply stopped at its token cap ({max_tokens} tokens)",
            usage=paid,
        )
    length = await counter.count_text_async(text)
    if length > config.summary_tokens:
        logger.warning(
            "the summary has %d tokens, over max_summary_tokens (%d): it is cut to fit",
            length,
            config.summary_tokens,
        )
        text = await _cut(counter, text, config.summary_tokens)
    reported = result.response.usage is not None
    return SummaryReply(text, paid, local, reported=reported, stop_reason=stop_reason)


async def _sized_request(
    config: SummaryConfig, conversation: str, fit: SummaryFit
) -> tuple[str, int, int]:
    """The prompt, its local count and its ``max_tokens``, sized to fit ``config.window``."""
    counter, correction, key = fit.counter, fit.correction, fit.model
    window = config.window
    empty = counter.count_messages([Message.user(build_prompt(config.summary_prompt, ""))])
    room = correction.unapply(key, window - config.summary_reserve) - empty - _FIT_MARGIN_TOKENS
    for _ in range(3):
        if room < MIN_CONVERSATION_TOKENS:
            raise SummaryFailedError(
                f"no summary request fits max_context_tokens ({window}): the prompt and the "
                f"reply leave {room} tokens for the conversation"
            )
        if await counter.count_text_async(conversation) > room:
            conversation = await _cut(counter, conversation, room)
        prompt = build_prompt(config.summary_prompt, conversation)
        local = await counter.count_messages_async([Message.user(prompt)])
        max_tokens = min(config.summary_tokens, window - correction.apply(key, local))
        if max_tokens >= min(config.summary_reserve, config.summary_tokens):
            break
        room -= max(1, config.summary_reserve - max_tokens) + _FIT_MARGIN_TOKENS
    else:
        raise SummaryFailedError(f"no summary request fits max_context_tokens ({window})")
    return prompt, local, max_tokens


async def _within(seconds: float | None, work: Coroutine[Any, Any, T]) -> T:
    """Await ``work`` for at most ``seconds``; a cancel of the caller always propagates.

    ``asyncio.wait_for`` before Python 3.12 can drop a cancel that lands as
    ``work`` finishes; ``asyncio.timeout`` (3.11+) never does.
    """
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await work
    return await asyncio.wait_for(work, seconds)  # pragma: no cover - Python 3.10
