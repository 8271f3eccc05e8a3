"""What the summary hooks see, what :func:`~agentcore_autosummary.compact` returns, its error."""

from __future__ import annotations

from typing import Literal

from attrs import define, frozen

from agentcore import Message, SessionError, Usage
from agentcore_autosummary.keeping.attachments import AttachmentRecord

SummaryReason = Literal["watermark", "budget", "compact", "server"]
"""Why a summary is made: the trigger fired after a turn (``"watermark"``), a request
would not fit the window, or automatic recall's part would not (``"budget"``), the
user asked (``"compact"``), or the
provider's server compacted the conversation in a turn's call (``"server"``)."""


class CompactError(SessionError):
    """:func:`~agentcore_autosummary.compact` could not compact the slot.

    The bundle has no ``summary_config``, the slot is not Focused, nothing can be
    given up, a ``before_summary`` hook vetoed the summary, or the summary
    call failed (the cause is chained as ``__cause__``).
    """


@define
class SummaryRequestInfo:
    """A summary about to be requested, handed to ``before_summary`` to read or edit.

    A hook may replace ``prompt`` (it must keep the ``{messages}`` placeholder)
    or ``messages`` (the messages the summarizer reads; the summary still
    covers raw messages ``start:covers`` of the slot), or set ``vetoed``
    (returning False from the hook does the same). ``instructions`` are the
    focus instructions of :func:`~agentcore_autosummary.compact`, already
    part of ``prompt``.

    :param slot_id: The slot being summarized.
    :param turn_index: The turn the summary belongs to (for ``compact``: the
        session's next turn index).
    :param reason: Why the summary is made (``"watermark"``, ``"budget"`` or ``"compact"``).
    :param prompt: The prompt template; ``{messages}`` receives the conversation.
    :param messages: The messages the summarizer reads (after a previous summary,
        if any, which the summarizer reads too).
    :param start: Index of the first raw message read.
    :param end: Index after the last raw message read.
    :param covers: Once applied, the summary covers every raw message before this index.
    :param model: The model the summary call asks for (None: the provider's default).
    :param instructions: Focus instructions given to ``compact``, or None.
    :param vetoed: Set to True to cancel the summary.
    """

    slot_id: str
    turn_index: int
    reason: SummaryReason
    prompt: str
    messages: list[Message]
    start: int
    end: int
    covers: int
    model: str | None = None
    instructions: str | None = None
    vetoed: bool = False


@frozen
class SummaryQuality:
    """How good a summary looked to the gate that decided whether to apply it.

    :param verdict: ``"kept"``, or why it was refused: ``"truncated"`` (the
        reply stopped at its token cap), ``"copy"`` (nearly identical to the
        previous summary although new messages were covered), ``"echo"``
        (mostly transcript copied back), ``"lost"`` (it drops too many
        identifiers of the previous summary that nothing superseded). An
        applied summary is ``"kept"``, or ``"lost"`` when every route of the
        retry was refused only for lost identifiers (the last one is applied,
        with a warning); the other verdicts are never applied, unless
        ``SummaryConfig.gate`` is False: then every summary is applied, and its
        record says what the gate would have refused it for.
    :param stop_reason: Why the summary call's reply ended (``"end_turn"``, ``"max_tokens"``...).
    :param overlap_with_previous: Similarity to the previous summary, 0 to 1 (0 without one).
    :param echoed_share: The share of the summary copied from its input, 0 to 1.
    :param identifiers_kept: Identifiers (paths, URLs, ids, numbers) of the previous
        summary that this one still holds.
    :param identifiers_lost: Identifiers of the previous summary that this one drops
        while the messages it covers neither mention them nor give their subject a
        new value.
    :param route: How the summary was asked for: ``"update"`` (the first request),
        or the retry that made it after a refusal: ``"higher_cap"`` (a higher
        output cap), ``"smaller_input"`` (fewer messages at once) or
        ``"resummary"`` (the messages summarized without the previous summary,
        then merged with it).
    :param attempts: How many ways (routes) the summary was asked for, this one
        included (1: the first was kept).
    :param refused: The verdicts of the attempts refused before this one, in order.
    """

    verdict: str
    stop_reason: str
    overlap_with_previous: float = 0.0
    echoed_share: float = 0.0
    identifiers_kept: tuple[str, ...] = ()
    identifiers_lost: tuple[str, ...] = ()
    route: str = "update"
    attempts: int = 1
    refused: tuple[str, ...] = ()


@frozen
class SummaryInfo:
    """A summary that was applied: handed to ``after_summary``, returned by ``compact``.

    :param slot_id: The slot summarized.
    :param turn_index: The turn the summary belongs to.
    :param reason: Why it was made (``"watermark"``, ``"budget"``, ``"compact"``, or
        ``"server"``: the provider's server compacted in a turn's call, and ``summary``
        is a note saying its item cannot be read).
    :param summary: The summary as the summarizer wrote it, followed by the
        plugin's record of the attachments it replaced, when there are some (the
        slot's ``summary_override`` holds it fenced as data: see
        :func:`~agentcore_autosummary.fence_summary`).
    :param start: Index of the first raw message the summarizer read.
    :param end: Index after the last raw message it read.
    :param covers: The summary covers every raw message before this index.
    :param tokens_before: Tokens of the slot's context before the summary.
    :param tokens_after: Tokens of the slot's context with the summary in place.
        Both are exact, except for a context past ``max_context_tokens`` that
        holds messages never counted (a long history resumed without its
        stored counts, caught up a few chunks a turn): it is not tokenized
        whole to report them: it is estimated from an even sample of its
        messages (one without its count from its characters), and
        ``tokens_estimated`` is True.
    :param usage: What the summary calls cost, as reported (or counted).
    :param duration: Seconds the summary took, calls included, on a monotonic clock.
    :param model: The model the summary call asked for (None: the provider's default).
    :param quality: The gate's record of the summary (None when no gate ran).
    :param tokens_estimated: Whether ``tokens_before`` or ``tokens_after`` holds an estimate.
    :param attachments: The record of attachments (images, files, audio) the
        summaries of the slot replaced so far, oldest first: what the end of
        ``summary`` names.
    :param kept: The raw indices the plugin pins to keep the newest images in the
        request (``SummaryConfig.keep_images``).
    """

    slot_id: str
    turn_index: int
    reason: SummaryReason
    summary: str
    start: int
    end: int
    covers: int
    tokens_before: int
    tokens_after: int
    usage: Usage | None = None
    duration: float = 0.0
    model: str | None = None
    quality: SummaryQuality | None = None
    tokens_estimated: bool = False
    attachments: tuple[AttachmentRecord, ...] = ()
    kept: tuple[int, ...] = ()


@frozen
class RecallInfo:
    """One recall: a search of what a summary left out, and what it added (``after_recall``)."""

    slot_id: str
    """The slot whose summarized messages were searched."""
    turn_index: int
    """The turn it served."""
    way: Literal["tool", "auto"]
    """``"tool"``: the model called ``recall_history``; ``"auto"``: automatic recall."""
    query: str
    """What was searched for: the tool's query, or the user's message."""
    found: tuple[int, ...]
    """The raw-history indices of the messages found, best first (those kept only)."""
    tokens: int
    """Tokens the recall added: the tool's answer, or the block (0: nothing added)."""
