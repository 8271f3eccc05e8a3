"""The store writes plugins make through a session: a slot config, or usage alone.

:func:`write_slot_config` and :func:`record_usage` are the methods of those
names of :class:`~agentcore.AgentSession` (the class binds them, and they are
documented there). Each checks its arguments, then stores the session state
(with the usage added to the cost) and the session data in one store write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from agentcore._store_sync import StoreSync
from agentcore.bundle import AgentBundle
from agentcore.errors import ConfigError
from agentcore.session_memory import check_json, check_key
from agentcore.slots import ContextSlot, SlotConfig
from agentcore.stores.base import JsonValue, StoreWrite
from agentcore.usage import Usage


class WritingSession(Protocol):
    """What the write methods use of their session (an :class:`~agentcore.AgentSession`)."""

    _sync: StoreSync

    @property
    def bundle(self) -> AgentBundle:
        """Provider, tools, store, plugins and config of the session."""
        ...

    async def load(self) -> None:
        """Load the session from the store."""
        ...

    async def get_slot(self, slot_id: str | None = None) -> ContextSlot:
        """The slot ``slot_id``, or the current slot."""
        ...

    def _check_writable(self, action: str) -> None: ...


async def write_slot_config(
    self: WritingSession,
    slot_id: str,
    config: SlotConfig,
    *,
    expected_version: int | None = None,
    data: Mapping[str, JsonValue] | None = None,
    usage: Usage | None = None,
    purpose: str = "plugin",
    retry_on_conflict: bool = False,
) -> None:
    """Replace a slot's config, store session data and count ``usage``, in one store write.

    This is how plugins apply a change computed from a slot (a new
    ``summary_override``): the write also stores the session state with
    ``usage`` added to the cost under ``purpose`` (default ``"plugin"``;
    name the plugin's own purpose), so that cost survives a resume.
    It is conditional on the slot's config version: ``expected_version``
    (default: the :attr:`ContextSlot.version` this object holds) must
    still be the stored one. When another write replaced the config since
    (another plugin's write, a mode change), the write is refused with
    :class:`~agentcore.errors.ConflictError`, nothing is stored, and the
    session has reloaded the slot, so the caller can compute the change
    again; with ``retry_on_conflict`` the new config is written over the
    newer one instead. Messages another writer appended meanwhile never
    make it fail. Once the write has committed, the object holds it,
    even if the caller was cancelled.
    """
    self._check_writable("write a slot config")
    if not isinstance(config, SlotConfig):
        raise ConfigError(f"config must be a SlotConfig, got {config!r}")
    if usage is not None and not isinstance(usage, Usage):
        raise ConfigError(f"usage must be a Usage or None, got {usage!r}")
    values = dict(data or {})
    for key, value in values.items():
        check_key(key)
        check_json(key, value)
    slot = await self.get_slot(slot_id)
    expected = slot.version if expected_version is None else expected_version
    await self._sync.write_config(
        slot,
        config,
        expected=expected,
        retry_on_conflict=retry_on_conflict,
        data=values,
        usage=usage,
        purpose=purpose,
    )
    await slot.ensure_loaded(self.bundle.store)


async def record_usage(
    self: WritingSession,
    usage: Usage | None,
    purpose: str,
    *,
    data: Mapping[str, JsonValue] | None = None,
) -> None:
    """Count ``usage`` under ``purpose`` and store session data, in one store write.

    For plugin work that changes no slot config, such as a model call
    whose result was dropped: the session state is stored with
    the new cost, so what the work cost survives a resume. Once the write
    has committed, the object holds it, even if the caller was cancelled.
    """
    self._check_writable("record usage")
    if usage is not None and not isinstance(usage, Usage):
        raise ConfigError(f"usage must be a Usage or None, got {usage!r}")
    if not isinstance(purpose, str) or not purpose:
        raise ConfigError(f"purpose must be a non-empty str, got {purpose!r}")
    values = dict(data or {})
    for key, value in values.items():
        check_key(key)
        check_json(key, value)
    await self.load()

    def write() -> StoreWrite:
        batch = self._sync.guarded_write()
        batch.state = self._sync.state(usage=usage, purpose=purpose)
        batch.data.update(values)
        return batch

    def stored() -> None:
        if usage is not None:
            self._sync.cost.add(usage, purpose)

    await self._sync.commit(write, stored)
