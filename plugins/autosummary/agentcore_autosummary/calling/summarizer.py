"""The summary call itself: a request sized to fit the window, sent, and its reply read.

Every summary call goes through :func:`send_summary_request`: a transcript request
(:func:`request_summary`) and a prefix-shaped one (:func:`request_prefix_summary`,
whose messages :mod:`agentcore_autosummary.requesting.prefix_requests` builds).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import sys
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from attrs import frozen

from agentcore import (
    AgentCoreError,
    ContextWindowExceededError,
    CycleResult,
    LlmCycle,
    LlmProvider,
    Message,
    ToolSpec,
    TurnContext,
    Usage,
)
from agentcore.plugin_api import TokenCounter, valid_text
from agentcore_autosummary.applying.fencing import SUMMARY_CLOSE, SUMMARY_OPEN, unfence_summary
from agentcore_autosummary.applying.record import without_record
from agentcore_autosummary.calling.off_loop import cut_middle
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.plan import Plan
from agentcore_autosummary.deciding.token_correction import TokenCorrection
from agentcore_autosummary.log_names import session_name
from agentcore_autosummary.requesting.formatting import format_messages_as_text
from agentcore_autosummary.requesting.prefix_requests import prefix_messages
from agentcore_autosummary.requesting.prompt import build_prompt
from agentcore_autosummary.requesting.sent import last_sent
from agentcore_autosummary.requesting.sizing import transcript_tokens

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


class SummaryCutError(SummaryFailedError):
    """The summary reply stopped at its token cap.

    ``reply`` is the cut reply and what it cost, ``max_tokens`` the cap it
    stopped at and ``window_bound`` whether the window, not the cap asked
    for, set it (then no higher cap fits the same input).
    """

    def __init__(self, reply: SummaryReply, max_tokens: int, window_bound: bool) -> None:
        super().__init__(
            f"summary refused: the reply stopped at its token cap ({max_tokens} tokens)"
        )
        self.reply = reply
        self.max_tokens = max_tokens
        self.window_bound = window_bound


async def request_summary(
    provider: LlmProvider,
    config: SummaryConfig,
    messages: Sequence[Message],
    *,
    model: str | None,
    max_chars: int | None,
    fit: SummaryFit,
    cap: int | None = None,
    above: int = 0,
    estimate: int | None = None,
) -> SummaryReply:
    """Ask the model to summarize ``messages``; return the summary and its cost.

    One tool-less request with ``purpose="summary"`` that always fits
    ``config.window`` in the model's corrected tokens: a
    conversation too long for the room left after the prompt and
    ``config.summary_reserve`` is cut in the middle (head and tail kept, a
    marker says how many tokens were left out); ``max_tokens`` is what the
    window leaves after the input, never more than ``config.summary_tokens``
    (or ``cap``: the ``higher_cap`` retry; a request the window holds to
    ``above`` tokens of reply or fewer raises :class:`SummaryFailedError`
    unsent). A summary longer than its cap is cut to it; lone surrogates
    in it are repaired like a turn's text. No messages: an empty summary, and
    no call (the seed's rule). An empty or
    blank reply, a reply stopped at its cap (both with the call's ``usage``),
    or a window with no room for the request, raises
    :class:`SummaryFailedError`; the server's refusal of the request as too
    long raises :class:`SummaryOverflowError`; a reply stopped at its cap
    raises :class:`SummaryCutError`; other provider errors and timeouts
    (:func:`call_timeout`) propagate. ``estimate``: the transcript's tokens as
    :func:`~agentcore_autosummary.requesting.sizing.transcript_tokens` gives them for
    ``fit.counter`` and ``config.max_tool_result_chars``, when the caller has them
    already (the chunk plan sized the same entries); None: worked out here.
    """
    counter = fit.counter
    if not messages:
        return SummaryReply("", Usage(0, 0), 0, reported=False)  # the seed: no call
    conversation = format_messages_as_text(
        messages, config.max_tool_result_chars, max_chars=max_chars
    )
    limit = cap if cap is not None else config.summary_tokens
    if config.window_guard:
        if max_chars is not None:  # entries cut by characters are sized by counting them
            estimate = None
        elif estimate is None:
            estimate = await transcript_tokens(counter, messages, config.max_tool_result_chars)
        request, local, max_tokens = await _sized_request(
            config, conversation, fit, limit, estimate
        )
    else:  # the original design: a fixed max_tokens, the conversation cut by characters only
        request = Message.user(build_prompt(config.summary_prompt, conversation))
        local = await counter.count_messages_async([request])
        max_tokens = limit
    if max_tokens <= above:
        raise SummaryFailedError(
            f"the window leaves {max_tokens} tokens for the reply: no cap above {above} fits"
        )
    # The message counted is the one sent: its count is kept on it, so a provider
    # or hook that counts the request (usage of a server that reports none) reuses it.
    return await send_summary_request(
        provider, config, [request], SentSize(local, max_tokens, limit), counter, model=model
    )


@frozen
class SentSize:
    """The sizes a summary request is sent with.

    ``local`` is the request's local count, ``max_tokens`` the reply cap it is
    sent with, and ``limit`` the summary's cap (a longer reply is cut to it).
    """

    local: int
    max_tokens: int
    limit: int


async def send_summary_request(
    provider: LlmProvider,
    config: SummaryConfig,
    messages: Sequence[Message],
    size: SentSize,
    counter: TokenCounter,
    *,
    model: str | None,
    tools: Sequence[ToolSpec] = (),
    cache_key: str | None = None,
) -> SummaryReply:
    """Send one summary request and read its reply: every summary call goes through here.

    One ``purpose="summary"`` call of ``messages`` (and ``tools``, which a
    prefix-shaped request repeats from the turn it extends), within
    :func:`call_timeout`, asking for no prompt-cache entry at its end
    (``cache_newest=False``: a provider that writes one at a breakpoint would
    bill it above the input price, and no later request reads it; a
    prefix-shaped request still reads the turn's prefix); the reply is read
    by :func:`read_reply`. The server's
    refusal of the request as too long raises :class:`SummaryOverflowError`;
    other provider errors and the timeout propagate.
    """
    cycle = LlmCycle(
        provider,
        model=model,
        max_tokens=size.max_tokens,
        purpose="summary",
        cache_key=cache_key,
        cache_newest=False,  # no later request starts with a summary request
    )
    seconds = call_timeout(config, size.local, size.max_tokens)
    try:
        result = await _within(seconds, cycle.submit_messages(messages, tools))
    except ContextWindowExceededError as exc:
        raise SummaryOverflowError(size.local, size.max_tokens, exc) from exc
    return await read_reply(result, counter, size.local, size.max_tokens, size.limit)


async def request_prefix_summary(
    ctx: TurnContext,
    provider: LlmProvider,
    config: SummaryConfig,
    plan: Plan,
    fit: SummaryFit,
    cap: int | None = None,
    *,
    new_only: bool = False,
) -> SummaryReply | None:
    """Ask for the summary of ``plan`` in the prefix shape; None when that shape cannot apply.

    ``new_only``: a summary of the plan's messages alone, not of the earlier
    summary (the first request of a ``resummary`` retry).

    None (nothing sent, nothing paid) when no turn request of the slot was
    sent yet in this live session, when it cannot carry the plan
    (:func:`prefix_messages`), when the prefix leaves the reply less room in
    ``config.window`` than ``summary_reserve``, or when the server refused
    it as too long: the caller then asks for a transcript summary. Otherwise
    the reply is read as :func:`~agentcore_autosummary.calling.summarizer.request_summary`
    reads it, with the same errors.
    """
    sent = last_sent(ctx.session, plan.slot.id)
    if sent is None:
        return None
    limit = cap if cap is not None else config.summary_tokens
    messages = prefix_messages(sent, plan, config.summary_prompt, limit, new_only=new_only)
    if messages is None:
        return None
    counter = fit.counter
    local = await counter.count_messages_async(messages) + counter.count_tools(sent.tools)
    max_tokens = limit
    if config.window_guard:
        max_tokens = min(limit, config.window - fit.correction.apply(fit.model, local))
        if max_tokens < min(config.summary_reserve, config.summary_tokens):
            logger.info(
                "%s: the conversation's prefix (%d tokens) leaves no room for a "
                "summary in the window: the summary is asked for as a transcript",
                session_name(ctx.session),
                local,
            )
            return None
    model = plan.model if plan.model is not None else sent.model
    try:
        return await send_summary_request(
            provider,
            config,
            messages,
            SentSize(local, max_tokens, limit),
            counter,
            model=model,
            tools=sent.tools,
            cache_key=sent.cache_key,
        )
    except SummaryOverflowError as exc:
        logger.info(
            "%s: the server refused the prefix-shaped summary request (%s): "
            "asked for as a transcript",
            session_name(ctx.session),
            exc.error,
        )
        return None


_FENCE_LINE = re.compile(r"\s*(`{3,}|~{3,})[\w-]*\s*")


def unfenced(text: str) -> str:
    """``text`` without the code fence lines a model wraps its summary in, stripped.

    The summary request fences its material (``text`` is the fence's label); a small
    model copies the fence around its reply, or answers with the fence alone. Only the
    fence lines that open or close the reply go: a code block inside it stays.
    A reply wrapped in the summary's own fence (``<summary>`` and ``</summary>``
    lines, as a prefix request shows the previous summary) is unfenced
    (:func:`~agentcore_autosummary.applying.fencing.unfence_summary`). A record of
    attachments copied from the previous summary is taken off
    (:func:`~agentcore_autosummary.applying.record.without_record`): the gate judges
    the model's own text, and the plugin writes the record.
    """
    lines = text.strip().splitlines()
    while lines and _FENCE_LINE.fullmatch(lines[0]):
        lines.pop(0)
    while lines and _FENCE_LINE.fullmatch(lines[-1]):
        lines.pop()
    if len(lines) >= 2 and (lines[0].strip(), lines[-1].strip()) == (SUMMARY_OPEN, SUMMARY_CLOSE):
        # The summary fence the context sends the previous summary in, copied around
        # the reply (a prefix request shows it): taken off and undone, never fenced twice.
        body = "\n".join(lines[1:-1])
        return without_record(unfence_summary(f"{SUMMARY_OPEN}\n{body}\n{SUMMARY_CLOSE}").strip())
    text = without_record("\n".join(lines).strip())
    # The fence's label on a line of its own (a fence copied as "```\ntext\n```").
    return "" if text == "text" else text


async def read_reply(
    result: CycleResult, counter: TokenCounter, local: int, max_tokens: int, limit: int
) -> SummaryReply:
    """The summary of a summary call's ``result``, checked as :func:`request_summary` says.

    ``local`` is the request's local count, ``max_tokens`` the reply cap it
    was sent with and ``limit`` the summary's cap (a longer summary is cut to
    it). Fence lines around the reply are taken off (:func:`unfenced`). Raises
    :class:`SummaryFailedError` for an empty reply and
    :class:`SummaryCutError` for one that stopped at its cap.
    """
    text = unfenced(valid_text(result.final_message.text))
    paid = result.response.usage
    length: int | None = None
    if paid is None:
        length = await counter.count_text_async(text)
        paid = Usage(local, length)
    if not text:
        raise SummaryFailedError("the model returned an empty summary", usage=paid)
    stop_reason = result.response.stop_reason
    usage, reported = paid, result.response.usage is not None
    if stop_reason == "max_tokens":
        reply = SummaryReply(text, usage, local, reported, stop_reason)
        raise SummaryCutError(reply, max_tokens, window_bound=max_tokens < limit)
    if length is None:
        length = await counter.count_text_async(text)
    if length > limit:
        logger.warning(
            "the summary has %d tokens, over its cap (%d): it is cut to fit", length, limit
        )
        text = await cut_middle(counter, text, limit)
    return SummaryReply(text, usage, local, reported, stop_reason)


async def _sized_request(
    config: SummaryConfig, conversation: str, fit: SummaryFit, cap: int, estimate: int | None
) -> tuple[Message, int, int]:
    """The request's message, its local count and its ``max_tokens``, sized to fit the window.

    ``estimate``: the conversation's tokens as its entries' stored counts
    give them (:func:`~agentcore_autosummary.requesting.sizing.transcript_tokens`), or
    None. When it fits the room the prompt leaves, the prompt is built and
    counted once, and that count sizes ``max_tokens``; the conversation is
    counted apart (and cut to the room) only when the estimate does not fit
    or the prompt's count shows it was low, so what is sent is the same as
    if it had been counted first.
    """
    counter, correction, key = fit.counter, fit.correction, fit.model
    window = config.window
    empty = _empty_prompt_tokens(counter, config.summary_prompt)
    room = correction.unapply(key, window - config.summary_reserve) - empty - _FIT_MARGIN_TOKENS
    fits_reply = min(config.summary_reserve, config.summary_tokens)
    if estimate is not None and room >= MIN_CONVERSATION_TOKENS and estimate <= room:
        request = Message.user(build_prompt(config.summary_prompt, conversation))
        local = await counter.count_messages_async([request])
        max_tokens = min(cap, window - correction.apply(key, local))
        if local - empty <= room and max_tokens >= fits_reply:
            return request, local, max_tokens
    for _ in range(3):
        if room < MIN_CONVERSATION_TOKENS:
            raise SummaryFailedError(
                f"no summary request fits max_context_tokens ({window}): the prompt and the "
                f"reply leave {room} tokens for the conversation"
            )
        if await counter.count_text_async(conversation) > room:
            conversation = await cut_middle(counter, conversation, room)
        request = Message.user(build_prompt(config.summary_prompt, conversation))
        local = await counter.count_messages_async([request])
        max_tokens = min(cap, window - correction.apply(key, local))
        if max_tokens >= fits_reply:
            break
        room -= max(1, config.summary_reserve - max_tokens) + _FIT_MARGIN_TOKENS
    else:
        raise SummaryFailedError(f"no summary request fits max_context_tokens ({window})")
    return request, local, max_tokens


@functools.lru_cache(maxsize=64)
def _empty_prompt_tokens(counter: TokenCounter, template: str) -> int:
    """Tokens of a summary request of ``template`` with an empty conversation (kept per counter)."""
    return counter.count_messages([Message.user(build_prompt(template, ""))])


TIMEOUT_BASE_SECONDS = 60.0
"""The fixed part of the default summary timeout (``timeout="auto"``)."""

TIMEOUT_SECONDS_PER_OUTPUT_TOKEN = 0.3
"""Seconds the default timeout allows per token of ``max_tokens`` asked for."""

TIMEOUT_SECONDS_PER_INPUT_TOKEN = 0.1
"""Seconds the default timeout allows per token of the request's input."""


def call_timeout(config: SummaryConfig, input_tokens: int, max_tokens: int) -> float | None:
    """Seconds one summary call may take: ``config.timeout``, or the ``"auto"`` default.

    ``"auto"``: :data:`TIMEOUT_BASE_SECONDS` plus
    :data:`TIMEOUT_SECONDS_PER_OUTPUT_TOKEN` per token of ``max_tokens`` and
    :data:`TIMEOUT_SECONDS_PER_INPUT_TOKEN` per input token (local count),
    about 2.5 times what a 1.5B model took on two shared CPU cores (see
    docs/autosummary.md). None: no limit.
    """
    if config.timeout != "auto":
        return config.timeout
    return (
        TIMEOUT_BASE_SECONDS
        + TIMEOUT_SECONDS_PER_OUTPUT_TOKEN * max_tokens
        + TIMEOUT_SECONDS_PER_INPUT_TOKEN * input_tokens
    )


async def _within(seconds: float | None, work: Coroutine[Any, Any, T]) -> T:
    """Await ``work`` for at most ``seconds``; a cancel of the caller always propagates.

    ``asyncio.wait_for`` before Python 3.12 can drop a cancel that lands as
    ``work`` finishes; ``asyncio.timeout`` (3.11+) never does.
    """
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await work
    return await asyncio.wait_for(work, seconds)  # pragma: no cover - Python 3.10
