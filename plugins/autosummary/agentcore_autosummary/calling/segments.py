"""The ``"segments"`` strategy: each summary reads the new messages only, kept as parts.

A small model asked to rewrite its previous summary with new messages
copies it to its cap: the written part stops growing and new facts stop
entering. Under this strategy the summarizer is never shown the previous
summary. Each summary is one new segment, the summary of the messages it
covers alone; the slot's summary is the segments in order, oldest first,
each headed by the stretch of the conversation it covers. When the segments
outgrow their room (:attr:`~agentcore_autosummary.SummaryConfig.segments_room`),
by default (``segments_merge="sentences"``) no call is made: the two oldest
(of two, the older) become their sentences that state a fact, to fit what the
room leaves beside the others (:mod:`~agentcore_autosummary.judging.condensing`),
and the newest stays as the summarizer wrote it. With ``"summarizer"`` the two
oldest are merged by one more call (a later value wins, the request says so),
as often as that takes and the calls allow; a merge that fails leaves the
segments as they are, and the turn goes out all the same. A merge is shown the
two parts' written text only: their quotes never pass through the model (a small
model rewrites them into advice), and with ``retention_check="quote"`` the
merged part quotes again, from both parts, what its written text left out and
no later part replaced. When a new
part joins them, each part loses the values that what came after it
replaced: a later part, the new messages, or the verbatim tail kept after
the summary (:mod:`~agentcore_autosummary.judging.pruning`). A merge is never
shown an old value beside its new one, and the context never states a value
beside the message that changed it.

A segment is judged alone: a reply that stopped at its cap is applied up
to its last whole sentence, judged as applied; one that echoes the transcript,
and a cut one with no whole sentence, is refused (a failed attempt, retried
after the backoff; applied with ``gate=False``); with ``retention_check="quote"``
its quotes follow it, taken from the messages it covers. When only the quotes
keep the summary from shrinking the context, it is applied without them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import attrs

from agentcore import Message, TurnContext
from agentcore.plugin_api import TokenCounter
from agentcore_autosummary.calling.summarizer import SummaryCutError, SummaryFailedError
from agentcore_autosummary.calling.summary_calls import (
    check_retention,
    check_shrinks,
    each_chunk,
    input_budget,
    request_one_summary,
    summary_fit,
)
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.deciding.plan import Plan
from agentcore_autosummary.deciding.planner import even_chunks
from agentcore_autosummary.judging.condensing import condensed
from agentcore_autosummary.judging.gate import SummaryRejectedError, judge, refusal
from agentcore_autosummary.judging.pruning import current_parts, newest_tail
from agentcore_autosummary.judging.quoting import quote_missing, without_quotes
from agentcore_autosummary.keeping.runtime import runtime_of, turn_span
from agentcore_autosummary.keeping.state import Segment
from agentcore_autosummary.keeping.summary_info import SummaryQuality
from agentcore_autosummary.log_names import at_turn
from agentcore_autosummary.requesting.routes import UPDATE
from agentcore_autosummary.requesting.sizing import transcript_tokens
from agentcore_autosummary.text.sentences import whole_sentences

logger = logging.getLogger("agentcore.autosummary")

SEGMENTS_HEADER = (
    "The conversation so far, summarized part by part, oldest first; where a later "
    "part changes something, the later part holds."
)
"""The line before the segments of a summary of more than one."""

MERGE_INSTRUCTION = (
    "Merge these summaries of two consecutive parts of one conversation into one "
    "summary. Keep every name, number, version, path and decision. Where the second "
    "part changes or withdraws something of the first, keep only what the second says."
)
"""The instructions of a merge call, in place of the summary prompt's own."""


def render_segments(segments: Sequence[Segment]) -> str:
    """The summary text of ``segments``: the one text, or each under its stretch, oldest first."""
    if len(segments) == 1:
        return segments[0].text
    parts = [
        f"Part {number} ({_stretch(segment)}):\n{segment.text}"
        for number, segment in enumerate(segments, 1)
    ]
    return "\n\n".join([SEGMENTS_HEADER, *parts])


def _stretch(segment: Segment) -> str:
    """Where a part comes from: its turns, when known, and its messages."""
    messages = f"messages {segment.start + 1}-{segment.end}"
    if segment.turns is None:
        return messages
    first, last = segment.turns
    turns = f"turn {first}" if first == last else f"turns {first}-{last}"
    return f"{turns}, {messages}"


def earlier_segments(plan: Plan, stored: Sequence[Segment]) -> tuple[Segment, ...]:
    """The segments the new one follows: those stored, else the previous summary as one.

    A summary made by another strategy before (or stored before segments were
    kept) is the first segment, covering everything before the plan's start.
    """
    kept = tuple(segment for segment in stored if segment.end <= plan.start)
    if kept and kept[-1].end == plan.start:
        return kept
    if plan.previous:
        return (Segment(start=0, end=plan.start, text=plan.previous),)
    return ()


async def make_segment_summary(
    ctx: TurnContext, config: SummaryConfig, plan: Plan
) -> tuple[str, Plan, SummaryQuality, tuple[Segment, ...]]:
    """The summary of ``plan`` as segments: the new ones made, the oldest merged to fit.

    Returns the summary text, the plan cut to what it covers, the quality record
    of the new part (of several, the one judged worst), and every segment. A stretch
    one request cannot hold becomes several parts (see :func:`_new_parts`); each is
    judged alone, and a refused one ends the summary there. The first chunk, when
    refused, is asked for again once as two halves (:func:`_halves`); refused again,
    it refuses the summary.
    """
    runtime = runtime_of(ctx.session)
    state = runtime.states.get(plan.slot.id)
    earlier = earlier_segments(plan, state.segments if state is not None else ())
    fresh = attrs.evolve(plan, previous=None)
    made: list[tuple[Segment, int]] = []  # each new part, and where its messages end
    quality: SummaryQuality | None = None
    replies = await _new_parts(ctx, config, fresh)
    halved = False
    index = 0
    while index < len(replies):
        text, stop_reason, start, end = replies[index]
        stretch = attrs.evolve(
            fresh,
            start=fresh.start + start,
            end=fresh.start + end,
            covers=fresh.start + end,
            messages=fresh.messages[start:end],
        )
        try:
            text, judged = _gated(config, stretch, text, stop_reason)
        except SummaryRejectedError:
            if made:
                break  # the stretch and those after it are left for a later summary
            left = config.max_summary_calls_per_turn - len(replies)
            halves = [] if halved else await _halves(ctx, config, fresh, start, end, left)
            if not halves:
                raise
            # Asked again another way: the refused chunk as two smaller requests.
            halved = True
            whole = halves[-1][3] == end  # else what the halves leave waits, and all after it
            replies[index:] = [*halves, *(replies[index + 1 :] if whole else [])]
            continue
        index += 1
        if quality is None or (quality.verdict == "kept" and judged.verdict != "kept"):
            quality = judged
        text = await check_retention(ctx, config, stretch, text)
        turns = turn_span(runtime, plan.slot.id, stretch.start, stretch.covers)
        made.append((Segment(start=stretch.start, end=stretch.covers, text=text, turns=turns), end))
    assert quality is not None  # the first part was either made or refused
    covered = made[-1][1]
    if covered < len(plan.messages):
        end = plan.start + covered
        plan = attrs.evolve(plan, end=end, covers=end, messages=plan.messages[:covered])
    tail = newest_tail(plan.slot.messages, plan.covers)
    segments = earlier
    start = 0
    for part, end in made:
        # Each part, and those before it, less what the messages after it replaced.
        after = [*plan.messages[end:], *tail]
        segments = current_parts(segments, part, plan.messages[start:end], after)
        start = end
    segments = await _merged_to_fit(ctx, config, plan, segments)
    summary = render_segments(segments)
    try:
        await check_shrinks(ctx, plan, summary, config)
    except SummaryFailedError:
        bare = tuple(attrs.evolve(part, text=without_quotes(part.text)) for part in segments)
        if bare == segments:
            raise
        # Degrade: the parts without their quotes, when only they kept the context from
        # shrinking (a summary of a short stretch, in a small window).
        summary = render_segments(bare)
        await check_shrinks(ctx, plan, summary, config)
        logger.info(
            "summary of %s applied without its quotes: with them the context would not shrink",
            at_turn(ctx, plan.turn_index),
        )
        segments = bare
    return summary, plan, quality, segments


def _gated(
    config: SummaryConfig, plan: Plan, text: str, stop_reason: str
) -> tuple[str, SummaryQuality]:
    """The text a new part applies of ``text``, the summary of ``plan``'s messages, judged.

    A reply cut at its cap keeps its whole sentences, judged as applied. Raises the
    gate's refusal (:class:`SummaryRejectedError`) for an echo of the transcript, or a
    cut reply with no whole sentence.
    """
    quality = judge(
        text, None, plan.messages, stop_reason, config.max_tool_result_chars, lost_refuses=False
    )
    if stop_reason == "max_tokens":
        whole = whole_sentences(text)
        if whole:
            # What is applied is judged too: a cut echo trimmed to its sentences is an echo.
            trimmed = judge(
                whole,
                None,
                plan.messages,
                "end_turn",
                config.max_tool_result_chars,
                lost_refuses=False,
            )
            if trimmed.verdict != "kept":
                quality = attrs.evolve(trimmed, stop_reason=stop_reason)
        elif config.gate:  # no whole sentence: nothing of the reply can stand
            raise refusal(attrs.evolve(quality, route=UPDATE.name, attempts=1))
        text = whole or text
    if config.gate and quality.verdict not in ("kept", "truncated"):
        raise refusal(attrs.evolve(quality, route=UPDATE.name, attempts=1))
    return text, quality


async def _new_parts(
    ctx: TurnContext, config: SummaryConfig, plan: Plan
) -> list[tuple[str, str, int, int]]:
    """The summaries of ``plan``'s messages alone: each reply, why it stopped, and its stretch.

    Always a transcript of those messages, never the prefix shape: a prefix holds
    the earlier summary, and a small model told to leave it out copies it still.
    The transcript is only the stretch the summary covers, so it costs about what
    reading the whole prefix from the prompt cache does. A stretch one request
    cannot hold is cut in chunks, at most ``max_summary_calls_per_turn``, each
    summarized alone and kept as a part of its own: no call merges them (a small
    model asked to merge copies one of them), and of about one size (see
    :func:`~agentcore_autosummary.deciding.planner.even_chunks`). What no chunk
    holds is left for a later summary. The chunks go out as
    :func:`~agentcore_autosummary.calling.summary_calls.each_chunk` sends them.
    """
    fit = await summary_fit(ctx, config, plan)
    sizes: list[int] = []
    spans = await even_chunks(
        plan.messages,
        input_budget(config, [], fit),
        fit.counter,
        config.max_tool_result_chars,
        max_chunks=config.max_summary_calls_per_turn,
        sizes=sizes,
    )
    return await _summaries(ctx, config, plan, spans, sizes)


async def _halves(
    ctx: TurnContext, config: SummaryConfig, plan: Plan, start: int, end: int, calls_left: int
) -> list[tuple[str, str, int, int]]:
    """:func:`_new_parts` of ``plan.messages[start:end]`` again, in two chunks of about one size.

    A small model that echoed a chunk, or repeated itself to its cap, is asked for
    a summary of half of it, then of the other half: the same request would get the
    same reply. Nothing (``[]``) when no two calls are left or the chunk cannot be
    cut in two.
    """
    if calls_left < 2 or end - start < 2:
        return []
    fit = await summary_fit(ctx, config, plan)
    messages = plan.messages[start:end]
    whole = await transcript_tokens(fit.counter, messages, config.max_tool_result_chars)
    sizes: list[int] = []
    spans = await even_chunks(
        messages,
        -(-whole * 3 // 5),
        fit.counter,
        config.max_tool_result_chars,
        max_chunks=2,
        sizes=sizes,
    )
    if len(spans) < 2:
        return []
    shifted = [(start + first, start + last) for first, last in spans]
    return await _summaries(ctx, config, plan, shifted, sizes)


async def _summaries(
    ctx: TurnContext,
    config: SummaryConfig,
    plan: Plan,
    spans: Sequence[tuple[int, int]],
    sizes: Sequence[int],
) -> list[tuple[str, str, int, int]]:
    """The reply to a summary request of each span of ``plan.messages`` (of ``sizes`` tokens)."""
    counter = (await summary_fit(ctx, config, plan)).counter

    async def summarized(index: int) -> tuple[str, str, int, int]:
        start, end = spans[index]
        sized = (counter, sizes[index]) if config.window_guard else None
        try:
            reply = await request_one_summary(
                ctx, config, plan, plan.messages[start:end], None, UPDATE, sized=sized
            )
        except SummaryCutError as exc:
            return exc.reply.text, "max_tokens", start, end
        return reply.text, "end_turn", start, end

    return await each_chunk(len(spans), summarized)


async def _merged_to_fit(
    ctx: TurnContext, config: SummaryConfig, plan: Plan, segments: tuple[Segment, ...]
) -> tuple[Segment, ...]:
    """``segments`` with the oldest merged while they outgrow their room and calls are left.

    Under ``segments_merge="sentences"`` no call is made (see :func:`_condensed`).
    """
    counter = (await summary_fit(ctx, config, plan)).counter
    calls = config.max_summary_calls_per_turn
    while len(segments) > 1 and calls > 0:
        if counter.count_text(render_segments(segments)) <= config.segments_room:
            break
        if config.segments_merge == "sentences":
            condensed_parts = _condensed(config, counter, segments)
            if condensed_parts == segments:
                break
            segments = condensed_parts
            continue
        first, second = segments[0], segments[1]
        calls -= 1
        try:
            merged = await _merge(ctx, config, plan, first, second)
        except Exception as exc:  # the provider's faults included: the new segment stands
            # Degrade: the segments stay apart; the window guard sizes the request.
            logger.info("the merge of two summary segments failed: %s: %s", type(exc).__name__, exc)
            break
        turns = (first.turns[0], second.turns[1]) if first.turns and second.turns else None
        merged_part = Segment(start=first.start, end=second.end, text=merged, turns=turns)
        segments = (merged_part, *segments[2:])
    return segments


def _condensed(
    config: SummaryConfig, counter: TokenCounter, segments: tuple[Segment, ...]
) -> tuple[Segment, ...]:
    """``segments`` with their oldest made their sentences that carry facts, to fit the room.

    Of three parts or more, the two oldest become one; of two, the older shrinks,
    so the newest part stays as the summarizer wrote it, under its own stretch.
    The condensed part takes what the room leaves beside the others; when that is
    under half the room, every part becomes one, in the room: facts share the room,
    and a long newest part (a small model's extract of small talk) does not crowd out
    the older parts' facts. A text with no sentence that fits is cut in its middle.
    """
    room = config.segments_room - _CONDENSED_MARGIN_TOKENS
    count = 2 if len(segments) > 2 else 1
    budget = room - _beside(counter, segments, count)
    if budget < room // 2:
        count, budget = len(segments), room
    oldest = segments[:count]
    first, last = oldest[0], oldest[-1]
    joined = "\n".join(part.text for part in oldest)
    text = condensed(joined, counter, budget) or counter.cut_middle(joined, budget)
    turns = (first.turns[0], last.turns[1]) if first.turns and last.turns else None
    return (Segment(start=first.start, end=last.end, text=text, turns=turns), *segments[count:])


_CONDENSED_MARGIN_TOKENS = 4
"""Tokens the parts leave of their room when condensed: a text counts a little more
joined to its heading than alone."""


def _beside(counter: TokenCounter, segments: tuple[Segment, ...], count: int) -> int:
    """Tokens the parts after the ``count`` oldest take, with every heading."""
    first, last = segments[0], segments[count - 1]
    placeholder = Segment(start=first.start, end=last.end, text="", turns=None)
    return counter.count_text(render_segments((placeholder, *segments[count:])))


async def _merge(
    ctx: TurnContext, config: SummaryConfig, plan: Plan, first: Segment, second: Segment
) -> str:
    """One call merging two consecutive segments' written parts, then their quotes kept.

    A reply cut at its cap keeps its whole sentences. With
    ``retention_check="quote"``, the sentences of both parts (written and
    quoted) that state what the merged text left out are quoted after it.
    """
    request = [
        Message.user(f"Part 1 (the earlier):\n{without_quotes(first.text)}"),
        Message.user(f"Part 2 (the later):\n{without_quotes(second.text)}"),
    ]
    merging = attrs.evolve(config, summary_prompt=MERGE_INSTRUCTION + "\n\n{messages}")
    try:
        reply = await request_one_summary(ctx, merging, plan, request, None, UPDATE)
        merged = reply.text.strip()
    except SummaryCutError as exc:
        merged = whole_sentences(exc.reply.text)
        if not merged:
            raise SummaryFailedError("the merged summary stopped at its cap") from exc
    if not merged:
        raise SummaryFailedError("the merged summary is empty")
    if config.retention_check != "quote":
        return merged
    counter = (await summary_fit(ctx, config, plan)).counter
    both = f"{first.text}\n\n{second.text}"
    return quote_missing(merged, both, (), counter, config.summary_room)
