"""A loopback server that speaks OpenAI's Chat Completions and Responses APIs, for chat tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import fake_responses

POLL_SECONDS = 0.05
"""How often the serving thread checks for shutdown: the end of a test waits at most this."""

SUMMARY_REPLY = "The user greeted the assistant and asked several numbered questions."


SUMMARY_MARKER = "```text\n"
"""The summary prompt fences the conversation as data; a turn's messages never hold this."""

PREFIX_SUMMARY_MARKERS = (
    "Write a concise summary of the conversation above",
    "The material to summarize is the conversation above this message",
)
"""A summary request that reuses the conversation's prefix ends with an instruction saying so:
the default prompt's, or a prompt of the user's with its ``{messages}`` pointing above."""


def is_summary_text(text: str) -> bool:
    """Whether ``text``, a request's last message, asks for a summary (either shape)."""
    return SUMMARY_MARKER in text or any(marker in text for marker in PREFIX_SUMMARY_MARKERS)


def reply_for(body: dict[str, Any]) -> str:
    """A summary request gets :data:`SUMMARY_REPLY`; a turn gets its last message echoed."""
    if "input" in body:  # A Responses API request.
        text = fake_responses.last_user_text(body)
    else:
        last = body["messages"][-1]["content"]
        text = last if isinstance(last, str) else "".join(part.get("text", "") for part in last)
    if is_summary_text(text):
        return SUMMARY_REPLY
    return f"You said: {text}. " + "Here is a longer answer to fill the context. " * 4


def usage_for(body: dict[str, Any], reply: str) -> dict[str, int]:
    prompt = sum(len(json.dumps(message)) for message in body["messages"]) // 4
    completion = len(reply) // 4
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAIServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = json.loads(self.rfile.read(length))
        if self.path.endswith("/responses"):
            self._responses(body)
            return
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)  # Also the window look-ups of an unknown model.
            return
        self.server.requests.append(body)
        if self.server.fail_status is not None:
            self._error(self.server.fail_status, "the fake server was told to fail", "fake_error")
            return
        reply = reply_for(body)
        usage: dict[str, int] | None = usage_for(body, reply)
        window = self.server.window_tokens
        assert usage is not None
        if window is not None and usage["prompt_tokens"] > window:
            self._error(
                400,
                f"This model's maximum context length is {window} tokens. However, your "
                f"messages resulted in {usage['prompt_tokens']} tokens. Please reduce the "
                "length of the messages.",
                "context_length_exceeded",
            )
            return
        if not self.server.send_usage:
            usage = None
        if body.get("stream"):
            self._stream(body, reply, usage)
        else:
            self._complete(body, reply, usage)

    def _responses(self, body: dict[str, Any]) -> None:
        """Answer a Responses API request: its reply, whole or as its events."""
        self.server.requests.append(body)
        if self.server.fail_status is not None:
            self._error(self.server.fail_status, "the fake server was told to fail", "fake_error")
            return
        reply = reply_for(body)
        usage = fake_responses.usage_of(body, reply) if self.server.send_usage else None
        if body.get("stream"):
            data = fake_responses.stream_events(body, reply, usage)
            content_type = "text/event-stream"
        else:
            data = json.dumps(fake_responses.response_object(body, reply, usage)).encode()
            content_type = "application/json"
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, code: str) -> None:
        data = json.dumps(
            {"error": {"message": message, "type": "invalid_request_error", "code": code}}
        ).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _complete(self, body: dict[str, Any], reply: str, usage: dict[str, int] | None) -> None:
        answer: dict[str, Any] = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": "stop",
                }
            ],
        }
        if usage is not None:
            answer["usage"] = usage
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, body: dict[str, Any], reply: str, usage: dict[str, int] | None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        pieces = [reply[i : i + 16] for i in range(0, len(reply), 16)]
        chunks: list[Any] = [
            {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
            for piece in pieces
        ]
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if usage is not None:
            chunks.append({"choices": [], "usage": usage})
        for chunk in chunks:
            chunk.update(
                {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": body["model"]}
            )
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


class FakeOpenAIServer(ThreadingHTTPServer):
    """The fake server; tests change what it does through its attributes.

    ``window_tokens``: refuse a request whose prompt (counted as in
    :func:`usage_for`) is over it, with OpenAI's 400 ``context_length_exceeded``.
    ``send_usage``: False to leave ``usage`` out of replies. ``fail_status``:
    answer every request with this HTTP status.
    """

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.window_tokens: int | None = None
        self.send_usage = True
        self.fail_status: int | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextmanager
def fake_openai_server() -> Iterator[FakeOpenAIServer]:
    """Serve until the block ends; ``server.base_url`` is the ``--base-url``."""
    server = FakeOpenAIServer()
    thread = threading.Thread(target=server.serve_forever, args=(POLL_SECONDS,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
