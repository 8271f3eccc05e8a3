"""The ways a summary is asked for, and which one a refusal leads to.

A summary is first asked for as an ``"update"``: the previous summary and
the messages it does not cover yet, in as many calls as
``max_summary_calls_per_turn`` allows. When the gate refuses it, it is asked
for again another way, within :data:`MAX_EXTRA_CALLS` more calls:

=============  ==============================================================
verdict        routes, in order
=============  ==============================================================
``truncated``  ``higher_cap`` (twice the cap it stopped at, as far as the
               window allows; skipped when the window set that cap or the
               user set ``max_summary_tokens``), then ``smaller_input``
``copy``       ``resummary``
``echo``       ``smaller_input``, then ``resummary``
``lost``       ``resummary``
=============  ==============================================================

- ``higher_cap``: one request of what one request holds, with the higher cap;
  its summary may be up to that cap long.
- ``smaller_input``: one request of about the first half of the messages (a
  tool call kept with its results); the summary covers only those, and the
  rest is left for the next summary. The ``"full"`` strategy keeps the newest
  half of the characters its first request read instead.
- ``resummary``: two requests: the messages summarized alone, without the
  previous summary, then that summary merged with the previous one, each a
  labelled part of the merge request.

A route that costs more calls than are left, or that cannot apply (no
previous summary to merge with, messages a ``before_summary`` hook replaced,
a single group of messages that cannot be halved), is skipped.
"""

from __future__ import annotations

from attrs import frozen

MAX_EXTRA_CALLS = 2
"""The most summary calls the retries of one summary attempt may make."""


@frozen
class Route:
    """How a summary is asked for.

    :param name: ``"update"``, ``"higher_cap"``, ``"smaller_input"`` or ``"resummary"``.
    :param calls: The summary calls it makes at most (None: ``max_summary_calls_per_turn``).
    :param cap: The cap of its requests (None: ``max_summary_tokens``).
    :param above: A request whose reply the window holds to this many tokens or fewer
        is not sent.
    :param separate: The messages are summarized without the previous summary, then
        merged with it.
    :param halve: The input is about half of what the first request read.
    """

    name: str
    calls: int | None = None
    cap: int | None = None
    above: int = 0
    separate: bool = False
    halve: bool = False


UPDATE = Route("update")
"""The first request of a summary."""

SMALLER_INPUT = Route("smaller_input", calls=1, halve=True)
"""About half the input, in one request."""

RESUMMARY = Route("resummary", calls=2, separate=True)
"""The messages alone, then merged with the previous summary."""


def higher_cap(stopped_at: int) -> Route:
    """One request with twice the cap a reply stopped at, above which it must reach."""
    return Route("higher_cap", calls=1, cap=2 * stopped_at, above=stopped_at)


ROUTES: dict[str, tuple[str, ...]] = {
    "truncated": ("higher_cap", "smaller_input"),
    "copy": ("resummary",),
    "echo": ("smaller_input", "resummary"),
    "lost": ("resummary",),
}
"""The retry routes of each verdict, in the order they are tried."""
