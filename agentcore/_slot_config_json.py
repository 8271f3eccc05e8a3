"""A slot's config as the JSON stores keep: :func:`config_to_json` and :func:`config_from_json`."""

from __future__ import annotations

from collections.abc import Mapping

from agentcore.errors import CorruptDataError
from agentcore.serialization import converter
from agentcore.slots import FULL, FocusedConfig, SlotConfig, SummaryRole
from agentcore.stores.base import JsonValue

STORED_ROLE_WITHOUT_FIELD: SummaryRole = "system"
"""The ``summary_role`` of a stored Focused config that lacks the field.

Configs stored before the default became ``"user"`` left the field out when
it held the default, ``"system"``; every config stored since carries it.
"""


def config_to_json(config: SlotConfig) -> dict[str, JsonValue]:
    """``config`` as stored JSON (a Focused config always with its ``summary_role``)."""
    data: dict[str, JsonValue] = {"mode": "full", "state": dict(config.state)}
    if config.focused is not None:
        data["mode"] = "focused"
        focused = converter.unstructure(config.focused, FocusedConfig)
        focused["summary_role"] = config.focused.summary_role
        data["focused"] = focused
    return data


def config_from_json(data: Mapping[str, JsonValue], *, where: str) -> SlotConfig:
    """The :class:`SlotConfig` stored as ``data``; errors name ``where``."""
    try:
        state = dict(data.get("state") or {})
        if data.get("mode") == "focused":
            focused = data["focused"]
            if isinstance(focused, Mapping) and "summary_role" not in focused:
                focused = {**focused, "summary_role": STORED_ROLE_WITHOUT_FIELD}
            return SlotConfig(converter.structure(focused, FocusedConfig), state)
        if data.get("mode") == "full":
            return SlotConfig(FULL, state)
    except Exception as exc:
        raise CorruptDataError(f"stored config of {where} is invalid: {exc}") from exc
    raise CorruptDataError(f"stored config of {where} has an unknown mode {data.get('mode')!r}")
