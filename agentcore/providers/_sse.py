"""An incremental parser for server-sent events (the ``text/event-stream`` format).

Feed it the bytes of a response body as they arrive; it returns an
:class:`SseEvent` each time a blank line ends an event. It follows the WHATWG
HTML specification: lines end with CR, LF or CRLF (and nothing else, unlike
``str.splitlines``, so a U+2028 inside JSON text does not split a line),
``event:`` names the event, ``data:`` lines are joined with newlines, a line
starting with ``:`` is a comment, one space after the colon is dropped,
unknown fields are ignored, and an event the stream ends before is dropped.
"""

from __future__ import annotations

from attrs import frozen

_BOM = "\ufeff".encode()


@frozen
class SseEvent:
    """One dispatched event: its name (``"message"`` when unnamed) and its data."""

    event: str
    data: str


class SseParser:
    """Turns the bytes of an event stream into :class:`SseEvent` objects."""

    def __init__(self) -> None:
        self._buffer = b""
        self._started = False
        self._event = ""
        self._data: list[str] = []

    @property
    def pending(self) -> bool:
        """Whether bytes or an event have started that nothing has ended yet."""
        return bool(self._buffer) or bool(self._data) or bool(self._event)

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Take the next bytes of the body; return the events they complete."""
        data = self._buffer + chunk
        if not self._started and data:
            if len(data) < len(_BOM) and _BOM.startswith(data):
                self._buffer = data
                return []
            self._started = True
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
        events: list[SseEvent] = []
        start = 0
        while True:
            cr = data.find(b"\r", start)
            lf = data.find(b"\n", start)
            if cr == -1 and lf == -1:
                break
            if cr != -1 and (lf == -1 or cr < lf):
                if cr + 1 == len(data):
                    break  # A CR at the end may be the first half of a CRLF.
                end, start_next = cr, cr + 2 if data[cr + 1 : cr + 2] == b"\n" else cr + 1
            else:
                end, start_next = lf, lf + 1
            event = self.feed_line(data[start:end].decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
            start = start_next
        self._buffer = data[start:]
        return events

    def close(self) -> list[SseEvent]:
        """The body has ended: return the event a final CR completes, if any."""
        buffer, self._buffer = self._buffer, b""
        if buffer.endswith(b"\r"):
            event = self.feed_line(buffer[:-1].decode("utf-8", errors="replace"))
            return [event] if event is not None else []
        return []

    def feed_line(self, line: str) -> SseEvent | None:
        """Take one line (without its line ending); return the event it completes, if any."""
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None

    def _dispatch(self) -> SseEvent | None:
        if not self._data:
            # The specification drops an event without data, name and all.
            self._event = ""
            return None
        event = SseEvent(event=self._event or "message", data="\n".join(self._data))
        self._event = ""
        self._data = []
        return event
