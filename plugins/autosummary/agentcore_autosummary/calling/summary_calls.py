"""The requests of one summary, in chunks that each fit the window, and its checks."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

import attrs

from agentcore import (
    ContextSlot,
    Message,
    TurnContext,
    Usage,
)
from agentcore.plugin_api import DEFAULT_SUMMARY_LABEL, TokenCounter
from agentcore_autosummary.applying.fencing import fence_summary
from agentcore_autosummary.applying.storing import store_call_cost
from agentcore_autosummary.calling.off_loop import run_by_size, text_chars
from agentcore_autosummary.calling.summarizer import (
    SummaryCutError,
    SummaryFailedError,
    SummaryFit,
    SummaryOverflowError,
    SummaryReply,
    request_prefix_summary,
    request_summary,
)
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.budget import (
    counter_for,
    overflow_prompt_tokens,
    turn_model,
)
from agentcore_autosummary.deciding.context_size import summary_change
from agentcore_autosummary.deciding.plan import Plan
from agentcore_autosummary.deciding.planner import plan_chunks
from agentcore_autosummary.deciding.windows import learn_served_window, with_window
from agentcore_autosummary.judging.gate import new_words
from agentcore_autosummary.judging.quoting import quote_missing, without_quotes
from agentcore_autosummary.judging.retention import append_missing, log_missing, missing_identifiers
from agentcore_autosummary.keeping.runtime import learn, runtime_of, session_correction
from agentcore_autosummary.log_names import session_name
from agentcore_autosummary.requesting.prefix_requests import wants_prefix
from agentcore_autosummary.requesting.provider import counting_model, summary_provider
from agentcore_autosummary.requesting.routes import UPDATE, Route
from agentcore_autosummary.requesting.sizing import transcript_tokens

logger = logging.getLogger("agentcore.autosummary")

_INPUT_MARGIN_TOKENS = 32

_PART_OVERHEAD_TOKENS = 16

CHUNK_CONCURRENCY = 4
"""How many chunk summaries of one backlog are requested at once."""

T = TypeVar("T")

_PartKey = tuple[tuple[int, ...], int | None, int]
"""A part request: the identities of its messages, its route's ``cap`` and ``above``."""

_PARTS: ContextVar[dict[_PartKey, tuple[Sequence[Message], str]] | None] = ContextVar(
    "autosummary parts", default=None
)
"""The parts summarized within :func:`parts_kept`, by request (with their messages)."""


@contextlib.contextmanager
def parts_kept() -> Iterator[None]:
    """Within it, a chunk summarized alone is asked for once: a later request reuses its reply.

    One summary's attempts run inside it (``retries.make_summary``). A
    ``resummary`` retry's first request (the messages alone, without the previous
    summary) is the first part of an update made of several chunks: the same
    request, already answered, since the gate judges the merged summary and not
    its parts. Only parts are kept, never a request that carries the previous
    summary; a part whose request failed is not kept.
    """
    token = _PARTS.set({})
    try:
        yield
    finally:
        _PARTS.reset(token)


def _part_key(messages: Sequence[Message], route: Route) -> _PartKey:
    return tuple(id(message) for message in messages), route.cap, route.above


async def isolated(work: Coroutine[Any, Any, T]) -> T:
    """Await ``work``; its own ``CancelledError`` becomes :class:`SummaryFailedError`.

    Only a cancellation of the current task propagates as ``CancelledError``:
    told apart by the task's ``cancelling()`` count (Python 3.11+), or on
    3.10 by running ``work`` as a shielded child task.
    """
    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    if cancelling is not None:
        try:
            return await work
        except asyncio.CancelledError:
            if cancelling():
                raise
            raise SummaryFailedError("the summary call was cancelled") from None
    child = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(child)
    except asyncio.CancelledError:
        if not child.done():  # the current task is being cancelled
            child.cancel()
            # Let the child finish what must finish (a store write it began completes
            # before its cancel propagates), so the session agrees with its store by the
            # time the caller sees the cancel.
            await asyncio.wait([child])
            if not child.cancelled():
                child.exception()  # retrieved: the current task's cancellation wins
            raise
        if child.cancelled():
            raise SummaryFailedError("the summary call was cancelled") from None
        raise


async def summarize_in_chunks(
    ctx: TurnContext,
    config: SummaryConfig,
    plan: Plan,
    max_calls: int | None,
    route: Route = UPDATE,
) -> tuple[str, int]:
    """The summary of as much of ``plan`` as ``max_calls`` calls cover (None: all of it).

    Returns the summary and how many of ``plan.messages`` it covers. One
    chunk is summarized with the previous summary in one call; more chunks
    are summarized concurrently (:data:`CHUNK_CONCURRENCY` at once, after
    the first, whose usage calibrates the token correction) and merged with
    the previous summary by one more call. Without a cap, rounds of that
    follow each other until every message is covered. ``route`` says how
    the requests are asked for (:class:`~agentcore_autosummary.requesting.routes.Route`).
    The first request of a summary (``UPDATE``) is one prefix-shaped call
    when the config wants it and it can apply (:func:`request_prefix_one`).
    """
    if route == UPDATE and wants_prefix(ctx, config):
        reply = await request_prefix_one(ctx, config, plan)
        if reply is not None:
            return reply.text, len(plan.messages)
    if route.separate and plan.previous and wants_prefix(ctx, config):
        merged = await prefix_resummary(ctx, config, plan, route)
        if merged is not None:
            return merged, len(plan.messages)
    previous = plan.previous
    covered = 0
    while True:
        summary, count = await summary_round(
            ctx, config, plan, previous, plan.messages[covered:], max_calls, route
        )
        covered += count
        previous = summary
        if max_calls is not None or covered >= len(plan.messages):
            return summary, covered


async def prefix_resummary(
    ctx: TurnContext, config: SummaryConfig, plan: Plan, route: Route
) -> str | None:
    """``route.separate`` in the prefix shape: the new messages alone, then the merge.

    The first request is the conversation's last turn request with an
    instruction to summarize the messages after the earlier summary alone
    (:data:`~agentcore_autosummary.requesting.prompt.PREFIX_NEW_MESSAGES_INSTRUCTION`), so
    its input is read from the prompt cache as the update's was; the merge of
    that summary with the previous one is a transcript request as in
    :func:`summary_round`. None when the prefix shape cannot apply: the caller
    asks for both as transcripts.
    """
    reply = await request_prefix_one(ctx, config, plan, new_only=True)
    if reply is None:
        return None
    previous = plan.previous or ""
    if not new_words(reply.text, previous):
        # Every word of it is in the previous summary already: a merge could only give
        # that summary back, so it is not asked for.
        return previous
    request = merge_request(summary_label(plan.slot), previous, [reply.text])
    merged = await request_one_summary(ctx, config, plan, request, None, route)
    return merged.text


def merge_request(label: str, previous: str | None, parts: Sequence[str]) -> list[Message]:
    """The messages of a merge call: the previous summary, then each part, labelled."""
    head = [Message.system(f"{label} {without_quotes(previous)}")] if previous else []
    return [
        *head,
        *(
            Message.user(f"{label} ({_part_title(number, len(parts))}) {text}")
            for number, text in enumerate(parts, 1)
        ),
    ]


async def summary_round(
    ctx: TurnContext,
    config: SummaryConfig,
    plan: Plan,
    previous: str | None,
    messages: Sequence[Message],
    max_calls: int | None,
    route: Route = UPDATE,
) -> tuple[str, int]:
    """One round: the summary of ``previous`` and a head of ``messages``, and its length.

    ``route.separate``: the head of ``messages`` is summarized without
    ``previous``, and merged with it by one more call, even when one call
    could hold both.
    """
    label = summary_label(plan.slot)
    fit = await summary_fit(ctx, config, plan)
    head = [Message.system(f"{label} {without_quotes(previous)}")] if previous else []
    budget = input_budget(config, head, fit)
    # The merge call carries the previous summary and every part: no more
    # parts than the input budget holds at max_summary_tokens each.
    parts_fit = budget // (config.summary_tokens + _PART_OVERHEAD_TOKENS)
    max_chunks = max(1, parts_fit if max_calls is None else min(max_calls - 1, parts_fit))
    sizes: list[int] = []
    spans = await plan_chunks(
        messages,
        budget,
        fit.counter,
        config.max_tool_result_chars,
        max_chunks=max_chunks,
        sizes=sizes,
    )
    if (len(spans) == 1 or max_chunks == 1) and not (route.separate and previous):
        start, end = spans[0]
        sized = None
        if config.window_guard:  # the request's entries were sized by the plan, but the head's
            head_tokens = await transcript_tokens(fit.counter, head, config.max_tool_result_chars)
            sized = (fit.counter, head_tokens + sizes[0])
        reply = await request_one_summary(
            ctx, config, plan, [*head, *messages[start:end]], None, route, sized=sized
        )
        return reply.text, end
    kept = _PARTS.get()

    async def part(index: int) -> str:
        start, end = spans[index]
        chunk = messages[start:end]
        key = _part_key(chunk, route)
        if kept is not None and key in kept:
            return kept[key][1]
        reply = await request_one_summary(ctx, config, plan, chunk, None, route)
        if kept is not None:
            kept[key] = (chunk, reply.text)  # the messages, so their identities stay theirs
        return reply.text

    parts = await each_chunk(len(spans), part)
    request = merge_request(label, previous, parts)
    reply = await request_one_summary(ctx, config, plan, request, None, route)
    return reply.text, spans[-1][1]


def _part_title(number: int, parts: int) -> str:
    return "the new messages" if parts == 1 else f"part {number} of {parts}"


async def each_chunk(count: int, summarize: Callable[[int], Awaitable[T]]) -> list[T]:
    """``summarize(index)`` of each of ``count`` chunks, in order.

    The first runs alone, so the token correction its usage teaches sizes the
    others' requests; then the rest at once, at most :data:`CHUNK_CONCURRENCY`
    running (see :func:`all_parts` for errors and cancellation).
    """
    limit = asyncio.Semaphore(CHUNK_CONCURRENCY)

    async def limited(index: int) -> T:
        async with limit:
            return await summarize(index)

    first = await summarize(0)
    return [first, *await all_parts(limited(index) for index in range(1, count))]


async def all_parts(work: Iterable[Coroutine[Any, Any, T]]) -> list[T]:
    """The results of ``work``, run at once; the first error is raised once all have ended.

    Unlike a plain :func:`asyncio.gather`, no part is left running when
    another fails or the caller is cancelled: each part that returned has
    stored its cost (:func:`paid`) before this returns or raises, so the
    session agrees with its store when the caller sees the error.
    """
    results = await asyncio.gather(*work, return_exceptions=True)
    done: list[T] = []
    for result in results:
        if isinstance(result, BaseException):
            raise result
        done.append(result)
    return done


async def summary_fit(ctx: TurnContext, config: SummaryConfig, plan: Plan) -> SummaryFit:
    """How the summary requests of ``plan`` are counted: counter, correction, model."""
    model = plan.model or counting_model(ctx, config)
    correction = await session_correction(ctx, runtime_of(ctx.session))
    return SummaryFit(counter_for(ctx, model), correction, model)


async def request_one_summary(
    ctx: TurnContext,
    config: SummaryConfig,
    plan: Plan,
    messages: Sequence[Message],
    max_chars: int | None,
    route: Route = UPDATE,
    *,
    sized: tuple[TokenCounter, int] | None = None,
) -> SummaryReply:
    """One summary request; a server's overflow refusal teaches, then one retry.

    ``route.cap`` and ``route.above`` go to :func:`request_summary` as its
    ``cap`` and ``above``. ``sized``: a counter and the transcript's estimated tokens
    as it sized the entries of ``messages`` already (the plan's), passed on as the
    ``estimate`` of a request counted by that counter.

    A refusal that names a limit below the window teaches the served window
    (for the turns' own provider, stored like a turn's); any other refusal
    teaches the token correction. The usage of every call that returned, a
    usable reply or not, is stored as soon as it returns (:func:`paid`).
    """
    runtime = runtime_of(ctx.session)
    for attempt in range(2):
        fit = await summary_fit(ctx, config, plan)
        provider = summary_provider(ctx, config)
        try:
            reply = await request_summary(
                provider,
                config,
                messages,
                model=plan.model,
                max_chars=max_chars,
                fit=fit,
                cap=route.cap,
                above=route.above,
                estimate=sized[1] if sized is not None and sized[0] is fit.counter else None,
            )
        except SummaryOverflowError as exc:
            if attempt:
                raise
            limit = exc.error.limit_tokens
            if limit is not None and 0 < limit < config.window:
                if provider is ctx.session.bundle.provider:
                    await learn_served_window(ctx, fit.model, limit, config.window)
                config = with_window(config, limit)
                continue
            server = overflow_prompt_tokens(exc.error, config.window, exc.max_tokens)
            await learn(ctx, runtime, fit.model, exc.local_tokens, server)
            continue
        except SummaryCutError as exc:
            await _count(ctx, exc.reply, fit)  # a cut reply is paid for too
            raise
        except SummaryFailedError as exc:
            if exc.usage is not None:  # a reply came, unusable, but paid for
                await paid(ctx, exc.usage)
            raise
        await _count(ctx, reply, fit)
        return reply
    raise AssertionError("unreachable")  # pragma: no cover


async def request_prefix_one(
    ctx: TurnContext, config: SummaryConfig, plan: Plan, *, new_only: bool = False
) -> SummaryReply | None:
    """One prefix-shaped summary request of all of ``plan``, counted like any summary call.

    ``new_only``: of the plan's messages alone, without the earlier summary.

    None when that shape cannot apply
    (:func:`~agentcore_autosummary.calling.summarizer.request_prefix_summary`):
    nothing was paid and the caller asks for a transcript summary.
    """
    fit = await summary_fit(ctx, config, plan)
    provider = summary_provider(ctx, config)
    try:
        reply = await request_prefix_summary(ctx, provider, config, plan, fit, new_only=new_only)
    except SummaryCutError as exc:
        await _count(ctx, exc.reply, fit)
        raise
    except SummaryFailedError as exc:
        if exc.usage is not None:
            await paid(ctx, exc.usage)
        raise
    if reply is not None:
        await _count(ctx, reply, fit)
    return reply


async def _count(ctx: TurnContext, reply: SummaryReply, fit: SummaryFit) -> None:
    """Count and store what ``reply`` cost (:func:`paid`); learn the correction from its usage."""
    await paid(ctx, reply.usage)
    if reply.reported:
        runtime = runtime_of(ctx.session)
        await learn(ctx, runtime, fit.model, reply.request_tokens, reply.usage.input_tokens)


async def paid(ctx: TurnContext, usage: Usage) -> None:
    """Count ``usage`` of a summary call that returned: in the summary's tally and stored.

    ``ctx.cost`` is the summary's own tally (its ``SummaryInfo.usage``); the
    session's cost is stored at once, in its own write (:func:`store_call_cost`).
    """
    ctx.cost.add(usage, purpose="summary")
    await store_call_cost(ctx, usage)


async def check_retention(ctx: TurnContext, config: SummaryConfig, plan: Plan, summary: str) -> str:
    """Apply ``config.retention_check`` to ``summary``: quote, append or log what it left out."""
    if config.retention_check == "off":
        return summary
    previous = None if config.strategy == "full" else plan.previous
    chars = text_chars(plan.messages)
    if config.retention_check == "quote":
        counter = (await summary_fit(ctx, config, plan)).counter
        return await run_by_size(
            chars, quote_missing, summary, previous, plan.messages, counter, config.summary_room
        )
    missing = await run_by_size(
        chars, missing_identifiers, summary, previous, plan.messages, config.max_tool_result_chars
    )
    if not missing:
        return summary
    if config.retention_check == "log":
        log_missing(session_name(ctx.session), missing)
        return summary
    counter = (await summary_fit(ctx, config, plan)).counter
    return append_missing(summary, missing, counter, config.summary_tokens)


async def check_shrinks(ctx: TurnContext, plan: Plan, summary: str, config: SummaryConfig) -> None:
    """Raise :class:`SummaryFailedError` unless ``summary`` leaves a smaller context.

    The context after is rendered as the apply will write it: fenced, with
    the role and position ``config`` sets (``summary_role``, ``summary_position``).
    """
    focused = plan.slot.config.focused
    if focused is None:
        return
    slot = plan.slot
    applied = attrs.evolve(
        focused,
        summary_override=fence_summary(summary),
        summary_covers=plan.covers,
        summary_role=config.summary_role or focused.summary_role,
        summary_position=config.summary_position or focused.summary_position,
    )
    replaced, replacing = await summary_change(slot, counter_for(ctx, turn_model(ctx)), applied)
    if replacing >= replaced:
        raise SummaryFailedError(
            f"the summary would not shrink the context: with it the system prompt, summary "
            f"and pinned messages would take {replacing} tokens, no fewer than the {replaced} "
            "they take now with the messages it would cover: not applied"
        )


def summary_label(slot: ContextSlot) -> str:
    """The label the slot puts before its summary."""
    focused = slot.config.focused
    return focused.summary_label if focused is not None else DEFAULT_SUMMARY_LABEL


@functools.lru_cache(maxsize=64)
def _text_tokens(counter: TokenCounter, text: str) -> int:
    """``counter.count_text(text)`` of a text counted for every summary (the prompt), kept."""
    return counter.count_text(text)


def input_budget(config: SummaryConfig, head: list[Message], fit: SummaryFit) -> int:
    """Local tokens of conversation one summary request may carry."""
    room = fit.correction.unapply(fit.model, config.window - config.summary_reserve)
    fixed = _text_tokens(fit.counter, config.summary_prompt)
    fixed += sum(fit.counter.count_text(message.text) for message in head)
    return max(room - fixed - _INPUT_MARGIN_TOKENS, 64)
