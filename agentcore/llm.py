"""What an LLM provider receives and returns, and the protocol it implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import attrs
from attrs import field, frozen

from agentcore.errors import ConfigError
from agentcore.messages import Message, ToolUseBlock
from agentcore.output import TOOL_CHOICE, OutputSpec
from agentcore.usage import Usage
from agentcore.validators import BOOL, POSITIVE_INT, STR, Rule, is_number


@frozen
class ToolSpec:
    """A tool as the model sees it: a name, a description and a JSON schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]


MAX_STOP_SEQUENCES = 4
"""The most stop sequences a request may carry (OpenAI's limit)."""


TEMPERATURE = Rule(
    "a number in [0, 2]", lambda value: is_number(value) and 0 <= value <= 2
).or_none()
"""The sampling temperature a request, a cycle or an agent may set: 0 to 2, or None."""

MAX_TOKENS = POSITIVE_INT.or_none()
"""The reply cap a request, a cycle or an agent may set: an int >= 1, or None."""

CACHE_KEY = STR.where(bool, "a non-empty str").or_none()
"""A request's ``cache_key``: a non-empty str, or None."""


def check_temperature(what: str, value: Any) -> None:
    """Raise :class:`~agentcore.errors.ConfigError` unless ``value`` is None or in [0, 2]."""
    TEMPERATURE.check(what, value)


def stop_tuple(value: Any) -> tuple[str, ...]:
    """Stop sequences as a tuple: None or ``()`` for none, one str, or an iterable of str.

    Raises :class:`~agentcore.errors.ConfigError` (a ValueError) for an empty
    sequence string, a non-str item, or more than :data:`MAX_STOP_SEQUENCES`
    sequences.
    """
    if value is None:
        return ()
    items = (value,) if isinstance(value, str) else value
    try:
        stops = tuple(items)
    except TypeError:
        raise ConfigError(f"stop must be a str or a list of str, got {value!r}") from None
    for item in stops:
        if not isinstance(item, str) or not item:
            raise ConfigError(f"stop sequences must be non-empty str, got {item!r}")
    if len(stops) > MAX_STOP_SEQUENCES:
        raise ConfigError(
            f"stop takes at most {MAX_STOP_SEQUENCES} sequences, got {len(stops)}: {stops!r}"
        )
    return stops


def _output(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, OutputSpec):
        raise TypeError(f"output must be an OutputSpec or None (OutputSpec.of(...)), got {value!r}")


def _message_tuple(messages: Iterable[Message]) -> tuple[Message, ...]:
    return tuple(messages)


def _tool_tuple(tools: Iterable[ToolSpec]) -> tuple[ToolSpec, ...]:
    return tuple(tools)


def _body_fields(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise ConfigError(
            f"extra_body must be a mapping of body field names to JSON values, got {value!r}"
        )


@frozen
class LlmRequest:
    """One call to a model.

    ``purpose`` tells a turn call (``"turn"``) from the calls a plugin makes
    under its own purpose (``"index"``...); ``model`` overrides the
    provider's default model.
    ``max_tokens`` caps the reply, ``temperature`` (0 to 2) sets the sampling
    temperature and ``stop`` holds up to four stop sequences; each is sent
    only when set. ``cache_key`` names the conversation the request belongs
    to (a session id, say), so a provider can route its requests to the
    same prompt cache (OpenAI's ``prompt_cache_key``); None when unknown.
    ``tool_choice`` (``"auto"``, ``"none"``, ``"required"`` or a tool's name;
    None: the provider's default, which is ``"auto"``) says whether the model
    may, must or must not call ``tools``; it is sent only with tools.
    ``output`` asks for a reply that is JSON of its schema (see
    :mod:`agentcore.output`). ``extra_body`` holds JSON fields an HTTP
    provider adds to this request's body, over its own fields and its
    ``extra_body`` option (a field of the API that agentcore does not model,
    for one request); a provider without a JSON body ignores them.
    ``cache_newest`` False says that no later request will start with this
    one's newest turn (a one-off request a plugin makes, or a turn whose
    newest message carries a part that later turns leave out), so a provider
    that writes prompt-cache entries where it is told to (Anthropic's
    breakpoints, written at more than the input price) writes none at its
    end; what the request shares with earlier ones is read from the cache
    all the same. Providers that cache by themselves (OpenAI) ignore it.
    """

    messages: Sequence[Message] = field(converter=_message_tuple)
    tools: Sequence[ToolSpec] = field(default=(), converter=_tool_tuple)
    model: str | None = None
    max_tokens: int | None = field(default=None, validator=MAX_TOKENS)
    purpose: str = "turn"
    temperature: float | None = field(default=None, validator=TEMPERATURE)
    stop: Sequence[str] = field(default=(), converter=stop_tuple)
    cache_key: str | None = field(default=None, validator=CACHE_KEY)
    tool_choice: str | None = field(default=None, kw_only=True, validator=TOOL_CHOICE)
    output: OutputSpec[Any] | None = field(default=None, kw_only=True, validator=_output)
    extra_body: Mapping[str, Any] = field(factory=dict, kw_only=True, validator=_body_fields)
    cache_newest: bool = field(default=True, kw_only=True, validator=BOOL)


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


_PROVIDER_TYPES: set[type] = set()
_PROVIDER_TYPES_KEPT = 256


def is_llm_provider(value: object) -> bool:
    """``isinstance(value, LlmProvider)``, checked once per class.

    A class that defines ``complete`` and ``stream`` itself passes for every
    instance, so its instances skip the runtime-protocol check (which reads
    every attribute of the protocol) after the first one; the last 256 such
    classes are remembered. An object whose methods are set on the instance
    is checked every time.
    """
    kind = type(value)
    if kind in _PROVIDER_TYPES:
        return True
    if not isinstance(value, LlmProvider):
        return False
    if callable(getattr(kind, "complete", None)) and callable(getattr(kind, "stream", None)):
        if len(_PROVIDER_TYPES) >= _PROVIDER_TYPES_KEPT:
            _PROVIDER_TYPES.clear()
        _PROVIDER_TYPES.add(kind)
    return True
