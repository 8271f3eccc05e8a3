"""The session lease: one worker at a time runs a turn of a session.

With ``AgentBuilder().session_lease()`` a turn takes its session's lease
(:meth:`~agentcore.stores.MemoryStore.acquire_lease`) before its model
call, waits while another worker holds it, and gives it back once its turn
is stored. A worker that dies holds the lease only until it expires: it is
taken for :data:`LEASE_SECONDS` and renewed every third of that while the
turn runs, so a killed worker blocks the others for at most that long.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid

from agentcore._cancel import complete_despite_cancel
from agentcore.errors import StoreError
from agentcore.stores.base import MemoryStore

logger = logging.getLogger("agentcore")

LEASE_SECONDS = 15.0
"""How long a taken lease lasts unless renewed: how long a dead worker can block a session."""

FIRST_WAIT = 0.02
"""The first pause, in seconds, before asking again for a lease another worker holds."""

LONGEST_WAIT = 0.5
"""The longest pause between two asks (the pause doubles from :data:`FIRST_WAIT`)."""


def new_owner() -> str:
    """An owner name unique to this session object: host, process id and a random part."""
    return f"{socket.gethostname()[:100]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


class SessionLease:
    """The lease of one session as one session object takes and gives it back.

    :meth:`acquire` waits until the lease is this object's (bounded by the
    caller's deadline: wrap it in one) and keeps it renewed until
    :meth:`release`. Taking it twice is harmless. A turn shorter than a
    third of the lease starts no task for it: the renewal is a loop timer
    that makes one only when it is due.
    """

    def __init__(
        self, store: MemoryStore, session_id: str, *, seconds: float = LEASE_SECONDS
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.seconds = seconds
        self.owner = new_owner()
        self.waited = 0
        """How many times a turn of this object found the lease held by another worker."""
        self._held = False
        self._timer: asyncio.TimerHandle | None = None
        self._renewal: asyncio.Task[None] | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lease (taken and not yet given back)."""
        return self._held

    async def acquire(self) -> None:
        """Take the lease, waiting with backoff while another worker holds it."""
        if self._held:
            return
        pause = FIRST_WAIT
        while not await self.store.acquire_lease(self.session_id, self.owner, self.seconds):
            if pause == FIRST_WAIT:
                self.waited += 1
                logger.debug("session %r: another worker holds its lease; waiting", self.session_id)
            await asyncio.sleep(pause)
            pause = min(pause * 2, LONGEST_WAIT)
        self._held = True
        self._schedule_renewal()

    def _schedule_renewal(self) -> None:
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.seconds / 3, self._renewal_due)

    def _renewal_due(self) -> None:
        self._timer = None
        if self._held:
            self._renewal = asyncio.ensure_future(self._renew())

    async def _renew(self) -> None:
        """Renew the lease once, then schedule the next renewal while it is held."""
        try:
            kept = await self.store.acquire_lease(self.session_id, self.owner, self.seconds)
        except StoreError as exc:
            logger.warning("session %r: renewing its lease failed: %s", self.session_id, exc)
            kept = True  # tried again at the next renewal
        finally:
            self._renewal = None
        if not kept:  # expired and taken: writes stay guarded by the stored versions
            logger.warning(
                "session %r: its lease expired and another worker took it during a turn",
                self.session_id,
            )
            return
        if self._held:
            self._schedule_renewal()

    async def release(self) -> None:
        """Give the lease back; a store error only delays the next worker until it expires.

        Runs to its end even when the caller is cancelled meanwhile (the
        cancel then propagates), so a cancelled turn never leaves the lease
        held for its full length.
        """
        if not self._held:
            return
        self._held = False
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        renewal, self._renewal = self._renewal, None
        await complete_despite_cancel(self._give_back(renewal), step_here=True)

    async def _give_back(self, renewal: asyncio.Task[None] | None) -> None:
        if renewal is not None:  # a renewal under way ends first, so it cannot take it again
            await asyncio.wait([renewal])
        try:
            await self.store.release_lease(self.session_id, self.owner)
        except StoreError as exc:
            logger.warning(
                "session %r: giving back its lease failed (%s); it lapses in %.0f s",
                self.session_id,
                exc,
                self.seconds,
            )

    async def aclose(self) -> None:
        """Give the lease back if held (for a session that closes)."""
        with contextlib.suppress(StoreError):
            await self.release()
