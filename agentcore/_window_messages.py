"""The read-only view of a slot's loaded messages, indexed by absolute position.

:attr:`ContextSlot.messages <agentcore.ContextSlot.messages>` hands out a
:class:`WindowMessages`: a slot holds only a window of its raw history (the
messages from its offset on, plus the pinned ones older than that), and the
view reads it with the indices of the whole history, raising
:class:`~agentcore.errors.SessionError` for a message it does not hold.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import overload

from agentcore.errors import SessionError
from agentcore.messages import Message


class WindowMessages(Sequence[Message]):
    """A read-only view of a slot's loaded window, indexed by absolute position."""

    __slots__ = ("_items", "_offset", "_pins", "_slot_id")

    def __init__(
        self,
        items: list[Message],
        offset: int,
        slot_id: str,
        pins: Mapping[int, Message] | None = None,
    ) -> None:
        self._items = items
        self._offset = offset
        self._slot_id = slot_id
        self._pins = pins or {}

    def _not_loaded(self, index: int) -> SessionError:
        return SessionError(
            f"raw message {index} of slot {self._slot_id!r} is not loaded (the slot holds "
            f"messages {self._offset}.. of {len(self)}): read older messages with "
            "`await session.history(slot_id, start=..., stop=...)`"
        )

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        total = len(self)
        if isinstance(index, slice):
            start, stop, step = index.indices(total)
            if step != 1:
                raise SessionError("a slot's message view takes slices with step 1 only")
            if stop <= start:
                return []
            if start < self._offset:
                raise self._not_loaded(start)
            return self._items[start - self._offset : stop - self._offset]
        if index < 0:
            index += total
        if not 0 <= index < total:
            raise IndexError(f"message index {index} out of range (slot holds {total})")
        if index < self._offset:
            pinned = self._pins.get(index)
            if pinned is None:
                raise self._not_loaded(index)
            return pinned
        return self._items[index - self._offset]

    def __iter__(self) -> Iterator[Message]:
        if self._offset:
            raise self._not_loaded(0)
        return iter(self._items)

    def __len__(self) -> int:
        return self._offset + len(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return self._offset == 0 and list(self._items) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"<{len(self)} messages, {len(self._items)} loaded>"
