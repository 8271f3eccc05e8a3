"""A store that keeps sessions in process memory, for tests and short-lived agents."""

from __future__ import annotations

import time
from collections.abc import Mapping

from attrs import define, field

from agentcore.messages import Message
from agentcore.stores._codec import (
    append_conflict,
    check_lease,
    check_session_id,
    check_start,
    check_stop,
    decode_config,
    decode_data,
    decode_message,
    decode_state,
    duplicate_turn,
    encode_batch,
    version_conflict,
)
from agentcore.stores._deadline import check_timeout
from agentcore.stores._search_rank import bm25_scores
from agentcore.stores.base import (
    BaseStore,
    JsonValue,
    SessionState,
    SlotHead,
    StoredTurn,
    StoreWrite,
)
from agentcore.stores.search import MessageHit, check_search


@define
class _Session:
    state: str | None = None
    slot_configs: dict[str, str] = field(factory=dict)
    messages: dict[str, list[str]] = field(factory=dict)
    data: dict[str, str] = field(factory=dict)
    versions: dict[str, int] = field(factory=dict)
    turns: dict[str, StoredTurn] = field(factory=dict)
    documents: dict[str, list[tuple[str, ...]]] = field(factory=dict)
    """Each message's search tokens, by slot, in the order of ``messages``."""


class InMemoryStore(BaseStore):
    """A :class:`~agentcore.stores.MemoryStore` that keeps everything in a dict.

    Values are kept as the same JSON text :class:`~agentcore.stores.SqliteStore`
    stores, so both stores accept and return the same things, and a caller
    that mutates a value after writing it (or after reading it) changes nothing
    stored. Data is lost when the process ends.
    """

    _write_starts_in_caller = True
    """:meth:`write` never waits and looks at no task-bound state: a session commits it
    without a task of its own (``complete_despite_cancel(step_here=True)``)."""

    def __init__(self) -> None:
        self._sessions: dict[str, _Session] = {}
        self._leases: dict[str, tuple[str, float]] = {}

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{len(self._sessions)} sessions"
        return f"<InMemoryStore {state}>"

    async def write(self, batch: StoreWrite) -> None:
        """Apply ``batch`` whole, or raise :class:`StoreError` and change nothing.

        An append whose ``start`` is not the slot's message count, or an
        expected version that is not the slot's, is refused with
        :class:`~agentcore.errors.ConflictError`.
        """
        self._check_open()
        encoded = encode_batch(batch)
        session = self._sessions.get(encoded.session_id)
        if encoded.turn_id is not None and session is not None:
            stored_turn = session.turns.get(encoded.turn_id)
            if stored_turn is not None:
                raise duplicate_turn(encoded.session_id, encoded.turn_id, stored_turn)
        for slot_id, expected in encoded.expected_versions.items():
            stored = session.versions.get(slot_id, 0) if session is not None else 0
            if stored != expected:
                raise version_conflict(encoded.session_id, slot_id, expected, stored)
        for slot_id, append in encoded.appends.items():
            count = len(session.messages.get(slot_id, ())) if session is not None else 0
            if append.start != count:
                raise append_conflict(encoded.session_id, slot_id, append.start, count)
        # Everything is checked: from here on nothing can fail.
        if session is None:
            session = self._sessions[encoded.session_id] = _Session()
        if encoded.state is not None:
            session.state = encoded.state
        session.slot_configs.update(encoded.slot_configs)
        for slot_id in encoded.slot_configs:
            session.versions[slot_id] = session.versions.get(slot_id, 0) + 1
        for slot_id, append in encoded.appends.items():
            session.messages.setdefault(slot_id, []).extend(append.bodies)
            session.documents.setdefault(slot_id, []).extend(
                tuple(document.split()) for document in append.documents
            )
        session.data.update(encoded.data)
        for key in encoded.deleted_data:
            session.data.pop(key, None)
        if encoded.turn_id is not None and encoded.turn is not None:
            session.turns[encoded.turn_id] = encoded.turn

    async def search_messages(
        self,
        session_id: str,
        query: str,
        *,
        slot_id: str | None = None,
        before: int | None = None,
        limit: int = 5,
    ) -> list[MessageHit]:
        """The stored messages of ``session_id`` that best match ``query``, best first.

        See :meth:`~agentcore.stores.search.SearchableStore.search_messages`; ranked by
        BM25 over the messages searched.
        """
        self._check_open()
        terms = check_search(session_id, query, slot_id, before, limit)
        session = self._sessions.get(session_id)
        if session is None or not terms:
            return []
        places: list[tuple[str, int]] = []
        documents: list[tuple[str, ...]] = []
        for slot, tokens in sorted(session.documents.items()):
            if slot_id is not None and slot != slot_id:
                continue
            kept = tokens if before is None else tokens[:before]
            places.extend((slot, index) for index in range(len(kept)))
            documents.extend(kept)
        scores = bm25_scores(terms, documents)
        found = [at for at, score in enumerate(scores) if score > 0]
        found.sort(key=lambda at: (-scores[at], -places[at][1]))
        hits = []
        for at in found[:limit]:
            slot, index = places[at]
            message = decode_message(session.messages[slot][index], slot, index, session_id)
            turn = next(
                (
                    stored.turn_index - 1
                    for stored in session.turns.values()
                    if stored.slot_id == slot
                    and stored.start <= index < stored.stop
                    and stored.turn_index  # None, or 0: no turn of the session
                ),
                None,
            )
            hits.append(MessageHit(slot, index, message, scores[at], turn))
        return hits

    async def find_turn(self, session_id: str, turn_id: str) -> StoredTurn | None:
        """Return where the write with ``turn_id`` stored its turn, or None."""
        self._check_open()
        session = self._sessions.get(session_id)
        return session.turns.get(turn_id) if session is not None else None

    async def load_state(self, session_id: str) -> SessionState | None:
        """Return the saved state of ``session_id``, or None for a new session."""
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None or session.state is None:
            return None
        return decode_state(session.state, session_id)

    async def load_slot_configs(self, session_id: str) -> dict[str, Mapping[str, JsonValue]]:
        """Return every slot's saved config (JSON), by slot id."""
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None:
            return {}
        return {
            slot_id: decode_config(text, slot_id, session_id)
            for slot_id, text in sorted(session.slot_configs.items())
        }

    async def load_messages(
        self, session_id: str, slot_id: str, start: int = 0, stop: int | None = None
    ) -> list[Message]:
        """Return the raw history of a slot from ``start`` up to ``stop``, oldest first."""
        self._check_open()
        start = check_start(start)
        stop = check_stop(start, stop)
        session = self._sessions.get(session_id)
        bodies = session.messages.get(slot_id, []) if session is not None else []
        return [
            decode_message(body, slot_id, index, session_id)
            for index, body in enumerate(bodies[start:stop], start)
        ]

    async def count_messages(self, session_id: str, slot_id: str) -> int:
        """Return how many raw messages a slot holds."""
        self._check_open()
        session = self._sessions.get(session_id)
        return len(session.messages.get(slot_id, ())) if session is not None else 0

    async def slot_heads(self, session_id: str) -> dict[str, SlotHead]:
        """Return the version and message count of every slot with a stored config."""
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None:
            return {}
        return {
            slot_id: SlotHead(
                session.versions.get(slot_id, 0), len(session.messages.get(slot_id, ()))
            )
            for slot_id in sorted(session.slot_configs)
        }

    async def get_data(self, session_id: str, key: str) -> JsonValue | None:
        """Return the session-data value under ``key`` (a fresh copy), or None."""
        self._check_open()
        session = self._sessions.get(session_id)
        if session is None or key not in session.data:
            return None
        return decode_data(session.data[key], key, session_id)

    async def data_keys(self, session_id: str) -> list[str]:
        """Return the session-data keys of ``session_id``, sorted."""
        self._check_open()
        session = self._sessions.get(session_id)
        return sorted(session.data) if session is not None else []

    async def list_sessions(self) -> list[str]:
        """Return every session id a write has named, sorted."""
        self._check_open()
        return sorted(self._sessions)

    async def delete_session(self, session_id: str) -> bool:
        """Delete everything stored for ``session_id``; return whether it was stored."""
        self._check_open()
        return self._sessions.pop(session_id, None) is not None

    async def check_session(self, session_id: str, timeout: float | None = None) -> None:
        """Raise :class:`StoreError` for an id no store keeps, or a closed store."""
        self._check_open()
        check_session_id(session_id)
        check_timeout(timeout, "check_session timeout")

    async def acquire_lease(self, session_id: str, owner: str, seconds: float) -> bool:
        """Take or renew the lease of ``session_id`` for ``owner``; False if another holds it."""
        self._check_open()
        seconds = check_lease(session_id, owner, seconds)
        now = time.monotonic()
        held = self._leases.get(session_id)
        if held is not None and held[0] != owner and held[1] > now:
            return False
        self._leases[session_id] = (owner, now + seconds)
        return True

    async def release_lease(self, session_id: str, owner: str) -> bool:
        """Give back ``owner``'s lease of ``session_id``; return whether ``owner`` held it."""
        self._check_open()
        check_lease(session_id, owner)
        held = self._leases.get(session_id)
        if held is None or held[0] != owner:
            return False
        del self._leases[session_id]
        return held[1] > time.monotonic()
