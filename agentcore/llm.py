"""What an LLM provider receives and returns, and the protocol it implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import attrs
from attrs import field, frozen

from agentcore.messages import Message, ToolUseBlock
from agentcore.usage import Usage


@frozen
class ToolSpec:
    """A tool as the model sees it: a name, a description and a JSON schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]


def _positive_or_none(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (not isinstance(value, int) or value <= 0):
        raise ValueError(f"{attribute.name} must be a positive int or None, got {value!r}")


def _message_tuple(messages: Iterable[Message]) -> tuple[Message, ...]:
    return tuple(messages)


def _tool_tuple(tools: Iterable[ToolSpec]) -> tuple[ToolSpec, ...]:
    return tuple(tools)


@frozen
class LlmRequest:
    """One call to a model.

    ``purpose`` tells a turn call (``"turn"``) from other calls a plugin makes,
    such as ``"summary"``; ``model`` overrides the provider's default model.
    """

    messages: Sequence[Message] = field(converter=_message_tuple)
    tools: Sequence[ToolSpec] = field(default=(), converter=_tool_tuple)
    model: str | None = None
    max_tokens: int | None = field(default=None, validator=_positive_or_none)
    purpose: str = "turn"


StopReason = Literal["end_turn", "tool_use", "max_tokens", "other"]


@frozen
class LlmResponse:
    """A model's complete reply and the tokens it cost.

    ``usage`` is None when the provider reported none.
    """

    message: Message
    usage: Usage | None = None
    stop_reason: StopReason = "end_turn"
    model: str | None = None

    @property
    def text(self) -> str:
        """The reply's text."""
        return self.message.text


@frozen
class TextDelta:
    """A piece of the reply's text, as it streams in."""

    text: str


@frozen
class ToolCallDelta:
    """A tool call of the reply, once the stream has assembled it whole."""

    call: ToolUseBlock

    @property
    def text(self) -> str:
        """Tool calls carry no text: always ``""``."""
        return ""


@frozen
class ResponseComplete:
    """The last event of a stream: the complete reply."""

    response: LlmResponse

    @property
    def text(self) -> str:
        """The final event carries no new text: always ``""``."""
        return ""


StreamEvent = TextDelta | ToolCallDelta | ResponseComplete
"""An event of a streamed reply; every kind has a ``.text`` delta."""


@runtime_checkable
class LlmProvider(Protocol):
    """A model behind an API. Implement both methods.

    ``stream`` must end with exactly one :class:`ResponseComplete`. Failures
    raise :class:`agentcore.errors.LlmError` subclasses.
    """

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """Send ``request`` and return the whole reply."""
        ...

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """Send ``request`` and yield the reply as it arrives."""
        ...
