"""What a plugin uses to extend the ``agentcore`` command, in one documented place.

The CLI hooks (``register_commands``, ``register_chat_options``,
``register_chat_commands``) hand a plugin a :class:`CommandGroup` or a
:class:`ChatSetup`; a plugin builds its commands with the helpers here, so
that its flags, messages, errors and exit codes read like the core's own.
The first-party plugins import nothing else from ``agentcore.cli`` (a test
reads their imports). The core's names are in :mod:`agentcore.plugin_api`.

- **Extension points**: :class:`CommandGroup`, :class:`ChatSetup` (its
  builder a :class:`PluginBuilder`), :class:`ChatCommand` (its handler a
  :data:`ChatCommandHandler`), :data:`NotesSource`.
- **Errors and exit codes**: :class:`CliError`, :data:`EXIT_USAGE`,
  :data:`EXIT_FAILURE`, :data:`EXIT_OK`; :func:`explain_llm_error`.
- **Arguments**: :func:`positive_int`, :func:`ratio`; the model options
  (:func:`add_provider_arguments`, :func:`provider_from_args`,
  :func:`check_api_key`, :data:`DEFAULT_SYSTEM_PROMPT`,
  :data:`DEFAULT_MAX_CONTEXT_TOKENS`); the database option
  (:func:`add_db_argument`, :func:`db_path`, :class:`PostgresUrl`,
  :func:`check_existing`, :func:`open_existing`, :func:`open_or_create`) and
  :func:`require_session`.
- **Output**: :func:`note`, :func:`stderr_is_terminal`, :func:`printable`,
  :func:`plural`, :func:`format_tokens`, :func:`meter`,
  :func:`context_tokens`.
"""

from agentcore.cli.arg_types import positive_int, ratio
from agentcore.cli.chat_command import (
    DEFAULT_MAX_CONTEXT_TOKENS,
    DEFAULT_SYSTEM_PROMPT,
    add_provider_arguments,
    check_api_key,
    explain_llm_error,
    provider_from_args,
)
from agentcore.cli.console import note, stderr_is_terminal
from agentcore.cli.database import (
    PostgresUrl,
    add_db_argument,
    check_existing,
    db_path,
    open_existing,
    open_or_create,
)
from agentcore.cli.errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError
from agentcore.cli.extensions import (
    ChatCommand,
    ChatCommandHandler,
    ChatSetup,
    CommandGroup,
    NotesSource,
    PluginBuilder,
)
from agentcore.cli.meter import context_tokens, format_tokens, meter
from agentcore.cli.session_report import require_session
from agentcore.cli.text import plural, printable

__all__ = [
    "DEFAULT_MAX_CONTEXT_TOKENS",
    "DEFAULT_SYSTEM_PROMPT",
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "ChatCommand",
    "ChatCommandHandler",
    "ChatSetup",
    "CliError",
    "CommandGroup",
    "NotesSource",
    "PluginBuilder",
    "PostgresUrl",
    "add_db_argument",
    "add_provider_arguments",
    "check_api_key",
    "check_existing",
    "context_tokens",
    "db_path",
    "explain_llm_error",
    "format_tokens",
    "meter",
    "note",
    "open_existing",
    "open_or_create",
    "plural",
    "positive_int",
    "printable",
    "provider_from_args",
    "ratio",
    "require_session",
    "stderr_is_terminal",
]
