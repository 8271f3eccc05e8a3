"""Making one summary: the first request, the gate, and the retries a refusal leads to."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs
from attrs import frozen

from agentcore import Message, TurnContext
from agentcore_autosummary.calling.segments import make_segment_summary
from agentcore_autosummary.calling.summarizer import SummaryCutError, SummaryFailedError
from agentcore_autosummary.calling.summary_calls import (
    check_retention,
    check_shrinks,
    parts_kept,
    request_one_summary,
    summarize_in_chunks,
    summary_fit,
)
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.pins import unpinned_indices
from agentcore_autosummary.deciding.plan import Plan
from agentcore_autosummary.deciding.planner import chunk_end
from agentcore_autosummary.judging.gate import judge, refusal
from agentcore_autosummary.judging.quoting import without_quotes
from agentcore_autosummary.keeping.runtime import previous_summary
from agentcore_autosummary.keeping.state import Segment
from agentcore_autosummary.keeping.summary_info import SummaryQuality
from agentcore_autosummary.log_names import at_turn
from agentcore_autosummary.requesting.formatting import (
    MAX_CONVERSATION_CHARS,
    format_messages_as_text,
    messages_read,
)
from agentcore_autosummary.requesting.routes import (
    MAX_EXTRA_CALLS,
    RESUMMARY,
    ROUTES,
    SMALLER_INPUT,
    UPDATE,
    Route,
    higher_cap,
)
from agentcore_autosummary.requesting.sizing import transcript_tokens
from agentcore_autosummary.text.sentences import whole_sentences

logger = logging.getLogger("agentcore.autosummary")


@frozen
class Attempt:
    """One way of asking for a summary, judged: what it made, covers and looked like."""

    summary: str
    plan: Plan
    quality: SummaryQuality
    route: str
    cut: SummaryCutError | None = None
    """The refusal of a reply that stopped at its cap, None otherwise."""
    whole: str = ""
    """With ``retention_check="quote"``, a reply cut at its cap up to its last whole
    sentence when the gate keeps that part (not a copy, not an echo); "" otherwise."""


async def make_summary(
    ctx: TurnContext, config: SummaryConfig, plan: Plan
) -> tuple[str, Plan, SummaryQuality]:
    """The summary of ``plan``, what it covers, and the gate's record of it.

    The summary is first asked for as an update; each refusal of the gate
    (:mod:`agentcore_autosummary.judging.gate`) leads to the next retry route of its
    verdict (:mod:`agentcore_autosummary.requesting.routes`), within
    :data:`~agentcore_autosummary.requesting.routes.MAX_EXTRA_CALLS` more calls. When
    every route is refused, the last refusal is raised
    (:class:`~agentcore_autosummary.judging.gate.SummaryRejectedError`: a failed
    attempt), except a ``"lost"`` one: a summary whose only fault is the
    identifiers it lost is applied with that verdict when no route does better
    (a warning names them), since a failed attempt would leave whole messages
    out instead; and a ``"copy"`` that a retry by another route gave again
    (the summarizer, asked afresh from the raw messages, still found nothing
    to add) is applied with that verdict, covering the new messages; with
    ``retention_check="quote"``, a reply that stopped at its cap is applied up
    to its last whole sentence, with that verdict and no retry, when that part
    is neither a copy nor an echo, and otherwise when every route's retry also
    stopped at its cap (the quotes bring back what the cut left out). The plan
    returned is ``plan`` cut to what the summary covers.
    A summary applied to a Focused slot must leave a smaller context than the
    one it replaces, or :class:`SummaryFailedError` is raised; a summary whose
    quotes alone keep the context from shrinking is applied without them.
    A chunk summarized alone is asked for once across the attempts
    (:func:`~agentcore_autosummary.calling.summary_calls.parts_kept`).
    """
    with parts_kept():
        return await _make_summary(ctx, config, plan)


async def make_summary_parts(
    ctx: TurnContext, config: SummaryConfig, plan: Plan
) -> tuple[str, Plan, SummaryQuality, tuple[Segment, ...]]:
    """:func:`make_summary` by ``config.strategy``, with the segments the summary is made of.

    Under ``"segments"`` the summary is made of its parts
    (:func:`~agentcore_autosummary.calling.segments.make_segment_summary`); under the
    other strategies it is one text and no segments are kept.
    """
    if config.strategy == "segments":
        with parts_kept():
            return await make_segment_summary(ctx, config, plan)
    summary, plan, quality = await make_summary(ctx, config, plan)
    return summary, plan, quality, ()


async def _make_summary(
    ctx: TurnContext, config: SummaryConfig, plan: Plan
) -> tuple[str, Plan, SummaryQuality]:
    focused = plan.slot.config.focused
    previous = plan.previous
    if focused is not None:  # the summary the slot holds, as the summarizer wrote it
        previous = previous_summary(focused.summary_override)
    made = await attempt(ctx, config, plan, UPDATE, previous)
    base = made.plan
    tried = [UPDATE.name]
    refused: list[str] = []
    left = MAX_EXTRA_CALLS
    while config.gate and made.quality.verdict != "kept":
        if made.whole:
            # Degrade, never ask again: with quotes, the whole sentences of a reply cut at
            # its cap and the quotes of what they leave out carry the facts; a retry
            # would pay for the whole input again, and small models stop at the cap
            # on every route.
            logger.info(
                "summary of %s stopped at its cap: applied up to its last "
                "whole sentence, with quotes",
                at_turn(ctx, plan.turn_index),
            )
            made = attrs.evolve(made, summary=made.whole)
            break
        route = await next_route(ctx, config, base, made, tried, left)
        if route is None and made.quality.verdict == "lost":
            # Degrade, never refuse: a summary that lost identifiers still carries more
            # than the messages a failed attempt would leave out of the request.
            logger.warning(
                "summary of %s applied although it loses %d identifier(s) "
                "of the previous summary that no retry route kept: %s",
                at_turn(ctx, plan.turn_index),
                len(made.quality.identifiers_lost),
                ", ".join(made.quality.identifiers_lost),
            )
            break
        if route is None and made.quality.verdict == "copy" and len(tried) > 1:
            # The summarizer gave the same summary again by another route (a summary of
            # the raw messages): the covered messages added nothing it keeps, so the
            # summary stands and now covers them, rather than every later turn leaving
            # them out and asking again.
            logger.info(
                "summary of %s unchanged by every route (%s): applied, covering %d more message(s)",
                at_turn(ctx, plan.turn_index),
                ", ".join(tried),
                len(made.plan.messages),
            )
            break
        if route is None and made.quality.verdict == "truncated" and len(tried) > 1:
            whole = whole_sentences(made.summary) if config.retention_check == "quote" else ""
            if whole:
                # Degrade, never refuse: every route stopped at the cap; with quotes, the
                # reply's whole sentences and the quotes of what they leave out carry
                # more than the messages a failed attempt would leave out of the request.
                logger.info(
                    "summary of %s stopped at its cap by every route (%s): "
                    "applied up to its last whole sentence, with quotes",
                    at_turn(ctx, plan.turn_index),
                    ", ".join(tried),
                )
                made = attrs.evolve(made, summary=whole)
                break
        if route is None:
            raise refusal(
                attrs.evolve(
                    made.quality, route=made.route, attempts=len(tried), refused=tuple(refused)
                )
            )
        logger.info(
            "summary of %s refused (%s by the %s route): asked for again by %s",
            at_turn(ctx, plan.turn_index),
            made.quality.verdict,
            made.route,
            route.name,
        )
        tried.append(route.name)
        left -= route.calls or 0
        try:
            retry = await attempt(ctx, config, base, route, previous)
        except SummaryFailedError as exc:
            logger.info("the %s retry of the summary failed: %s", route.name, exc)
            continue
        refused.append(made.quality.verdict)
        made = retry
    quality = attrs.evolve(
        made.quality, route=made.route, attempts=len(tried), refused=tuple(refused)
    )
    summary = await check_retention(ctx, config, made.plan, made.summary)
    try:
        await check_shrinks(ctx, made.plan, summary, config)
    except SummaryFailedError:
        bare = without_quotes(summary)  # the summary as quoting cleaned it
        if summary == bare:
            raise
        # Degrade: the summary without its quotes, when only they kept the context from
        # shrinking (a summary of a short stretch, in a small window).
        await check_shrinks(ctx, made.plan, bare, config)
        logger.info(
            "summary of %s applied without its quotes: with them the context would not shrink",
            at_turn(ctx, plan.turn_index),
        )
        summary = bare
    return summary, made.plan, quality


async def attempt(
    ctx: TurnContext, config: SummaryConfig, plan: Plan, route: Route, previous: str | None
) -> Attempt:
    """Ask for the summary of ``plan`` by ``route`` and judge it against ``previous``."""
    cut: SummaryCutError | None = None
    read: Sequence[Message] | None = None  # the "full" strategy's: the messages it read
    try:
        if config.strategy == "full":
            chars = MAX_CONVERSATION_CHARS
            if route.halve:  # the newest half of what the first request read
                first = format_messages_as_text(plan.messages, config.max_tool_result_chars)
                chars = len(first) // 2
            # The request holds the newest ``chars`` characters of the history: the gate
            # reads those, not the whole history (its cost would grow with the history).
            read = messages_read(plan.messages, config.max_tool_result_chars, max_chars=chars)
            reply = await request_one_summary(ctx, config, plan, plan.messages, chars, route)
            summary = reply.text
        else:
            raw = unpinned_indices(plan.slot, plan.start, plan.end)
            # Messages edited by a before_summary hook no longer map to raw indices:
            # they are summarized whole, however many calls that takes.
            capped = len(raw) == len(plan.messages)
            if route.halve:
                half = await half_point(ctx, config, plan)
                if half is None:
                    raise SummaryFailedError("the summary input cannot be halved")
                plan = cut_plan(plan, raw, half)
            max_calls = config.max_summary_calls_per_turn if capped else None
            if route.calls is not None:
                max_calls = route.calls
            summary, covered = await summarize_in_chunks(ctx, config, plan, max_calls, route)
            if covered < len(plan.messages):
                # The rest of the backlog is left for the next summary.
                plan = cut_plan(plan, raw, covered)
    except SummaryCutError as exc:
        summary, cut = exc.reply.text, exc
    stop_reason = "end_turn" if cut is None else "max_tokens"
    judged = plan.messages if read is None else read
    quality = judge(
        summary,
        previous,
        judged,
        stop_reason,
        config.max_tool_result_chars,
        lost_refuses=config.retention_check != "quote",
    )
    whole = ""
    if cut is not None and config.retention_check == "quote":
        whole = whole_sentences(summary)
        if whole:
            trimmed = judge(
                whole,
                previous,
                judged,
                "end_turn",
                config.max_tool_result_chars,
                lost_refuses=False,
            )
            if trimmed.verdict != "kept":
                whole = ""
    return Attempt(summary, plan, quality, route.name, cut, whole)


def cut_plan(plan: Plan, raw: list[int], covered: int) -> Plan:
    """``plan`` cut to its first ``covered`` messages (``raw``: their raw indices)."""
    rest = raw[covered]
    return attrs.evolve(plan, end=rest, covers=rest, messages=plan.messages[:covered])


async def half_point(ctx: TurnContext, config: SummaryConfig, plan: Plan) -> int | None:
    """Where about the first half of ``plan``'s messages (in tokens) ends; None: no such place.

    The half ends before a message other than a tool result, so a tool call
    stays with its results; a plan of one such group cannot be halved.
    """
    messages = plan.messages
    counter = (await summary_fit(ctx, config, plan)).counter
    limit = config.max_tool_result_chars
    total = await transcript_tokens(counter, messages, limit)
    end = await chunk_end(messages, 0, len(messages), total // 2, counter, limit)
    return end if end < len(messages) else None


async def next_route(
    ctx: TurnContext,
    config: SummaryConfig,
    plan: Plan,
    made: Attempt,
    tried: list[str],
    left: int,
) -> Route | None:
    """The next route for ``made``'s verdict not ``tried`` yet that applies and fits ``left``."""
    full = config.strategy == "full"
    mapped = len(unpinned_indices(plan.slot, plan.start, plan.end)) == len(plan.messages)
    for name in ROUTES.get(made.quality.verdict, ()):
        if name in tried:
            continue
        route: Route | None = None
        if name == "higher_cap":
            # A cap the user set (max_summary_tokens) is theirs: only a derived one is raised.
            derived = config.max_summary_tokens is None
            if derived and made.cut is not None and not made.cut.window_bound:
                route = higher_cap(made.cut.max_tokens)
        elif name == "smaller_input":
            if full or (mapped and await half_point(ctx, config, plan) is not None):
                route = SMALLER_INPUT
        elif name == "resummary" and not full and mapped and plan.previous:
            route = RESUMMARY
        if route is not None and (route.calls or 0) <= left:
            return route
    return None
