"""What the call hooks see: one model call, one tool call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from agentcore.llm import LlmProvider, LlmRequest, LlmResponse
from agentcore.messages import Message, ToolUseBlock
from agentcore.usage import Usage


@frozen
class ModelCallInfo:
    """One finished call to the model, handed to ``after_model_call``.

    ``request`` is what was sent (its ``purpose`` tells a turn's call,
    ``"turn"``, from a plugin's, under the plugin's own purpose). Exactly one of
    ``response`` and ``error`` is set: the reply, or the exception that ended
    the call (an :class:`~agentcore.errors.LlmError`, ``CancelledError`` when
    the turn was cancelled, ``GeneratorExit`` when a stream was closed before
    its reply was complete). ``started_at`` is the wall-clock start in seconds
    since the epoch (:func:`time.time`), ``duration`` the seconds the call
    took, measured on a monotonic clock. ``streamed`` is True for a streamed
    call. ``provider`` is the provider that served it.
    """

    request: LlmRequest
    provider: LlmProvider
    response: LlmResponse | None
    error: BaseException | None
    started_at: float
    duration: float
    streamed: bool = False

    @property
    def purpose(self) -> str:
        """Why the call was made: ``"turn"``, or the purpose a plugin gave its call."""
        return self.request.purpose

    @property
    def usage(self) -> Usage | None:
        """The tokens the call used, when the provider reported them."""
        return self.response.usage if self.response is not None else None

    @property
    def model(self) -> str | None:
        """The model asked for: the request's, else the provider's default, if it has one."""
        if self.request.model is not None:
            return self.request.model
        default = getattr(self.provider, "model", None)
        return default if isinstance(default, str) else None


@frozen
class ToolCallInfo:
    """One tool call, handed to ``before_tool_call`` and ``after_tool_call``.

    ``call`` is the model's tool call (id, name, arguments). ``started_at`` is
    the wall-clock start in seconds since the epoch. In ``before_tool_call``
    the other fields are None. In ``after_tool_call``, ``result`` is the tool
    result message the model gets (``result.is_error`` when the tool is
    unknown, the arguments do not fit, the tool raised or timed out),
    ``error`` the exception behind a failure (what the tool raised, a
    ``TimeoutError`` for a timeout, ``CancelledError`` when the turn was
    cancelled, in which case ``result`` is None) and ``duration`` the seconds
    the call took on a monotonic clock.
    """

    call: ToolUseBlock
    started_at: float
    result: Message | None = None
    error: BaseException | None = None
    duration: float | None = None

    @property
    def name(self) -> str:
        """The tool's name."""
        return self.call.name

    @property
    def arguments(self) -> Mapping[str, Any]:
        """The arguments the model gave."""
        return self.call.arguments

    @property
    def call_id(self) -> str:
        """The id that pairs the call with its result."""
        return self.call.id
