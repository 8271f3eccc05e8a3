"""Pinning and unpinning a slot's messages: one conditional slot-config write each."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from agentcore.errors import ConfigError, ConflictError
from agentcore.hook_calls import CoreHooks
from agentcore.pins import pin_group, resolve_index
from agentcore.slots import ContextSlot
from agentcore.stores.base import MemoryStore

if TYPE_CHECKING:
    from agentcore.session_handle import SessionHandle


async def change_pins(
    session: SessionHandle, index: int, slot_id: str | None, *, add: bool
) -> tuple[int, ...]:
    """Pin (``add``) or unpin raw message ``index`` of a slot with its tool group.

    Returns the slot's pinned indices. A pin is checked by the
    ``check_slot_config`` hook first; a write that conflicts with a plugin's config write
    or a mode change is computed again from the reloaded slot (3 attempts).
    """
    for _ in range(3):
        slot = await session.get_slot(slot_id)
        focused = slot.config.focused
        if focused is None:
            raise ConfigError(
                f"slot {slot.id!r} is in Full mode, where every message is sent: "
                "pins apply to a Focused slot"
            )
        resolved = resolve_index(slot.messages, index)
        await load_group(session.bundle.store, slot, resolved)
        group = set(pin_group(slot.messages, resolved))
        pins = set(focused.pinned) | group if add else set(focused.pinned) - group
        config = attrs.evolve(slot.config, mode=attrs.evolve(focused, pinned=pins))
        if add:
            await CoreHooks(session.bundle.plugin_manager).check_slot_config(
                session=session, slot=slot, config=config
            )
        try:
            await session.write_slot_config(
                slot.id, config, expected_version=slot.version, usage=None
            )
        except ConflictError:
            continue  # another config write or mode change landed meanwhile: recompute from it
        assert config.focused is not None
        return config.focused.pinned
    raise ConflictError(f"slot {slot_id!r}: the pin kept conflicting with other writes")


async def load_group(store: MemoryStore, slot: ContextSlot, index: int) -> None:
    """Load raw message ``index`` of ``slot`` and, back to its tool call, what precedes it."""
    await slot.ensure_loaded(store, index)
    while slot.offset > 0 and slot.messages[slot.offset].role == "tool":
        await slot.ensure_loaded(store, slot.offset - 1)
