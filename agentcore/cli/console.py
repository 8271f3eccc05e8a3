"""Terminal input and output shared by the commands: notes, streamed text, read lines."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from agentcore.cli.paths import PRIVATE_FILE_MODE, make_private_dir, make_private_file
from agentcore.cli.text import strip_controls

logger = logging.getLogger(__name__)

HISTORY_LENGTH = 1000
"""How many lines the chat's line-editing history keeps."""

WAITING = "waiting for the model..."
"""The indicator shown on a terminal until the first token arrives."""


def note(message: str) -> None:
    """Write one informational line to stderr (stdout stays for the command's output)."""
    sys.stdout.flush()
    print(message, file=sys.stderr, flush=True)


def write(text: str) -> None:
    """Write ``text`` to stdout at once, as a reply streams in."""
    sys.stdout.write(text)
    sys.stdout.flush()


def stdin_is_interactive() -> bool:
    """Whether stdin is a terminal (a person typing) rather than a pipe or a file."""
    return _isatty(sys.stdin)


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (where an indicator may be drawn and erased)."""
    return _isatty(sys.stderr)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


@contextlib.contextmanager
def line_editing(history: Path) -> Iterator[None]:
    """Edit typed lines with readline, keeping their history in the file ``history``.

    Arrow keys, Home/End and Ctrl-R then edit and recall lines instead of
    sending escape bytes. Does nothing when stdin is not a terminal or the
    :mod:`readline` module is missing (Windows). The history file is created
    private to the user; the history is written back when the block ends.
    """
    if not stdin_is_interactive():
        yield
        return
    try:
        import readline
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        make_private_dir(history.parent)
        make_private_file(history)
        readline.read_history_file(history)
    except OSError as exc:
        logger.info("chat history %s not used: %s", history, exc)
        yield
        return
    readline.set_history_length(HISTORY_LENGTH)
    try:
        with _terminal_modes_restored():
            yield
    finally:
        try:
            readline.write_history_file(history)
            os.chmod(history, PRIVATE_FILE_MODE)
        except OSError as exc:
            logger.info("chat history not saved to %s: %s", history, exc)


@contextlib.contextmanager
def _terminal_modes_restored() -> Iterator[None]:
    """Put the terminal's modes back as they were when the block ends.

    readline switches the terminal to raw mode while it reads a line; when
    Ctrl-C ends the chat during a read, the reading thread never switches it
    back, and the shell would be left without echo.
    """
    try:
        import termios
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fd = sys.stdin.fileno()
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)


async def read_line(prompt: str) -> str | None:
    """The next line of stdin without its newline, or None at end of input.

    On a terminal ``prompt`` is shown and the line can be edited (see
    :func:`line_editing`); control characters left in the line (a pasted
    escape sequence) are removed. The read happens in a daemon thread, so the
    event loop keeps running (background work goes on while the user types)
    and Ctrl-C never waits for the read.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()
    interactive = stdin_is_interactive()
    stdin = sys.stdin  # the stdin of this call, even if sys.stdin changes while it reads

    def deliver(line: str | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(line)

    def read() -> None:
        line: str | None = None
        error: BaseException | None = None
        try:
            if interactive:
                line = input(prompt)
            else:
                raw = stdin.readline()
                line = raw.rstrip("\r\n") if raw else None
        except EOFError:
            line = None
        except BaseException as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # The loop closed while the user typed.
            loop.call_soon_threadsafe(deliver, line, error)

    threading.Thread(target=read, name="agentcore-stdin", daemon=True).start()
    line = await future
    return None if line is None else strip_controls(line)


class WaitingIndicator:
    """:data:`WAITING` on stderr from :meth:`show` until :meth:`clear` erases it.

    Call :meth:`clear` before the first token is written. Nothing is drawn
    unless ``enabled``: use it only when stderr is a terminal, so that a pipe
    or a log file never receives the indicator.
    """

    def __init__(self, enabled: bool) -> None:
        self._enabled = enabled
        self._shown = False

    def show(self) -> None:
        """Draw the indicator (once)."""
        if self._enabled and not self._shown:
            sys.stdout.flush()
            sys.stderr.write(WAITING)
            sys.stderr.flush()
            self._shown = True

    def clear(self) -> None:
        """Erase the indicator if it is shown."""
        if self._shown:
            sys.stderr.write("\r" + " " * len(WAITING) + "\r")
            sys.stderr.flush()
            self._shown = False
