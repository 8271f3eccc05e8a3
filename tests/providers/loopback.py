"""A scripted HTTP server on 127.0.0.1 that answers provider requests over a real socket.

Each test queues the replies the server gives, in order: JSON bodies, raw
bytes (malformed JSON), server-sent events sent in small chunks with chunked
transfer encoding, a delay before answering, a connection dropped in the
middle of a stream. Every request is recorded (method, path, headers, body)
so tests can assert the wire format. A request with no reply queued gets
HTTP 418 and a message saying so.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SseItem = Mapping[str, Any] | tuple[str, Mapping[str, Any]] | str
"""One event: a dict (``data:`` only), ``(name, dict)`` (``event:`` + ``data:``) or raw text."""

DONE = "data: [DONE]\n\n"
"""OpenAI's end-of-stream event."""


def encode_sse(events: Iterable[SseItem]) -> bytes:
    """The ``text/event-stream`` body for ``events``."""
    parts = []
    for item in events:
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, tuple):
            name, data = item
            parts.append(f"event: {name}\ndata: {json.dumps(data)}\n\n")
        else:
            parts.append(f"data: {json.dumps(item)}\n\n")
    return "".join(parts).encode("utf-8")


@dataclass
class RecordedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.body)


@dataclass
class Reply:
    """One scripted answer.

    With ``chunks`` the body is sent with chunked transfer encoding, one
    chunk at a time with ``chunk_delay`` seconds between them; with
    ``drop_after`` set, the connection is closed after that many chunks
    without finishing the body. ``delay`` seconds pass before anything is
    sent. With ``reset`` the connection is reset (TCP RST) instead of
    answered.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_type: str = "application/json"
    chunks: list[bytes] | None = None
    chunk_delay: float = 0.0
    drop_after: int | None = None
    delay: float = 0.0
    reset: bool = False


class LlmServer:
    """The scripted server. Use it through the ``llm_server`` fixture."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        """Every request received, in order."""
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``: the base URL for AnthropicProvider."""
        return f"http://127.0.0.1:{self._httpd.server_port}"

    @property
    def openai_url(self) -> str:
        """``<url>/v1``: the base URL for OpenAIProvider."""
        return self.url + "/v1"

    @property
    def pending(self) -> int:
        """How many queued replies have not been sent."""
        with self._lock:
            return len(self._replies)

    def start(self) -> None:
        """Start serving in a background thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, cutting short any delayed reply."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def reply(self, reply: Reply) -> None:
        """Queue ``reply`` for the next request."""
        with self._lock:
            self._replies.append(reply)

    def reply_json(
        self,
        body: Any,
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Queue a JSON reply."""
        self.reply(
            Reply(status, dict(headers or {}), json.dumps(body).encode("utf-8"), delay=delay)
        )

    def reply_raw(
        self,
        body: bytes | str,
        *,
        status: int = 200,
        content_type: str = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Queue a reply with exactly ``body`` (for malformed JSON and the like)."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.reply(Reply(status, dict(headers or {}), data, content_type=content_type))

    def reply_sse(
        self,
        events: Iterable[SseItem],
        *,
        chunk_size: int = 7,
        chunk_delay: float = 0.0002,
        drop_after_bytes: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Queue an event stream sent in chunks of ``chunk_size`` bytes.

        With ``drop_after_bytes``, only that many bytes of the stream are
        sent before the connection is closed mid-body.
        """
        data = encode_sse(events)
        drop_after = None
        if drop_after_bytes is not None:
            data = data[:drop_after_bytes]
        chunks = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
        if drop_after_bytes is not None:
            drop_after = len(chunks)
        self.reply(
            Reply(
                200,
                dict(headers or {}),
                content_type="text/event-stream",
                chunks=chunks,
                chunk_delay=chunk_delay,
                drop_after=drop_after,
            )
        )

    def reply_drip(
        self,
        body: bytes,
        *,
        every: float,
        content_type: str = "text/event-stream",
        chunk_size: int = 1,
    ) -> None:
        """Queue a reply whose body comes ``chunk_size`` bytes at a time, ``every`` seconds."""
        chunks = [body[i : i + chunk_size] for i in range(0, len(body), chunk_size)]
        self.reply(Reply(200, content_type=content_type, chunks=chunks, chunk_delay=every))

    def reply_reset(self) -> None:
        """Queue a connection reset: the request is read, then the socket is reset."""
        self.reply(Reply(reset=True))

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._replies:
                return self._replies.popleft()
        message = f"llm_server: no scripted reply left for {request.method} {request.path}"
        body = json.dumps({"error": {"message": message, "type": "test_error"}})
        return Reply(418, body=body.encode("utf-8"))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: LlmServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connections the client drops on purpose (timeouts, cancelled streams) are expected."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10  # Idle keep-alive connections end after this many seconds.
    server: _Server

    def do_POST(self) -> None:
        self._answer()

    def do_GET(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        owner = self.server.owner
        request = RecordedRequest(
            self.command,
            self.path,
            {key.lower(): value for key, value in self.headers.items()},
            body,
        )
        reply = owner._next_reply(request)
        try:
            self._send(reply, owner._stopping)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send(self, reply: Reply, stopping: threading.Event) -> None:
        if reply.delay and stopping.wait(reply.delay):
            self.close_connection = True
            return
        if reply.reset:
            self.close_connection = True
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return
        self.send_response(reply.status)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.send_header("Content-Type", reply.content_type)
        if reply.chunks is None:
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.flush()
        for number, chunk in enumerate(reply.chunks):
            if reply.drop_after is not None and number >= reply.drop_after:
                break
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
            if reply.chunk_delay and stopping.wait(reply.chunk_delay):
                self.close_connection = True
                return
        if reply.drop_after is not None:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
