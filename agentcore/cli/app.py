"""The ``agentcore`` command line: the parser, and running a command with clean errors."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Sequence

import pluggy

from agentcore import __version__
from agentcore.cli import chat_command, models_command, plugins_command, sessions_command
from agentcore.cli.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CliError,
)
from agentcore.cli.extensions import CommandGroup, add_plugin_commands
from agentcore.cli.text import printable
from agentcore.errors import AgentCoreError
from agentcore.plugins import create_plugin_manager

PROG = "agentcore"
"""The command's name in usage lines, however it was started."""


def build_parser(plugin_manager: pluggy.PluginManager | None = None) -> argparse.ArgumentParser:
    """The parser of the ``agentcore`` command and all its subcommands.

    :param plugin_manager: Whose plugins add commands (``register_commands``) and
        chat options; default: a new one with the installed plugins
        (:func:`~agentcore.plugins.create_plugin_manager`).
    """
    pm = create_plugin_manager() if plugin_manager is None else plugin_manager
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run and inspect agentcore sessions: a chat with a model, the installed "
        "plugins, the stored sessions, and what plugins add.",
        epilog=f"'{PROG} COMMAND --help' describes each command; '(from NAME)' marks a "
        "command the plugin NAME adds.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log more on stderr: -v for warnings and progress, -vv for debugging "
        "(default: errors only)",
    )
    commands = parser.add_subparsers(
        title="commands", dest="command", required=True, metavar="COMMAND"
    )
    chat_command.register(commands, pm)
    models_command.register(commands)
    plugins_command.register(commands)
    sessions = sessions_command.register(commands)
    groups = {"commands": CommandGroup(commands), "sessions": CommandGroup(sessions)}
    add_plugin_commands(pm, groups)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``) and return the exit code.

    0 on success, 1 when the command failed (its message is one line on
    stderr), 2 for bad arguments (usage and message on stderr), 130 on Ctrl-C,
    141 when the reader of the output went away (``| head``), quietly.

    It returns rather than exits for ``--help``, ``--version`` and bad
    arguments too, and keeps nothing from one call to the next, so a program
    (or a test) may call it many times in one process; the command reads and
    writes :data:`sys.stdin`, :data:`sys.stdout`, :data:`sys.stderr` and
    :data:`os.environ` as they are when it is called.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits after --help, --version or a usage error
        return _exit_code(exc)
    try:
        code = _run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``agentcore sessions export ID | head``): stop quietly,
        # and keep the interpreter's last flush from failing again (Python's docs,
        # "Note on SIGPIPE").
        _silence_output()
        return EXIT_BROKEN_PIPE
    return code


def _exit_code(exc: SystemExit) -> int:
    """The exit code the interpreter would give for ``exc``."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return EXIT_FAILURE


def _run(args: argparse.Namespace) -> int:
    command_parser: argparse.ArgumentParser = args.parser
    try:
        with _logging(args.verbose):
            code: int = args.handler(args)
    except CliError as exc:
        if exc.exit_code == EXIT_USAGE:
            command_parser.print_usage(sys.stderr)
        _error(command_parser.prog, exc.message)
        return exc.exit_code
    except AgentCoreError as exc:
        _error(command_parser.prog, str(exc))
        return EXIT_FAILURE
    except ImportError as exc:
        # Most likely a plugin's entry point names a module that is gone.
        _error(
            command_parser.prog,
            f"cannot import a module ({exc}); if a plugin is broken, reinstall it or "
            "skip it with AGENTCORE_DISABLED_PLUGINS=NAME ('agentcore plugins' lists the names)",
        )
        return EXIT_FAILURE
    except KeyboardInterrupt:
        sys.stdout.flush()
        print(file=sys.stderr)
        return EXIT_INTERRUPTED
    return code


@contextlib.contextmanager
def _logging(verbosity: int) -> Iterator[None]:
    """Log to stderr while a command runs: errors only, or more with ``-v``/``-vv``."""
    levels = {0: logging.ERROR, 1: logging.INFO}
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    root.setLevel(levels.get(verbosity, logging.DEBUG))
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)


def _error(prog: str, message: str) -> None:
    sys.stdout.flush()
    text = printable(" ".join(message.split()), multiline=False)
    print(f"{prog}: error: {text}", file=sys.stderr, flush=True)


def _silence_output() -> None:
    """Point stdout and stderr at the null device: whatever is still buffered is dropped."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)
