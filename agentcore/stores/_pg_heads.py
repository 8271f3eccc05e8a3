"""The slot heads a :class:`~agentcore.stores.PostgresStore` last wrote, per session.

A session checks its slot heads before every model call. A PostgreSQL store that listens
to the change notices of its schema (see :mod:`agentcore.stores._pg_listener`) answers
that check from what its own last write of the session stored, without a round trip to
the server, while no notice says that another connection changed the session since.

An entry is trusted only once the notice of the write that stored it has come back to
the listener. PostgreSQL delivers a channel's notices in commit order, so that notice
proves that every commit before the write reached the listener too, and that the
listener works at all (behind a pooler in transaction mode, or on a connection that died
without a word, no notice comes back and every check queries). A notice from any other
backend drops the entry; so does a reconnection of the listener, which may have missed
notices while it was away. The notices of the store's own earlier writes of the session,
which may come after the next write began (a pool hands out its connections in turn), are
passed over. Nothing here does I/O: the listener and the store's write call these methods
on the event loop's thread.
"""

from __future__ import annotations

import attrs

from agentcore.stores.base import SlotHead

MAX_CACHED_SESSIONS = 4096
"""How many sessions' heads a store keeps at most (the least recently written go first)."""


@attrs.define(eq=False)
class Entry:
    """What one write of a session left: the backend that wrote it and, once known, the heads."""

    session_id: str
    pid: int
    epoch: int
    heads: dict[str, SlotHead] | None = None
    confirmed: bool = False
    earlier: dict[int, int] = attrs.Factory(dict)
    """Notices of this store's earlier writes of the session still to come, by backend.

    A pool hands out its connections in turn, so the write before this one may have
    run on another backend, and its notice may come after this write began: it is
    this store's own, not another writer's, and must neither confirm nor drop the entry.
    """


class HeadCache:
    """Slot heads by session, each trusted once its write's own notice came back.

    ``epoch`` counts the listener's connections: an entry begun on an earlier one is never
    trusted, since notices sent while the listener reconnected are lost.
    """

    def __init__(self, schema: str = "") -> None:
        self.listening = False
        self.epoch = 0
        self._prefix = f"{schema}."
        self._entries: dict[str, Entry] = {}

    def start_listening(self, schema: str) -> None:
        """The listener (re)connected and listens for the notices of tables in ``schema``."""
        self._entries.clear()
        self._prefix = f"{schema}."
        self.epoch += 1
        self.listening = True

    def stop_listening(self) -> None:
        """The listener lost its connection or was closed: trust nothing kept."""
        self.listening = False
        self.epoch += 1
        self._entries.clear()

    def lookup(self, session_id: str) -> dict[str, SlotHead] | None:
        """The kept heads of ``session_id`` (a copy), or None when they may be out of date."""
        entry = self._entries.get(session_id)
        if (
            entry is None
            or entry.heads is None
            or not entry.confirmed
            or not self.listening
            or entry.epoch != self.epoch
        ):
            return None
        return dict(entry.heads)

    def begin(self, session_id: str, pid: int) -> Entry | None:
        """A write of ``session_id`` that changes its slot rows starts on backend ``pid``.

        Returns the entry to finish with :meth:`end`, or None when not listening. Any entry
        kept for the session is dropped first: until the write ends, its heads are unknown.
        """
        old = self._entries.pop(session_id, None)
        if not self.listening:
            return None
        if len(self._entries) >= MAX_CACHED_SESSIONS:
            del self._entries[next(iter(self._entries))]
        entry = Entry(session_id, pid, self.epoch)
        # The last write committed, unconfirmed: its notice (and those it still waited for)
        # may be on their way, and must neither confirm this one (on the same backend) nor
        # drop it (on another). A write still under way (another session object's) is not
        # waited for: its notice drops this entry, which then queries.
        if (
            old is not None
            and old.epoch == self.epoch
            and old.heads is not None
            and not old.confirmed
        ):
            entry.earlier = dict(old.earlier)
            entry.earlier[old.pid] = entry.earlier.get(old.pid, 0) + 1
        self._entries[session_id] = entry
        return entry

    def end(self, entry: Entry, heads: dict[str, SlotHead] | None) -> None:
        """The write of ``entry`` committed leaving ``heads``, or failed (None): keep or drop.

        An entry that another write or a notice replaced meanwhile stays dropped.
        """
        if self._entries.get(entry.session_id) is not entry:
            return
        if heads is None:
            del self._entries[entry.session_id]
        else:
            entry.heads = dict(heads)

    def forget(self, session_id: str) -> None:
        """Drop what is kept for ``session_id`` (it was deleted)."""
        self._entries.pop(session_id, None)

    def notice(self, pid: int, payload: str) -> None:
        """A notice from backend ``pid`` says the session in ``payload`` changed.

        The notices of this store's earlier writes of the session, still on their way, are
        passed over; then the notice of the write of an entry confirms the entry. Any other
        drops it. A payload of another schema is ignored.
        """
        if not payload.startswith(self._prefix):
            return
        session_id = payload[len(self._prefix) :]
        entry = self._entries.get(session_id)
        if entry is None:
            return
        if entry.epoch != self.epoch or entry.confirmed:
            del self._entries[session_id]
            return
        due = entry.earlier.get(pid, 0)
        if due:  # an earlier write's own notice
            if due == 1:
                del entry.earlier[pid]
            else:
                entry.earlier[pid] = due - 1
        elif entry.pid == pid:
            entry.confirmed = True
        else:
            del self._entries[session_id]
