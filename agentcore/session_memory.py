"""Session-scoped key/value data, stored as JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping

from agentcore._cancel import complete_despite_cancel
from agentcore.errors import ConfigError
from agentcore.stores.base import JsonValue, MemoryStore, StoreWrite


def check_key(key: str) -> None:
    """Raise :class:`ConfigError` unless ``key`` is a non-empty string."""
    if not isinstance(key, str) or not key:
        raise ConfigError(f"a session-data key must be a non-empty str, got {key!r}")


def check_json(key: str, value: JsonValue) -> None:
    """Raise :class:`ConfigError` unless ``value`` can be stored as JSON."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"session data {key!r} is not JSON-serializable: {exc}") from exc


class SessionMemory:
    """JSON values kept per session in the store, under string keys.

    Each write is one store transaction. A caller cancelled while it runs
    gets ``CancelledError``; a write that had begun completes first, so the
    key holds either the new value or the old one (read it back to know).
    """

    def __init__(self, store: MemoryStore, session_id: str) -> None:
        self._store = store
        self._session_id = session_id

    @property
    def session_id(self) -> str:
        """The session the values belong to."""
        return self._session_id

    async def get(self, key: str, default: JsonValue = None) -> JsonValue:
        """The value under ``key``, or ``default`` when there is none."""
        check_key(key)
        value = await self._store.get_data(self._session_id, key)
        return default if value is None else value

    async def set(self, key: str, value: JsonValue) -> None:
        """Store ``value`` (anything JSON can hold) under ``key``."""
        check_key(key)
        check_json(key, value)
        await self._write(StoreWrite(self._session_id, data={key: value}))

    async def update(self, values: Mapping[str, JsonValue]) -> None:
        """Store several values in one write: all of them or none."""
        for key, value in values.items():
            check_key(key)
            check_json(key, value)
        await self._write(StoreWrite(self._session_id, data=dict(values)))

    async def delete(self, key: str) -> None:
        """Remove ``key`` (no error when it is absent)."""
        check_key(key)
        await self._write(StoreWrite(self._session_id, deleted_data={key}))

    async def _write(self, batch: StoreWrite) -> None:
        await complete_despite_cancel(self._store.write(batch))

    async def keys(self) -> list[str]:
        """Every key of the session, sorted."""
        return await self._store.data_keys(self._session_id)
