"""What an agent is: a name, a system prompt and a model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from attrs import field, frozen

from agentcore.errors import ConfigError
from agentcore.llm import check_temperature, stop_tuple
from agentcore.output import OutputSpec, check_tool_choice
from agentcore.tokens import TokenCounter


def _name(instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"Agent.name must be a non-empty str, got {value!r}")


def _model(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError(f"Agent.model must be a non-empty str or None, got {value!r}")


def _max_tokens(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ConfigError(f"Agent.max_tokens must be an int >= 1 or None, got {value!r}")


def _temperature(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    try:
        check_temperature("Agent.temperature", value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _stop(value: Any) -> tuple[str, ...]:
    try:
        return stop_tuple(value)
    except ValueError as exc:
        raise ConfigError(f"Agent.stop: {exc}") from None


def _counter(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, TokenCounter):
        raise ConfigError(
            "Agent.token_counter must be a TokenCounter (for example "
            f"TokenCounter(model, count_text=my_tokenizer_len)) or None, got {value!r}"
        )


def _output(value: Any) -> OutputSpec[Any] | None:
    return None if value is None else OutputSpec.of(value)


def _tool_choice(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    check_tool_choice(value, "Agent.tool_choice")


@frozen
class Agent:
    """An agent description.

    ``system_prompt`` opens every request; ``model`` overrides the provider's
    default model for this agent's turns. ``max_tokens`` caps each reply,
    ``temperature`` (0 to 2) and ``stop`` (a str or up to four str) are sent
    with every turn request when set. The context budget reserves
    ``max_tokens`` for the reply (see :mod:`agentcore.budget`).
    ``token_counter`` counts this agent's requests in budget decisions
    (default: :func:`agentcore.tokens.get_token_counter` for the model);
    give one built on your model's own tokenizer for exact counts.
    ``output`` (a class, a JSON schema dict or an
    :class:`~agentcore.output.OutputSpec`) makes every turn's final reply
    JSON of that schema (parse it with ``agent.output.parse(reply)``);
    ``tool_choice`` (``"auto"``, ``"none"``, ``"required"`` or a tool's
    name) goes on each turn's first model call (see
    :class:`~agentcore.cycle.LlmCycle`). Both default to the bundle's
    (:meth:`~agentcore.AgentBuilder.output`,
    :meth:`~agentcore.AgentBuilder.tool_choice`).
    Invalid values raise :class:`~agentcore.errors.ConfigError`.
    """

    name: str = field(validator=_name)
    system_prompt: str = field(default="", validator=attrs.validators.instance_of(str))
    model: str | None = field(default=None, validator=_model)
    max_tokens: int | None = field(default=None, kw_only=True, validator=_max_tokens)
    temperature: float | None = field(default=None, kw_only=True, validator=_temperature)
    stop: Sequence[str] = field(default=(), kw_only=True, converter=_stop)
    token_counter: TokenCounter | None = field(
        default=None, kw_only=True, eq=False, validator=_counter
    )
    output: OutputSpec[Any] | None = field(default=None, kw_only=True, converter=_output)
    tool_choice: str | None = field(default=None, kw_only=True, validator=_tool_choice)
