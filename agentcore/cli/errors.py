"""The error a command raises to end with a message and an exit code."""

from __future__ import annotations

EXIT_OK = 0
"""The command did what was asked."""

EXIT_FAILURE = 1
"""The command failed: an unknown session, an unreachable server..."""

EXIT_USAGE = 2
"""The command line was wrong (argparse's code for bad arguments)."""

EXIT_INTERRUPTED = 130
"""The user pressed Ctrl-C (128 + SIGINT)."""

EXIT_BROKEN_PIPE = 141
"""The reader of the output went away (``agentcore chat -p ... | head``): 128 + SIGPIPE,
the code of a shell tool ended by a closed pipe."""


class CliError(Exception):
    """Ends a command with ``message`` on stderr and ``exit_code``.

    With :data:`EXIT_USAGE` the command's usage line is printed first, as
    argparse does for a bad argument.

    :param message: One line saying what went wrong and what to do.
    :param exit_code: The process exit code.
    """

    def __init__(self, message: str, exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.message = " ".join(message.split())
        self.exit_code = exit_code
