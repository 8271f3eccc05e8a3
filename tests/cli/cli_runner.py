"""Run the ``agentcore`` command line for a test: in this process, or in a real one.

:func:`run_cli` calls :func:`agentcore.cli.main` in the test process with its own
stdin, stdout, stderr, environment and working directory, and puts the process's
back afterwards: the command sees what a process started with the same arguments
would see, at a fraction of the cost of starting Python. :func:`run_cli_process`
starts ``python -m agentcore`` for the tests where the process itself is what is
tested (the interpreter's exit code, closed pipes, signals, a terminal).
Both return a :class:`CliResult`.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

from agentcore.cli import main

PROCESS_TIMEOUT = 60.0
"""Seconds a command started as a process may run before the test fails."""


class CliResult(Protocol):
    """What a test reads of a finished command (a :class:`subprocess.CompletedProcess` fits)."""

    @property
    def returncode(self) -> int:
        """The exit code."""

    @property
    def stdout(self) -> str:
        """Everything written to stdout."""

    @property
    def stderr(self) -> str:
        """Everything written to stderr."""


class InProcessResult:
    """The exit code and output of a command run by :func:`run_cli`."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self) -> str:
        return (
            f"InProcessResult(returncode={self.returncode!r}, stdout={self.stdout!r}, "
            f"stderr={self.stderr!r})"
        )


class RunCli(Protocol):
    """The ``run_cli`` fixture: run ``agentcore ARGS`` with the test's environment."""

    def __call__(
        self, *args: str, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> CliResult:
        """Run the command; ``env`` adds to (or overrides) the test's environment."""


def run_cli(
    args: Sequence[str],
    *,
    input: str = "",
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> InProcessResult:
    """Run ``agentcore ARGS`` in this process and return its exit code and output.

    :param args: The arguments after ``agentcore``.
    :param input: What stdin holds (a pipe or a file, never a terminal).
    :param env: The whole environment the command sees (default: this process's).
    :param cwd: The working directory while it runs (default: the current one).

    An exception the command does not handle propagates, with the test's own
    stdio, environment and directory restored.
    """
    stdout = _OutputStream()
    stderr = _OutputStream()
    with _environment(env), _directory(cwd), _stdio(io.StringIO(input), stdout, stderr):
        try:
            code = main(list(args))
        except SystemExit as exc:  # a plugin's command may still exit this way
            code = _exit_code(exc, stderr)
    return InProcessResult(code, stdout.text(), stderr.text())


def run_cli_process(
    args: Sequence[str],
    *,
    input: str = "",
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stdout: int | None = None,
    command: Sequence[str] = (sys.executable, "-m", "agentcore"),
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m agentcore ARGS`` in a new process, as a user's shell would.

    :param stdout: A file descriptor for the process's stdout (default: captured).
    :param command: What starts the command line (default: this interpreter's
        ``python -m agentcore``; the installed console script, for instance).
    Other parameters as in :func:`run_cli`.
    """
    return subprocess.run(
        [*command, *args],
        input=input,
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=None if env is None else dict(env),
        cwd=cwd,
        timeout=PROCESS_TIMEOUT,
    )


class _OutputStream(io.TextIOWrapper):
    """A UTF-8 text stream over memory, with a ``buffer`` and no terminal, like a pipe."""

    def __init__(self) -> None:
        self._bytes = io.BytesIO()
        super().__init__(self._bytes, encoding="utf-8", newline="\n", write_through=True)

    def text(self) -> str:
        """Everything written so far."""
        self.flush()
        return self._bytes.getvalue().decode("utf-8")


def _exit_code(exc: SystemExit, stderr: IO[str]) -> int:
    """The exit code the interpreter would give ``exc``, printing a message as it would."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=stderr)
    return 1


@contextlib.contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _directory(cwd: Path | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    saved = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _stdio(stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
