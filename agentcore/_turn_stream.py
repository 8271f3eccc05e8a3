"""How a turn's events reach its caller: a :class:`TurnStream`, or drained to the reply.

:meth:`agentcore._turns.TurnRunner.events` yields a turn's events, the last
one a :class:`FinalEvent` handed over once the turn is stored. A streamed
turn hands them to its consumer through :class:`TurnStream` (importable from
:mod:`agentcore` and :mod:`agentcore.session`); a plain turn runs them to the
end with :func:`drain`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

from attrs import frozen

from agentcore.cycle import CycleEvent
from agentcore.errors import SessionError
from agentcore.llm import ResponseComplete
from agentcore.messages import Message


@frozen
class FinalEvent:
    """The last event of a turn, handed over once the turn is stored."""

    event: ResponseComplete
    message: Message


class TurnStream:
    """The events of a streamed turn.

    Iterate with ``async for`` to get :class:`~agentcore.llm.TextDelta`,
    :class:`~agentcore.llm.ToolCallDelta`, tool-result and
    :class:`~agentcore.llm.ResponseComplete` events, each with a ``.text``
    delta. The turn is stored before the final ``ResponseComplete`` is
    handed over, so breaking out of the loop after it loses nothing. Or
    ``await stream.finalize()`` to consume the rest and get the final
    assistant message. :attr:`message` is set once the turn is stored.
    """

    def __init__(self, events: AsyncGenerator[CycleEvent | FinalEvent, None]) -> None:
        self._events = events
        self._done = False
        self.message: Message | None = None
        """The assistant's final message, once the turn has been stored."""

    def __aiter__(self) -> AsyncIterator[CycleEvent]:
        return self

    async def __anext__(self) -> CycleEvent:
        if self._done:
            await self._events.aclose()
            raise StopAsyncIteration
        try:
            item = await self._events.__anext__()
        except BaseException:
            self._done = True
            raise
        if isinstance(item, FinalEvent):
            self.message = item.message
            self._done = True
            return item.event
        return item

    async def finalize(self) -> Message:
        """Consume the remaining events, finalize the turn, return the final message."""
        async for _ in self:
            pass
        if self.message is None:
            raise SessionError("the stream was closed before its turn was finalized")
        return self.message

    async def aclose(self) -> None:
        """Abandon the stream: if the turn was not finalized, nothing is stored."""
        await self._events.aclose()


async def drain(events: AsyncGenerator[CycleEvent | FinalEvent, None]) -> Message:
    """Run a turn's events to the end and return its final message.

    The generator is run to its end (nothing follows its final event but its
    ``finally``), so it is finished, by an exception or not, when the loop is:
    no ``aclose()`` is owed.
    """
    message: Message | None = None
    async for item in events:
        if isinstance(item, FinalEvent):
            message = item.message
    if message is None:
        raise SessionError("the turn ended without a final message")
    return message
