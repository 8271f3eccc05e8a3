"""Run a command on a pseudo-terminal, as a person at a terminal would."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time
from collections.abc import Sequence

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\x1b[=>]")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class PtySession:
    """A process whose stdin, stdout and stderr are one pseudo-terminal."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], cwd: str) -> None:
        self.master, slave = os.openpty()
        self.process = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            # Ctrl-C works at a terminal even when this runner ignores SIGINT
            # (an ignored signal stays ignored in the child, and Python then
            # never raises KeyboardInterrupt).
            preexec_fn=_default_sigint,
        )
        os.close(slave)
        self._closed = False
        self.output = b""

    def read_until(self, marker: bytes, timeout: float = 30.0) -> bytes:
        """Read until ``marker`` appears after what was read so far (bounded in time)."""
        start = len(self.output)
        deadline = time.monotonic() + timeout
        while marker not in self.output[start:]:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{marker!r} not seen; output so far: {self.output!r}")
            if not self._read(remaining):
                raise EOFError(f"{marker!r} not seen before the end: {self.output!r}")
        return self.output[start:]

    def send(self, data: bytes) -> None:
        """Type ``data``."""
        os.write(self.master, data)

    def wait(self, timeout: float = 30.0) -> int:
        """Read everything until the process exits; its exit code. The terminal stays open.

        Reading while waiting keeps a process that writes much on its way out (a
        traceback) from blocking on a full terminal; what it wrote is in :attr:`output`.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(deadline - time.monotonic()):
            pass
        try:
            return self.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise TimeoutError(
                f"still running after {timeout} s; output so far: {self.text()!r}"
            ) from None

    def finish(self, timeout: float = 30.0) -> int:
        """Read everything until the process exits; its exit code. The terminal is closed."""
        try:
            return self.wait(timeout)
        finally:
            self._close()

    def kill(self) -> None:
        """End the process if it still runs, and close the terminal."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self._close()

    def _close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self.master)

    def text(self) -> str:
        """The output so far as text, without terminal escape sequences."""
        return ANSI.sub("", self.output.decode("utf-8", "replace"))

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], max(0.0, timeout))
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 4096)
        except OSError:  # EIO: the process closed the terminal.
            return False
        self.output += chunk
        return bool(chunk)
