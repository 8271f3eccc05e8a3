"""What the events of one streamed reply become: the decoder protocol, and feeding it events.

Each provider has a :class:`StreamDecoder` that turns the server-sent events of
one streamed response into stream events. :func:`decode_all` feeds it events up
to its terminal one, and :func:`not_sse` tells a body that is no event stream at
all (an error page, a JSON object) from the start of one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol, TypeVar

from agentcore.errors import MalformedResponseError
from agentcore.providers._sse import SseEvent

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class StreamDecoder(Protocol[T_co]):
    """Turns the events of one streamed response into stream events."""

    @property
    def done(self) -> bool:
        """Whether the terminal event has arrived."""
        ...

    @property
    def progress(self) -> int:
        """How many events so far carried content (what resets the idle timeout).

        Content is text, a piece of a tool call, a stop reason, usage or the
        end of the reply; keep-alives (pings) and empty deltas are not.
        """
        ...

    def feed(self, event: SseEvent) -> Iterable[T_co]:
        """Take one server-sent event and return what it completes."""
        ...

    def end_of_stream(self) -> None:
        """The body ended without the terminal event: raise the right LlmError."""
        ...


_SSE_STARTS = (b"data:", b"event:", b"id:", b"retry:", b":")


def not_sse(head: bytes) -> bool:
    """Whether the first bytes of a body are something, and not the start of an event stream."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return bool(text) and not text.startswith(_SSE_STARTS)


def decode_all(decoder: StreamDecoder[T], events: Iterable[SseEvent]) -> Iterator[T]:
    """What ``decoder`` makes of ``events``, up to and including its terminal event."""
    for event in events:
        try:
            items = decoder.feed(event)
        except ValueError as exc:  # A field the core's classes reject, such as an empty id.
            problem = str(exc)
        else:
            yield from items
            if decoder.done:
                return
            continue
        raise MalformedResponseError(f"a streamed {event.event} event is invalid: {problem}")
