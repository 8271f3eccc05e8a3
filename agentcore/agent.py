"""What an agent is: a name, a system prompt and a model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attrs import field, frozen

from agentcore.llm import MAX_TOKENS, TEMPERATURE, stop_tuple
from agentcore.output import TOOL_CHOICE, OutputSpec, output_spec
from agentcore.tokens import TokenCounter
from agentcore.validators import NON_EMPTY_STR, STR, instance_of

_COUNTER = instance_of(
    TokenCounter, "a TokenCounter (for example TokenCounter(model, count_text=my_tokenizer_len))"
).or_none()


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

    name: str = field(validator=NON_EMPTY_STR)
    system_prompt: str = field(default="", validator=STR)
    model: str | None = field(default=None, validator=NON_EMPTY_STR.or_none())
    max_tokens: int | None = field(default=None, kw_only=True, validator=MAX_TOKENS)
    temperature: float | None = field(default=None, kw_only=True, validator=TEMPERATURE)
    stop: Sequence[str] = field(default=(), kw_only=True, converter=stop_tuple)
    token_counter: TokenCounter | None = field(
        default=None, kw_only=True, eq=False, validator=_COUNTER
    )
    output: OutputSpec[Any] | None = field(default=None, kw_only=True, converter=output_spec)
    tool_choice: str | None = field(default=None, kw_only=True, validator=TOOL_CHOICE)
