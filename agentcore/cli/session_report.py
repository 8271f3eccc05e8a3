"""What the ``sessions`` commands read from a store, as JSON-ready data."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agentcore._slot_config_json import config_from_json
from agentcore.cli.errors import CliError
from agentcore.cli.message_log import MESSAGE_LOG_KEY, read_log
from agentcore.cli.money import MODEL_KEY, dollars_for
from agentcore.serialization import message_to_dict
from agentcore.stores.base import MemoryStore
from agentcore.stores.search import SearchableStore
from agentcore.usage import Usage


def usage_dict(usage: Usage) -> dict[str, int]:
    """``usage`` as a dict of its token counts.

    Keys: ``input_tokens``, ``output_tokens``, ``cached_input_tokens``,
    ``cache_write_tokens`` and ``total_tokens``.
    """
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "total_tokens": usage.total_tokens,
    }


def priced_usage(usage: Usage, model: str | None) -> dict[str, Any]:
    """:func:`usage_dict` with ``dollars``: at the list price of ``model``, or None."""
    return {**usage_dict(usage), "dollars": dollars_for(usage, model)}


async def require_session(store: MemoryStore, session_id: str, where: str) -> None:
    """Raise :class:`CliError` unless ``store`` holds ``session_id``.

    :param where: The database, named in the message.
    """
    if session_id not in await store.list_sessions():
        raise CliError(
            f"no session {session_id!r} in {where}; 'agentcore sessions list' shows the stored ones"
        )


async def slot_reports(store: MemoryStore, session_id: str) -> list[dict[str, Any]]:
    """Every slot of ``session_id``, sorted by id: mode, message count, Focused fields."""
    configs = await store.load_slot_configs(session_id)
    slots = []
    for slot_id in sorted(configs):
        config = config_from_json(
            configs[slot_id], where=f"slot {slot_id!r} of session {session_id!r}"
        )
        focused = config.focused
        slots.append(
            {
                "id": slot_id,
                "mode": "full" if focused is None else "focused",
                "messages": await store.count_messages(session_id, slot_id),
                "summary_override": None if focused is None else focused.summary_override,
                "summary_covers": None if focused is None else focused.summary_covers,
                "max_recent_messages": None if focused is None else focused.max_recent_messages,
                "state": dict(config.state),
            }
        )
    return slots


async def session_report(
    store: MemoryStore, session_id: str, model: str | None = None
) -> dict[str, Any]:
    """Everything ``sessions show`` prints about ``session_id``.

    ``cost`` gives each purpose's usage with its ``dollars`` at the price of
    ``model``, else of the model ``agentcore chat`` recorded
    (:data:`~agentcore.cli.money.MODEL_KEY`); ``model`` is the one used.
    """
    state = await store.load_state(session_id)
    cost = dict(state.cost) if state is not None else {}
    total = sum(cost.values(), Usage())
    slots = await slot_reports(store, session_id)
    current = state.current_slot if state is not None else None
    for slot in slots:
        slot["current"] = slot["id"] == current
    data = {key: await store.get_data(session_id, key) for key in await store.data_keys(session_id)}
    if model is None:
        recorded = data.get(MODEL_KEY)
        model = recorded if isinstance(recorded, str) and recorded else None
    log = read_log(data.get(MESSAGE_LOG_KEY))
    for slot in slots:
        slot.update(_times(log.get(slot["id"], {})))
    return {
        "session": session_id,
        "turn_index": state.turn_index if state is not None else 0,
        "current_slot": current,
        "model": model,
        "cost": {
            **{purpose: priced_usage(usage, model) for purpose, usage in sorted(cost.items())},
            "total": priced_usage(total, model),
        },
        "slots": slots,
        "data": data,
    }


def _times(entries: dict[str, dict[str, str]]) -> dict[str, Any]:
    """When the slot's logged messages were stored, and with which models."""
    ordered = sorted(
        (item for item in entries.items() if item[0].isdigit()), key=lambda item: int(item[0])
    )
    times = [entry["at"] for _, entry in ordered if "at" in entry]
    models = sorted({entry["model"] for _, entry in ordered if "model" in entry})
    return {
        "first_message_at": times[0] if times else None,
        "last_message_at": times[-1] if times else None,
        "models": models,
        "message_log": [{"index": int(index), **entry} for index, entry in ordered],
    }


async def session_rows(store: MemoryStore) -> list[dict[str, Any]]:
    """One row per stored session: turns, slots, messages, what ``summary_covers`` covers."""
    rows = []
    for session_id in await store.list_sessions():
        state = await store.load_state(session_id)
        slots = await slot_reports(store, session_id)
        covers = [slot["summary_covers"] for slot in slots if slot["summary_override"] is not None]
        rows.append(
            {
                "session": session_id,
                "turns": state.turn_index if state is not None else 0,
                "slots": len(slots),
                "messages": sum(slot["messages"] for slot in slots),
                "covered": max(covers) if covers else 0,
            }
        )
    return rows


async def export_records(
    store: MemoryStore, session_id: str, slot_id: str | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The raw history of ``session_id``: one record per message, with ``slot`` and ``index``.

    Slots come in id order, messages oldest first; ``slot_id`` picks one slot.

    :raises CliError: ``slot_id`` names no slot of the session.
    """
    slot_ids = sorted(await store.load_slot_configs(session_id))
    if slot_id is not None:
        if slot_id not in slot_ids:
            known = ", ".join(slot_ids) or "none"
            raise CliError(f"session {session_id!r} has no slot {slot_id!r} (slots: {known})")
        slot_ids = [slot_id]
    for slot in slot_ids:
        for index, message in enumerate(await store.load_messages(session_id, slot)):
            yield {"slot": slot, "index": index, **message_to_dict(message)}


async def found_messages(
    store: MemoryStore, session_id: str, query: str, limit: int
) -> list[dict[str, Any]]:
    """The stored messages of ``session_id`` that best match ``query``, as report rows.

    Each row: ``slot``, ``index``, ``turn`` (None for a message no turn wrote), ``role``,
    ``text``, ``score``. Raises :class:`~agentcore.cli.errors.CliError` for a store that
    cannot search, :class:`~agentcore.errors.StoreError` for a bad ``limit``.
    """
    if not isinstance(store, SearchableStore):
        raise CliError(f"{type(store).__name__} cannot search its messages")
    hits = await store.search_messages(session_id, query, limit=limit)
    return [
        {
            "slot": hit.slot_id,
            "index": hit.index,
            "turn": hit.turn_index,
            "role": hit.message.role,
            "text": hit.message.text,
            "score": round(hit.score, 4),
        }
        for hit in hits
    ]
