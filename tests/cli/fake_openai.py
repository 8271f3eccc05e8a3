"""A loopback server that speaks OpenAI's Chat Completions API, for chat tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARY_REPLY = "The user greeted the assistant and asked several numbered questions."


SUMMARY_MARKER = "```text\n"
"""The summary prompt fences the conversation as data; a turn's messages never hold this."""

PREFIX_SUMMARY_MARKER = "The material to summarize is the conversation above this message"
"""A summary request that reuses the conversation's prefix ends with an instruction saying so."""


def is_summary_text(text: str) -> bool:
    """Whether ``text``, a request's last message, asks for a summary (either shape)."""
    return SUMMARY_MARKER in text or PREFIX_SUMMARY_MARKER in text


def reply_for(body: dict[str, Any]) -> str:
    """A summary request gets :data:`SUMMARY_REPLY`; a turn gets its last message echoed."""
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
        self.server.requests.append(body)
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        reply = reply_for(body)
        usage = usage_for(body, reply)
        if body.get("stream"):
            self._stream(body, reply, usage)
        else:
            self._complete(body, reply, usage)

    def _complete(self, body: dict[str, Any], reply: str, usage: dict[str, int]) -> None:
        data = json.dumps(
            {
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
                "usage": usage,
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, body: dict[str, Any], reply: str, usage: dict[str, int]) -> None:
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
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextmanager
def fake_openai_server() -> Iterator[FakeOpenAIServer]:
    """Serve until the block ends; ``server.base_url`` is the ``--base-url``."""
    server = FakeOpenAIServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
