"""The gate before a summary is applied: a copy, an echo, a cut-off or lossy reply is refused.

Small models stall in ways that a shrinking context does not catch: they
hand back the previous summary unchanged although new messages were
covered, they copy the transcript (its ``User:`` lines) until their token
cap, they stop at the cap mid-sentence, or they drop what the previous
summary held. Each such summary is refused (:class:`SummaryRejectedError`;
:mod:`agentcore_autosummary.calling.retries` then asks for it another way), and
every verdict, kept or refused, is a :class:`~agentcore_autosummary.SummaryQuality` record.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from itertools import compress

from agentcore import Message
from agentcore_autosummary.calling.summarizer import SummaryFailedError
from agentcore_autosummary.judging.quoting import without_quotes
from agentcore_autosummary.judging.superseding import compare_identifiers
from agentcore_autosummary.keeping.summary_info import SummaryQuality
from agentcore_autosummary.requesting.formatting import format_message
from agentcore_autosummary.text.identifiers import find_identifiers
from agentcore_autosummary.text.words import folded, folded_words

COPY_RATIO = 0.95
"""A summary at least this similar to the previous one, after new messages, is a copy."""

ECHO_SHARE = 0.5
"""A summary whose lines are at least this share transcript entries, or whose
word runs are at least this share copied from the input, is an echo."""

LOST_SHARE = 2 / 3
"""A summary losing more than this share of the previous summary's identifiers, and at
least :data:`MIN_LOST` (see :mod:`agentcore_autosummary.judging.superseding`), is refused.

Two thirds, not the former third, since the identifiers include names, sizes and dates:
a summary now holds 4 to 13 of them, not 0 to 3. On the quality bench a real model's
rewrite from scratch lost 6 of 7 (and 10 of 13 with headings counted), ordinary updates
at most 1; a summary that keeps the newest points and drops the oldest third to half of
them to stay short (the demo's) is a compression to keep, not a stall to refuse."""

ECHO_LENGTH = 0.5
"""Without transcript lines, a reply of copied runs is an echo only at this share of its
input's words or more, or when its runs fill half the stretch of input they come from
(see :func:`_copies_input`); otherwise it is an extract."""

ECHO_DENSITY = 0.25
"""The share of the input stretch its copied runs come from that a reply must fill to be
an echo: a quarter, since the request cuts long messages in the middle, so an echo of what
the summarizer saw fills only part of the stretch of the uncut messages."""

MIN_LOST = 2
"""The fewest lost identifiers that refuse a summary."""

_ROLE_LINE = re.compile(r"^\s*(System|User|Assistant|Tool Result|Tool Error)\b[^:\n]{0,40}:")
_RUN = 8
_SEARCHED_RUNS = 64


class SummaryRejectedError(SummaryFailedError):
    """The summarizer answered, but the gate refused the summary; ``quality`` says why."""

    def __init__(self, message: str, quality: SummaryQuality) -> None:
        super().__init__(message)
        self.quality = quality


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    """Every run of :data:`_RUN` consecutive ``words``."""
    # The later slices are shorter: zip stops at the last whole run.
    return set(zip(*(words[offset:] for offset in range(_RUN)), strict=False))


def _copied_share(summary_runs: set[tuple[str, ...]], input_words: list[str]) -> float:
    """The share of ``summary_runs`` that are also runs of ``input_words``.

    A summary of up to :data:`_SEARCHED_RUNS` runs (most are) has each run looked for
    in the input's words as one text; a longer one reads the input once
    (:func:`runs_found_in_one_pass`).
    """
    if not summary_runs:
        return 0.0
    if len(summary_runs) <= _SEARCHED_RUNS:
        found = runs_found_by_search(summary_runs, input_words)
    else:
        found = runs_found_in_one_pass(summary_runs, input_words)
    return len(found) / len(summary_runs)


def runs_found_by_search(runs: set[tuple[str, ...]], words: list[str]) -> set[tuple[str, ...]]:
    """The ``runs`` that are runs of ``words``: each looked for in the words as one text.

    Words never hold a space, so a run found between spaces is a run of whole words.
    """
    text = " ".join(["", *words, ""])
    return {run for run in runs if " ".join(["", *run, ""]) in text}


def runs_found_in_one_pass(runs: set[tuple[str, ...]], words: list[str]) -> set[tuple[str, ...]]:
    """The ``runs`` that are runs of ``words``, read in one pass over ``words``.

    Only the runs of ``words`` that start with the first word of one of ``runs`` are
    made, so a long input costs one pass over its words, not a set of all its runs.
    """
    if not runs:
        return set()
    size = len(next(iter(runs)))
    firsts = {run[0] for run in runs}
    last = len(words) - size + 1
    starts = compress(range(last), map(firsts.__contains__, words))
    return {tuple(words[at : at + size]) for at in starts} & runs


def new_words(text: str, previous: str) -> set[str]:
    """The words of ``text`` (letters or digits, any case) that ``previous`` lacks."""
    return set(folded_words(text)) - set(folded_words(previous))


def _adds(summary: str, previous: str, transcript_words: list[str]) -> bool:
    """Whether ``summary`` holds a word of the covered messages that ``previous`` did not."""
    new = new_words(summary, previous)
    return bool(new) and not new.isdisjoint(transcript_words)


def _copies_input(summary_words: list[str], input_words: list[str], copied: float) -> bool:
    """Whether a summary of ``summary_words``, mostly copied runs, copies its input's words.

    ``copied`` is the share of the summary's runs found in ``input_words``.

    An extract that picks the input's sentences word for word (a faithful
    summary of fact statements does) takes them from here and there, skipping
    most of what lies between, and is much shorter than what it covers: a
    compression to keep. A reply is an echo when the runs it copies fill at
    least :data:`ECHO_DENSITY` of the stretch of input they come from (it
    copied what lay between them too, up to the cuts the summary request
    made in long messages), or when it is at least :data:`ECHO_LENGTH` of
    the input's length.
    """
    if copied < ECHO_SHARE:
        return False
    if len(summary_words) >= ECHO_LENGTH * len(input_words):
        return True
    matcher = difflib.SequenceMatcher(None, input_words, summary_words, autojunk=False)
    runs = [block for block in matcher.get_matching_blocks() if block.size >= _RUN]
    if not runs:
        return False
    stretch = runs[-1].a + runs[-1].size - runs[0].a
    return sum(block.size for block in runs) >= ECHO_DENSITY * stretch


def judge(
    summary: str,
    previous: str | None,
    messages: Sequence[Message],
    stop_reason: str,
    max_tool_result_chars: int = 500,
    *,
    lost_refuses: bool = True,
) -> SummaryQuality:
    """The quality record of ``summary``, made from ``previous`` and the ``messages`` it covers.

    ``verdict`` is ``"kept"``, or why it is refused: ``"truncated"`` (the
    reply stopped at its token cap), ``"copy"`` (nearly identical to the
    previous summary's written part, its quotes left out as the summarizer
    was shown it, and holding no word of the covered messages that the
    previous one did not, although new messages were covered), ``"echo"``
    (mostly transcript lines, or runs copied word for word from the input
    that fill the stretch they come from or are nearly as long as it), ``"lost"`` (it
    loses at least :data:`MIN_LOST` identifiers of the previous summary,
    more than :data:`LOST_SHARE` of them, that the covered messages did not
    supersede). With ``lost_refuses`` False (``retention_check="quote"``, which
    quotes them back) lost identifiers are recorded but refuse nothing.
    """
    # The copy check reads the previous summary as the summarizer was shown it: its
    # written part, without the quotes that followed it (a copy of that part is a copy).
    written = without_quotes(previous) if previous else None
    overlap = 0.0
    if written:
        overlap = difflib.SequenceMatcher(None, folded(written), folded(summary)).ratio()
    lines = [line for line in summary.splitlines() if line.strip()]
    role_lines = sum(1 for line in lines if _ROLE_LINE.match(line))
    transcript = "\n".join(format_message(m, max_tool_result_chars) for m in messages)
    summary_words, transcript_words = folded_words(summary), folded_words(transcript)
    copied = _copied_share(_runs(summary_words), transcript_words)
    echoed = max(role_lines / len(lines) if lines else 0.0, copied)
    kept, lost = compare_identifiers(previous, summary, transcript)
    held = len(find_identifiers(previous)) if previous else 0
    if stop_reason == "max_tokens":
        verdict = "truncated"
    elif (
        written
        and messages
        and overlap >= COPY_RATIO
        and not _adds(summary, written, transcript_words)
    ):
        verdict = "copy"
    elif echoed >= ECHO_SHARE and (
        role_lines >= 2 or _copies_input(summary_words, transcript_words, copied)
    ):
        verdict = "echo"
    elif lost_refuses and len(lost) >= MIN_LOST and len(lost) > held * LOST_SHARE:
        verdict = "lost"
    else:
        verdict = "kept"
    return SummaryQuality(
        verdict=verdict,
        stop_reason=stop_reason,
        overlap_with_previous=round(overlap, 3),
        echoed_share=round(echoed, 3),
        identifiers_kept=kept,
        identifiers_lost=lost,
    )


def refusal(quality: SummaryQuality) -> SummaryRejectedError:
    """The :class:`SummaryRejectedError` that says why ``quality``'s summary is refused."""
    reasons = {
        "truncated": "the reply stopped at its token cap",
        "copy": (
            f"it repeats the previous summary ({quality.overlap_with_previous:.0%} alike) "
            "although new messages were covered"
        ),
        "echo": f"it copies the transcript ({quality.echoed_share:.0%} of it echoed)",
        "lost": (
            f"it drops {len(quality.identifiers_lost)} identifier(s) of the previous summary "
            f"that the covered messages did not supersede: {', '.join(quality.identifiers_lost)}"
        ),
    }
    reason = reasons.get(quality.verdict, quality.verdict)
    tries = f" (after {quality.attempts} attempts)" if quality.attempts > 1 else ""
    return SummaryRejectedError(f"summary refused{tries}: {reason}", quality)
