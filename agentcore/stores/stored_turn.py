"""StoredTurn: where a store put a turn, below the errors that carry one.

Importable from :mod:`agentcore.stores` and ``agentcore.stores.base`` too.
"""

from __future__ import annotations

from attrs import frozen


@frozen
class StoredTurn:
    """Where a write with a ``turn_id`` put its turn.

    ``slot_id`` is the slot its messages went to, ``start`` and ``stop`` their
    index range there (``stop`` exclusive; equal when it appended none, and
    ``slot_id`` None when it appended to no slot). ``turn_index`` is the
    :attr:`SessionState.turn_index` the write stored (the number of turns once
    it was stored: the turn's own 0-based index is one less), None when the
    write stored no state.
    """

    slot_id: str | None
    start: int
    stop: int
    turn_index: int | None
