"""Terminal input and output shared by the commands: notes, streamed text, read lines."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading


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
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


async def read_line(prompt: str) -> str | None:
    """The next line of stdin without its newline, or None at end of input.

    On a terminal ``prompt`` is shown and the line can be edited. The read
    happens in a daemon thread, so the event loop keeps running (background
    work goes on while the user types) and Ctrl-C never waits for the read.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str | None] = loop.create_future()
    interactive = stdin_is_interactive()

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
                raw = sys.stdin.readline()
                line = raw.rstrip("\r\n") if raw else None
        except EOFError:
            line = None
        except BaseException as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # The loop closed while the user typed.
            loop.call_soon_threadsafe(deliver, line, error)

    threading.Thread(target=read, name="agentcore-stdin", daemon=True).start()
    return await future
