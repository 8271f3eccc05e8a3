"""What the plugin remembers about each slot between turns."""

from __future__ import annotations

from typing import Any

import cattrs
from attrs import frozen

from agentcore import CorruptDataError
from agentcore_autosummary.keeping.attachments import AttachmentRecord


@frozen
class Segment:
    """One part of a summary made under ``strategy="segments"``.

    :param start: The first raw message of the slot it summarizes.
    :param end: The raw message after the last one it summarizes.
    :param text: Its summary, quotes included.
    :param turns: The first and last turn that wrote those messages, when the plugin
        saw them stored (None: a resumed session's or an imported history's).
    """

    start: int
    end: int
    text: str
    turns: tuple[int, int] | None = None


@frozen
class SummaryState:
    """The plugin's bookkeeping for one slot, kept in the session data.

    :param last_summary_turn: Turn of the last summary applied, None before the first.
    :param last_attempt_turn: Turn of the last attempt, successful or not.
    :param covered: Index of the first raw message the summary does not cover.
    :param generation: How many summaries have been applied to the slot.
    :param summary: The latest summary of a slot that has no Focused config to hold
        it; None for a Focused slot, whose ``summary_override`` is the summary (data
        stored before kept a copy here too, still read as is).
    :param failures: Summary attempts that failed in a row since the last applied one;
        the next attempt waits ``agentcore_autosummary.deciding.trigger.backoff_turns`` turns.
    :param segments: Under ``strategy="segments"``, the parts the summary is made of,
        oldest first (stored only when there are some).
    :param attachments: The record: every attachment the summary covers and the
        request no longer carries, oldest first (see
        ``agentcore_autosummary.applying.record``; stored only when there are some,
        so a state stored before the field existed loads with none).
    :param kept: The raw indices the plugin pinned itself to keep images in the request
        (``SummaryConfig.keep_images``); the slot's other pins are the user's (stored
        only when there are some).
    :param turns: ``(raw index, turn)`` of the messages holding attachments, as the
        plugin saw their turns written, for those the record may name later (stored
        only when there are some).
    """

    last_summary_turn: int | None = None
    last_attempt_turn: int | None = None
    covered: int = 0
    generation: int = 0
    summary: str | None = None
    failures: int = 0
    segments: tuple[Segment, ...] = ()
    attachments: tuple[AttachmentRecord, ...] = ()
    kept: tuple[int, ...] = ()
    turns: tuple[tuple[int, int], ...] = ()


_OPTIONAL = ("segments", "attachments", "kept", "turns")
"""Fields stored only when not empty, so the data stored without them stays as it was."""

STATE_KEY_PREFIX = "autosummary/"
"""Session-data keys of the plugin's per-slot state start with this."""


def state_key(slot_id: str) -> str:
    """The session-data key holding the :class:`SummaryState` of ``slot_id``."""
    return f"{STATE_KEY_PREFIX}{slot_id}"


_converter = cattrs.Converter(forbid_extra_keys=True)


def state_to_json(state: SummaryState) -> dict[str, Any]:
    """``state`` as JSON-ready data."""
    data: dict[str, Any] = _converter.unstructure(state)
    for name in _OPTIONAL:
        if not data[name]:
            del data[name]  # the data stored before the field existed
    return data


def state_from_json(data: Any, *, slot_id: str) -> SummaryState:
    """The state stored as ``data`` (None: a fresh state)."""
    if data is None:
        return SummaryState()
    try:
        return _converter.structure(data, SummaryState)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        raise CorruptDataError(
            f"stored session data {state_key(slot_id)!r} is not a valid summary state: {exc}"
        ) from exc
