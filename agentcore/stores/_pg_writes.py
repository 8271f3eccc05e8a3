"""How :class:`~agentcore.stores.PostgresStore` writes: deadlines, locks, lost connections."""

from __future__ import annotations

import asyncio
import logging

from psycopg.errors import QueryCanceled
from psycopg_pool import PoolTimeout

from agentcore.errors import (
    DuplicateTurnError,
    StoreError,
    StoreTimeoutError,
    WriteOutcomeUnknownError,
)
from agentcore.stores._codec import EncodedWrite, encode_batch
from agentcore.stores._deadline import LOCK_TRY_SECONDS, Deadline, pauses
from agentcore.stores._pg_pool import (
    LOCK_BEFORE_STATEMENT,
    SET_LOCK_TIMEOUT,
    SET_TIMEOUTS,
    ConnectionLost,
    LockBusy,
    PostgresConnections,
    milliseconds,
)
from agentcore.stores._pg_write import (
    FIND_TURN,
    LOCK_SESSION,
    apply_write,
    changes_heads,
    heads_of,
    turn_of_row,
)
from agentcore.stores.base import StoredTurn, StoreWrite

logger = logging.getLogger("agentcore.stores.postgres")

WRITE_RETRIES = 2
"""How many times a write with a ``turn_id`` is tried again after its connection broke."""

RESOLVE_SECONDS = 2.0
"""The least time given to reading back whether a write whose connection broke was stored.

The read-back may take what is left of the write's ``timeout``, and at least this long (so
a write may overrun its timeout by this much to find out, rather than leave its outcome
unknown); a write without a timeout gives it the store's ``timeout`` (30 s by default).
"""

_RETRY_PAUSE = 0.05


class PostgresWrites(PostgresConnections):
    """The write of :class:`~agentcore.stores.PostgresStore`, with its retries and read-back."""

    async def write(self, batch: StoreWrite) -> None:
        """Apply ``batch`` in one transaction, or raise :class:`StoreError` and change nothing.

        An append whose ``start`` is not the slot's message count, or an expected version
        that is not the slot's, is refused with :class:`~agentcore.errors.ConflictError`;
        a ``turn_id`` already stored with :class:`~agentcore.errors.DuplicateTurnError`.
        A write with a ``turn_id`` whose connection breaks is tried again (at most
        ``WRITE_RETRIES`` (2) times), then resolved by reading back whether its turn id is
        stored: see :class:`~agentcore.stores.StoreWrite`.
        """
        self._check_open()
        encoded = encode_batch(batch)
        deadline = Deadline.after(encoded.timeout)
        lost: ConnectionLost | None = None
        for retry in range(WRITE_RETRIES + 1):
            try:
                await self._write_waiting(encoded, deadline)
                return
            except DuplicateTurnError:
                if lost is None:
                    raise
                # A try whose connection broke had stored it after all.
                self._log_resolved(encoded, lost, stored=True)
                return
            except ConnectionLost as exc:
                if encoded.turn_id is None:
                    raise StoreError(
                        f"{exc}; the write to session {encoded.session_id!r} may or may not "
                        "have been stored (a write with a turn_id would have been resolved)"
                    ) from exc
                lost = exc
                if retry == WRITE_RETRIES or deadline.expired():
                    break
                logger.warning(
                    "%s: connection broke during the write of turn %r of session %r; "
                    "trying again (%d of %d)",
                    self._where,
                    encoded.turn_id,
                    encoded.session_id,
                    retry + 1,
                    WRITE_RETRIES,
                )
                await asyncio.sleep(_RETRY_PAUSE * (retry + 1))
            except StoreError as exc:
                if lost is None:
                    raise
                # This try stored nothing; an earlier one that lost its connection may have.
                await self._resolve(encoded, deadline, lost, exc)
                return
        assert lost is not None
        await self._resolve(encoded, deadline, lost, lost)

    async def _write_waiting(self, encoded: EncodedWrite, deadline: Deadline) -> None:
        """Write ``encoded``, waiting for a locked session in tries that free the pool."""
        # How long the write may wait for a locked session, over all its tries.
        lock_wait = Deadline.after(deadline.cap(self._lock_timeout))
        busy: LockBusy | None = None
        for pause in pauses():
            try:
                await self._write_once(encoded, deadline, lock_wait)
                return
            except LockBusy as exc:
                busy = exc
                left = lock_wait.remaining()
                if left is not None and left <= 0:
                    raise self._lock_timed_out(encoded, str(exc)) from None
            except StoreTimeoutError as exc:
                if busy is None or not _ended_by_deadline(exc, deadline):
                    raise
                # The deadline came during a later try, while it waited for a pooled
                # connection (the other sessions' writes had them) or before its lock wait
                # began (a loaded server): the session stayed locked all along.
                raise self._lock_timed_out(encoded, str(busy)) from exc
            await asyncio.sleep(pause if left is None else min(pause, left))

    async def _resolve(
        self,
        encoded: EncodedWrite,
        deadline: Deadline,
        lost: ConnectionLost,
        failure: StoreError,
    ) -> None:
        """Find out whether a write whose connection broke was stored: return if it was.

        Raises ``failure`` (as a StoreError saying so) when it was not, and
        :class:`WriteOutcomeUnknownError` when the read-back keeps failing.
        """
        assert encoded.turn_id is not None
        left = deadline.remaining()
        bound = Deadline.after(max(left if left is not None else self._timeout, RESOLVE_SECONDS))
        last: BaseException = lost
        for pause in pauses():
            try:
                turn = await self._read_back(encoded.session_id, encoded.turn_id, bound)
            except (StoreError, LockBusy) as exc:
                last = exc
                left = bound.remaining()
                if left is not None and left <= 0:
                    break
                await asyncio.sleep(pause if left is None else min(pause, left))
                continue
            self._log_resolved(encoded, lost, stored=turn is not None)
            if turn is not None:
                return
            if failure is lost:
                raise StoreError(
                    f"{lost}; read back after it: turn {encoded.turn_id!r} of session "
                    f"{encoded.session_id!r} is not stored, nothing of the write was"
                ) from lost
            raise failure
        raise WriteOutcomeUnknownError(
            f"{lost}; whether turn {encoded.turn_id!r} of session {encoded.session_id!r} was "
            f"stored could not be read back ({last}); ask find_turn once the server is back"
        ) from lost

    async def _read_back(self, session_id: str, turn_id: str, bound: Deadline) -> StoredTurn | None:
        """Whether ``turn_id`` is stored, read after any transaction still writing the session.

        Takes the session's row lock the way a write does (in a transaction rolled back, so
        nothing is created), so a write still in flight on a broken connection ends first.
        """
        lock_ms = milliseconds(bound.cap(None))
        async with self._connection(bound) as conn, conn.transaction(force_rollback=True):
            await conn.execute(SET_LOCK_TIMEOUT, (lock_ms,))
            await conn.execute(LOCK_SESSION, (session_id, None))
            cursor = await conn.execute(FIND_TURN, (session_id, turn_id))
            return turn_of_row(await cursor.fetchone())

    def _log_resolved(self, encoded: EncodedWrite, lost: ConnectionLost, *, stored: bool) -> None:
        logger.warning(
            "%s: the write of turn %r of session %r lost its connection (%s); read back: %s",
            self._where,
            encoded.turn_id,
            encoded.session_id,
            lost,
            "stored" if stored else "not stored",
        )

    async def _write_once(
        self, encoded: EncodedWrite, deadline: Deadline, lock_wait: Deadline
    ) -> None:
        """One try of a write: one transaction, bounded by the deadlines."""
        lock = lock_wait.cap(LOCK_TRY_SECONDS)
        statement = deadline.cap(self._statement_timeout)
        assert lock is not None
        if statement is not None:
            # A lock wait must end as a lock wait (and be tried again), not as a statement
            # that ran too long: the lock try ends first.
            lock = min(lock, max(0.001, statement - LOCK_BEFORE_STATEMENT))
        lock_ms = milliseconds(lock)
        # Pipeline mode: the statements go out without waiting for each other's replies,
        # except where a result is read (the message counts), so a write costs about three
        # round trips to the server whatever it holds.
        async with self._connection(deadline) as conn:
            # A write that changes slot rows starts an entry of the head cache, kept once
            # it has committed (and trusted once its own change notice is back).
            entry = (
                self._heads.begin(encoded.session_id, conn.info.backend_pid)
                if changes_heads(encoded)
                else None
            )
            try:
                async with conn.pipeline(), conn.transaction():
                    if statement is None:
                        await conn.execute(SET_LOCK_TIMEOUT, (lock_ms,))
                    else:
                        await conn.execute(SET_TIMEOUTS, (lock_ms, milliseconds(statement)))
                    heads = await apply_write(conn, encoded, read_heads=entry is not None)
                if entry is not None:
                    assert heads is not None
                    self._heads.end(entry, await heads_of(heads))
            except BaseException:
                if entry is not None:
                    self._heads.end(entry, None)
                raise

    def _lock_timed_out(self, encoded: EncodedWrite, detail: str) -> StoreTimeoutError:
        limits = [
            f"{value:g} s ({name})"
            for name, value in (
                ("the write's timeout", encoded.timeout),
                ("lock_timeout", self._lock_timeout),
            )
            if value is not None
        ]
        return StoreTimeoutError(
            f"{self._where}: session {encoded.session_id!r} stayed locked by another "
            f"transaction for {' and '.join(limits)} ({detail}); nothing was stored"
        )


def _ended_by_deadline(exc: StoreTimeoutError, deadline: Deadline) -> bool:
    """Whether ``exc`` ended a try because the write's own deadline ran out.

    A pool wait ends at the deadline. A cancelled statement does when the deadline has
    passed: its timer, started by the server after the try read the time left, ran the
    whole of it; a store-level ``statement_timeout`` shorter than that ends it before.
    """
    if isinstance(exc.__cause__, PoolTimeout):
        return True
    return isinstance(exc.__cause__, QueryCanceled) and deadline.expired()
