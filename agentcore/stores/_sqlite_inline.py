"""Which :class:`~agentcore.stores.SqliteStore` writes may commit on the calling thread.

A worker thread's round trip (:func:`asyncio.to_thread`) costs several times the
short transaction of a turn. So :meth:`~agentcore.stores.SqliteStore.write` first
tries a short write where it is called, with a busy timeout of 0: it either commits
at once or finds the lock taken and stores nothing, then goes to the worker thread,
which waits. A long write (a history import) is encoded and committed in the worker
thread, as every write was before, so it never holds the event loop.
"""

from __future__ import annotations

from agentcore.stores._codec import EncodedWrite
from agentcore.stores.base import MessageAppend, StoreWrite

INLINE_MAX_MESSAGES = 64
"""The most messages a write may append and still be encoded and tried on the calling thread."""

INLINE_MAX_CHARS = 256 * 1024
"""The most characters of JSON a write may carry and still commit on the calling thread."""


def inline_candidate(batch: object) -> bool:
    """Whether ``batch`` is short enough to encode on the calling thread.

    Anything but a :class:`StoreWrite` is too: encoding refuses it at once.
    """
    if not isinstance(batch, StoreWrite):
        return True
    count = 0
    for append in batch.appends.values():
        if isinstance(append, MessageAppend):
            try:
                count += len(append.messages)
            except TypeError:
                return False  # not a sequence: the worker thread's encoding reports it
    return count <= INLINE_MAX_MESSAGES


def encoded_chars(encoded: EncodedWrite) -> int:
    """The characters of JSON text ``encoded`` writes."""
    size = len(encoded.state or "")
    for append in encoded.appends.values():
        for body in append.bodies:
            size += len(body)
    for text in encoded.slot_configs.values():
        size += len(text)
    for text in encoded.data.values():
        size += len(text)
    return size
