"""What an agent is: a name, a system prompt and a model."""

from __future__ import annotations

import attrs
from attrs import field, frozen

from agentcore.errors import ConfigError


def _name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"Agent.name must be a non-empty str, got {value!r}")


@frozen
class Agent:
    """An agent description.

    ``system_prompt`` opens every request; ``model`` overrides the provider's
    default model for this agent's turns.
    """

    name: str = field(validator=_name)
    system_prompt: str = field(default="", validator=attrs.validators.instance_of(str))
    model: str | None = None
