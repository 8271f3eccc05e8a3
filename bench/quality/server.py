"""The model server of the quality bench, and the proxy that records every summary call.

:func:`start` runs llama-cpp-python's OpenAI-compatible server on 127.0.0.1
with one thread for generation and one for the prompt (two made generation
16 times slower on 2 shared cores), under ``nice -n 10`` so that other work
keeps its share; only one such server runs at a time. :class:`Proxy` sits
between every system and that server: it forwards each request unchanged
except for ``temperature`` 0 and a fixed ``seed`` (the same sampling for every
system) and a null message ``content`` sent as ``""`` (which llama-cpp-python's
server requires), and records what was asked (``max_tokens``, ``max_completion_tokens``,
the messages) and what came back (text, ``finish_reason``, ``usage``, seconds),
so the cap each system sent can be checked against what the server generated.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from llama_server import (  # noqa: E402  (the integration helpers, reused)
    LlamaServer,
    free_port,
    start_server,
    stop_server,
)

__all__ = ["MODEL_ALIAS", "Call", "Proxy", "start", "stop_server"]

MODEL_ALIAS = "bench-model"
"""The model name the server answers to."""
SEED = 7
START_TIMEOUT = 300.0
CALL_TIMEOUT = 1800.0
"""Seconds the proxy waits for one reply: generous, a slow call is measured, not cut."""


def start(model: Path, log_path: Path, *, n_ctx: int) -> LlamaServer:
    """Start the server on ``model`` (one thread, ``nice -n 10``) and wait until it answers."""
    return start_server(
        log_path,
        n_ctx=n_ctx,
        model=model,
        alias=MODEL_ALIAS,
        threads=1,
        nice=10,
        start_timeout=START_TIMEOUT,
    )


def _nonnull_content(message: Any) -> Any:
    """``message`` with ``content`` ``""`` where it is null.

    OpenAI's API accepts an assistant message with tool calls and ``content``
    null (langchain-openai sends one for every tool-call step); llama-cpp-python's
    server rejects it with HTTP 500. An empty string means the same and passes.
    """
    if isinstance(message, dict) and "content" in message and message["content"] is None:
        return {**message, "content": ""}
    return message


@dataclass
class Call:
    """One request through the proxy and its reply."""

    system: str
    path: str
    max_tokens: int | None
    max_completion_tokens: int | None
    messages: list[dict[str, Any]]
    status: int = 0
    seconds: float = 0.0
    text: str = ""
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    """When the proxy received it (``time.monotonic``): orders it among the turns."""

    def as_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data."""
        return asdict(self)


class Proxy:
    """A loopback HTTP proxy in front of the server that records every call.

    ``system`` names the system whose calls are being recorded now.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.calls: list[Call] = []
        self.system = ""
        self._client = httpx.Client(timeout=CALL_TIMEOUT)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                reply = proxy._client.get(proxy.upstream + self.path.removeprefix("/v1"))
                self._send(reply.status_code, reply.content)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                status, content = proxy.forward(self.path, body)
                self._send(status, content)

            def _send(self, status: int, content: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

        self._server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        """The proxy's ``/v1`` address, to give the systems' clients."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def forward(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        """Send ``body`` on to the server and record the call."""
        call = Call(
            system=self.system,
            path=path,
            max_tokens=body.get("max_tokens"),
            max_completion_tokens=body.get("max_completion_tokens"),
            messages=list(body.get("messages") or []),
            extra={k: v for k, v in body.items() if k not in ("messages", "tools")},
        )
        self.calls.append(call)
        if body.get("stream"):
            call.error = "streaming is not supported by the bench proxy"
            return 400, json.dumps({"error": {"message": call.error}}).encode()
        body = {
            **body,
            "messages": [_nonnull_content(message) for message in body.get("messages") or []],
            "temperature": 0.0,
            "seed": SEED,
        }
        start = time.perf_counter()
        try:
            reply = self._client.post(self.upstream + path.removeprefix("/v1"), json=body)
        except httpx.HTTPError as exc:
            call.seconds = time.perf_counter() - start
            call.error = f"{type(exc).__name__}: {exc}"
            return 502, json.dumps({"error": {"message": call.error}}).encode()
        call.seconds = time.perf_counter() - start
        call.status = reply.status_code
        try:
            data = reply.json()
            choice = (data.get("choices") or [{}])[0]
            call.text = (choice.get("message") or {}).get("content") or ""
            call.finish_reason = choice.get("finish_reason")
            usage = data.get("usage") or {}
            call.prompt_tokens = usage.get("prompt_tokens")
            call.completion_tokens = usage.get("completion_tokens")
        except (ValueError, AttributeError, IndexError) as exc:
            call.error = f"unreadable reply: {exc}"
        if reply.status_code != 200:
            call.error = reply.text[:500]
        return reply.status_code, reply.content

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()
        self._client.close()
