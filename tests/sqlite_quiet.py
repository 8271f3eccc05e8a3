"""Helpers for tests that measure what one write of a :class:`SqliteStore` runs.

The store indexes for search in a worker thread every ``INDEX_EVERY`` messages and
checkpoints its WAL by the pages written: neither depends on the history's length,
and either can land inside a measured write.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentcore import SqliteStore


async def caught_up(store: SqliteStore) -> None:
    """Wait for the catch-up the store started in a worker thread, if it started one.

    A store starts one only when the one before has finished, so this is all of them.
    """
    if store._indexing is not None:
        await store._indexing


async def quiet(store: SqliteStore, session_id: str) -> None:
    """Leave nothing to run on the store's connection but the caller's next write.

    The worker thread's catch-up is awaited (a batch of it holding the connection would
    make the write wait for the lock, in a worker thread of its own), then a search
    indexes what is left, so the write that follows indexes nothing.
    """
    await caught_up(store)
    await store.search_messages(session_id, "anything")


def own_statements(statements: Iterable[str]) -> list[str]:
    """The statements of a write, without those whose number varies with the file's past.

    The index's own statements ("-- ..." in the trace) vary with its merges, and a WAL
    checkpoint comes with the pages written since the last one.
    """
    return [s for s in statements if not s.startswith(("--", "PRAGMA wal_checkpoint"))]
