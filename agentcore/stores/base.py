"""The store protocol: what a session persists, and how."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol, TypeVar, runtime_checkable

from attrs import define, field, frozen

from agentcore.errors import StoreError
from agentcore.messages import Message
from agentcore.stores.stored_turn import StoredTurn as StoredTurn  # re-exported
from agentcore.usage import Usage

JsonValue = Any
"""A value that :func:`json.dumps` accepts."""

MAX_ID_BYTES = 512
"""The longest id a store keeps (session id, slot id, data key, turn id, lease owner), in bytes
of UTF-8 (512 ASCII characters). Every engine refuses longer ids alike: PostgreSQL's btree
index rows hold at most 2704 bytes (a third of a page), and the primary keys hold up to two
ids plus an index."""


@frozen
class SessionState:
    """What a session needs to resume besides its slots and data."""

    turn_index: int = 0
    current_slot: str = "default"
    cost: Mapping[str, Usage] = field(factory=dict)


@frozen
class SlotHead:
    """Where a stored slot stands: its config ``version`` and its message ``count``.

    A store bumps ``version`` by one on every write that replaces the slot's
    config (a slot without a stored config is at version 0), and ``count`` is
    the number of raw messages the slot holds. Two heads that compare equal
    mean nothing of the slot changed in between.
    """

    version: int = 0
    count: int = 0


@frozen
class MessageAppend:
    """Messages appended to a slot's raw history, starting at index ``start``.

    ``start`` must equal the number of messages the slot holds: a store
    refuses the write otherwise (with :class:`~agentcore.errors.ConflictError`),
    so two writers can never interleave. An append of no messages changes
    nothing but still makes the write conditional on the slot's count.
    """

    start: int
    messages: Sequence[Message]


@define
class StoreWrite:
    """Everything one store transaction writes for one session.

    A store applies all of it or none of it. Values go through JSON: what
    comes back is what ``json.loads(json.dumps(value))`` gives (tuples come
    back as lists). A key both in ``data`` and in ``deleted_data`` is refused.

    The concurrency rule every store follows: each entry of ``slot_configs``
    bumps that slot's :attr:`SlotHead.version` by one; a write whose
    ``expected_versions`` names a slot whose stored version differs, or
    whose append does not start at the slot's count, is refused whole with
    :class:`~agentcore.errors.ConflictError`.

    ``turn_id`` makes the write idempotent: the store keeps the ids of the
    writes that carried one (per session), and a write whose ``turn_id`` is
    already stored is refused whole with
    :class:`~agentcore.errors.DuplicateTurnError` (a ``ConflictError``;
    its ``turn`` says where the stored one is, as :meth:`MemoryStore.find_turn`
    does). That check comes before every other: a resubmitted turn is reported
    as a duplicate, not as a conflicting append. A write with a ``turn_id``
    appends messages to at most one slot (the turn's); one that appends to
    two is refused with :class:`~agentcore.errors.StoreError`.

    With a ``turn_id``, an error means "not stored": when the connection breaks
    during the write (so the commit may or may not have happened), the store
    tries the write again (PostgreSQL: at most
    ``agentcore.stores.postgres.WRITE_RETRIES`` (2) times) and reads back
    whether the turn id is stored; stored, the write returns normally. Only
    :class:`~agentcore.errors.WriteOutcomeUnknownError` (the server stayed
    unreachable for the read-back too) leaves the outcome open. Without a
    ``turn_id``, a write whose connection broke raises ``StoreError`` and may
    have been stored.

    ``timeout`` is how many seconds the write may take, every wait included:
    for a pooled connection, for a session another transaction holds locked,
    for a busy database file. Past it the store raises
    :class:`~agentcore.errors.StoreTimeoutError` (a ``StoreError`` and a
    ``TimeoutError``) having stored nothing, and holds no connection or lock
    for it any more. None leaves only the store's own limits (see each
    engine's constructor). A session passes what is left of its turn deadline.
    """

    session_id: str
    state: SessionState | None = None
    slot_configs: dict[str, Mapping[str, JsonValue]] = field(factory=dict)
    appends: dict[str, MessageAppend] = field(factory=dict)
    data: dict[str, JsonValue] = field(factory=dict)
    deleted_data: set[str] = field(factory=set)
    expected_versions: dict[str, int] = field(factory=dict)
    turn_id: str | None = None
    timeout: float | None = None


@runtime_checkable
class MemoryStore(Protocol):
    """Where sessions keep their state. All methods are coroutines.

    Raw message history is append-only: the protocol has no way to rewrite or
    delete a stored message, except by deleting the whole session with
    :meth:`delete_session`. Implementations raise
    :class:`agentcore.errors.StoreError` (or its subclass
    :class:`agentcore.errors.CorruptDataError` for data that does not parse).
    """

    async def write(self, batch: StoreWrite) -> None:
        """Apply ``batch`` in one transaction."""
        ...

    async def load_state(self, session_id: str) -> SessionState | None:
        """The saved state of ``session_id``, or None for a new session."""
        ...

    async def find_turn(self, session_id: str, turn_id: str) -> StoredTurn | None:
        """Where the write with ``turn_id`` stored its turn in ``session_id``, or None.

        Reads what is committed: a write still running is not seen.
        """
        ...

    async def load_slot_configs(self, session_id: str) -> dict[str, Mapping[str, JsonValue]]:
        """Every slot's saved config (JSON), by slot id."""
        ...

    async def load_messages(
        self, session_id: str, slot_id: str, start: int = 0, stop: int | None = None
    ) -> list[Message]:
        """The raw history of a slot from index ``start`` up to ``stop`` (exclusive), oldest first.

        ``stop`` None reads to the end; a ``stop`` past the end reads to the
        end. The cost depends on the length of the range, not of the history.
        """
        ...

    async def count_messages(self, session_id: str, slot_id: str) -> int:
        """How many raw messages a slot holds."""
        ...

    async def slot_heads(self, session_id: str) -> dict[str, SlotHead]:
        """Version and message count of every slot with a stored config, by slot id.

        Its cost does not depend on how many messages the slots hold.
        """
        ...

    async def get_data(self, session_id: str, key: str) -> JsonValue | None:
        """The session-data value under ``key``, or None."""
        ...

    async def data_keys(self, session_id: str) -> list[str]:
        """The session-data keys of ``session_id``, sorted."""
        ...

    async def list_sessions(self) -> list[str]:
        """Every stored session id, sorted."""
        ...

    async def delete_session(self, session_id: str) -> bool:
        """Delete everything stored for ``session_id`` in one transaction.

        State, slot configs, messages and data all go. Returns whether the
        session was stored; deleting an unknown session is not an error.
        """
        ...

    async def check_session(self, session_id: str, timeout: float | None = None) -> None:
        """Raise now what would make a write of ``session_id`` fail later; cheap, stores nothing.

        Meant for a session to call when it opens, before it pays for a model call. Raises
        :class:`~agentcore.errors.StoreError` naming the problem: an id every engine cannot
        keep (empty, over ``agentcore.stores.MAX_ID_BYTES`` = 512 bytes of UTF-8,
        holding NUL or a lone surrogate), a closed store, a database that cannot be written
        (SQLite: a read-only file or directory; PostgreSQL: a read-only server such as a hot
        standby), or one whose write lock another connection holds for longer than
        ``timeout`` seconds (SQLite; the store's ``busy_timeout`` when None), then as
        :class:`~agentcore.errors.StoreTimeoutError`. A pass is no promise: a later write
        can still fail or conflict.
        """
        ...

    async def acquire_lease(self, session_id: str, owner: str, seconds: float) -> bool:
        """Take the lease of ``session_id`` for ``owner`` for ``seconds``; return whether it did.

        The lease is taken when it is free, expired, or already ``owner``'s (then it is
        renewed: it ends ``seconds`` from now). Held by another owner and not expired, it is
        left alone and the call returns False at once: it never waits. The lease is a stored
        row with an expiry (an in-process entry for :class:`InMemoryStore`), not a
        connection held, so a worker that dies (``kill -9``) holds it only until it expires.
        PostgreSQL reads the expiry on the server's clock, SQLite on the host's.

        How a session uses it, so that two workers never pay a model call for a turn only
        one of them can store: pick an ``owner`` unique to the worker (host, pid, a random
        part); before the model call, ``acquire_lease`` with ``seconds`` longer than a turn
        takes (its deadline, say), and while it returns False wait with backoff (say 50 ms
        doubling to 1 s) bounded by the turn's deadline (past it: a timeout, nothing paid);
        once held, reload the session's fresh history (another worker may have stored a turn
        meanwhile), call the model, write the turn, then ``release_lease``. A turn longer
        than ``seconds`` renews it first. The lease is advisory: writes do not check it, and
        the version rule of :class:`StoreWrite` still refuses a write from a stale view.
        """
        ...

    async def release_lease(self, session_id: str, owner: str) -> bool:
        """Give back ``owner``'s lease of ``session_id``; return whether ``owner`` held it.

        A lease held by another owner (or expired and taken since) is left alone.
        """
        ...

    async def close(self) -> None:
        """Release the store's resources."""
        ...


_Store = TypeVar("_Store", bound="BaseStore")


class BaseStore:
    """The lifecycle every store of agentcore shares, written once.

    ``async with store:`` closes it on the way out (and refuses a closed
    store on the way in); once :meth:`close` has run, every call raises
    :class:`~agentcore.errors.StoreError` ("store is closed"). A subclass
    calls ``_check_open()`` first in each method. One without resources to
    release keeps :meth:`close` as it is; one with resources overrides it,
    releasing them only when ``_mark_closed()`` says this call closed the
    store, so closing twice is fine::

        async def close(self) -> None:
            if self._mark_closed():
                await self._pool.close()

    A third-party store may use it too.
    """

    _closed: bool = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run."""
        return self._closed

    async def __aenter__(self: _Store) -> _Store:
        self._check_open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    def _check_open(self) -> None:
        """Raise :class:`~agentcore.errors.StoreError` once the store is closed."""
        if self._closed:
            raise StoreError("store is closed")

    def _mark_closed(self) -> bool:
        """Mark the store closed; True when this call closed it, False when it already was."""
        if self._closed:
            return False
        self._closed = True
        return True

    async def close(self) -> None:
        """Mark the store closed; later calls raise :class:`StoreError`. Closing twice is fine."""
        self._mark_closed()
