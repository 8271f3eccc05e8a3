"""A model cycle's progress: what it has added and spent so far, and the result it ends with.

Shared by the plain loop of :class:`~agentcore.cycle.LlmCycle` and the streamed
one of :class:`~agentcore.cycle.CycleStream`: :class:`Progress` grows as they
run, :class:`CycleResult` is what they return, and :func:`refused` answers the
tool calls past the round limit.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from attrs import define, field, frozen

from agentcore.errors import ContextWindowExceededError
from agentcore.llm import LlmResponse
from agentcore.messages import Message, ToolUseBlock
from agentcore.usage import NO_USAGE, Usage

Prepare = Callable[[Sequence[Message]], Awaitable[Sequence[Message]]]
"""The type of :data:`agentcore.cycle.PrepareCall`, documented there."""

Overflow = Callable[[ContextWindowExceededError, Sequence[Message]], Awaitable[Sequence[Message]]]
"""The type of :data:`agentcore.cycle.OverflowCall`, documented there."""


@frozen
class CycleResult:
    """What one cycle produced.

    ``new_messages`` holds every assistant message and tool result message of
    the cycle, in order; ``response`` is the last provider reply; ``usage``
    sums every provider call (a call that reported no usage counts as zero);
    ``calls`` is the number of provider calls. ``round_limit_reached`` is
    True when the tool loop stopped at its round limit, in which case the
    last assistant message's tool calls were answered with error results
    and never run.
    """

    new_messages: tuple[Message, ...]
    response: LlmResponse
    usage: Usage = field(factory=Usage)
    calls: int = 1
    round_limit_reached: bool = False

    @property
    def final_message(self) -> Message:
        """The last assistant message: the message of :attr:`response`."""
        return self.response.message


def round_limit_text(limit: int) -> str:
    """Return the error text that answers a tool call refused by the round limit."""
    return f"tool round limit ({limit}) reached; the call was not run"


def refused(calls: Sequence[ToolUseBlock], limit: int) -> list[Message]:
    """The error results that answer ``calls``, refused by the round limit ``limit``."""
    text = round_limit_text(limit)
    return [Message.tool_result(call.id, text, is_error=True) for call in calls]


@define
class Progress:
    """The growing state of one cycle."""

    history: list[Message]
    new_messages: list[Message] = field(factory=list)
    usage: Usage = NO_USAGE
    calls: int = 0
    rounds: int = 0

    def add_response(self, response: LlmResponse) -> None:
        """Count a provider call and add its reply."""
        self.calls += 1
        if response.usage is not None:
            self.usage = self.usage + response.usage
        self.add(response.message)

    def add(self, message: Message) -> None:
        """Add ``message`` to the history and to the cycle's new messages."""
        self.history.append(message)
        self.new_messages.append(message)

    async def refresh(self, prepare: Prepare | None) -> Sequence[Message]:
        """The messages of the next request, as ``prepare`` makes them when given.

        A tuple from ``prepare`` is used as it is (the request keeps it: no copy);
        any other sequence is copied, since its maker may change it later.
        """
        if prepare is not None:
            messages = await prepare(tuple(self.new_messages))
            return messages if type(messages) is tuple else tuple(messages)
        return self.history

    def result(self, response: LlmResponse, *, round_limit_reached: bool = False) -> CycleResult:
        """The cycle's result, ``response`` being its last provider reply."""
        return CycleResult(
            tuple(self.new_messages),
            response,
            self.usage,
            self.calls,
            round_limit_reached,
        )
