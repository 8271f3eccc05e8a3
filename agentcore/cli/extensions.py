"""What plugins add to the ``agentcore`` command: subcommands, chat options, chat commands.

The three CLI hooks (``register_commands``, ``register_chat_options``,
``register_chat_commands``, declared in :mod:`agentcore.cli.hookspecs`) are called with
the objects of this module, the way ``llm`` plugins register their commands.
A subcommand a plugin adds is listed by ``agentcore --help`` with the
plugin's name: ``demo  ... (from NAME)``.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

import pluggy
from attrs import define, field, frozen

from agentcore._hook_attribution import running_plugin
from agentcore.errors import ConfigError
from agentcore.session_handle import SessionHandle

ChatCommandHandler = Callable[[SessionHandle, "str | None"], Awaitable[str]]
"""Runs a chat command: given the session and the text after the command's name
(None when there is none), returns what the chat prints on stderr ("" for nothing).

The session is the chat's :class:`~agentcore.AgentSession`, typed as the
:class:`~agentcore.session_handle.SessionHandle` of what a command may call; a
command that hands it to a function taking an ``AgentSession`` checks it is one
with ``isinstance``."""

NotesSource = Callable[[], Sequence[str]]
"""Returns the lines a plugin wants shown after a turn or a command (and takes them)."""


class PluginBuilder(Protocol):
    """What ``builder`` of a :class:`ChatSetup` offers a plugin: the chat's builder, unbuilt.

    An :class:`~agentcore.AgentBuilder`, typed by the two calls a plugin makes on it.
    """

    def setting(self, name: str, value: Any) -> PluginBuilder:
        """Give the plugin setting ``name`` (see :meth:`agentcore.AgentBuilder.setting`)."""
        ...

    def plugin(self, plugin: object) -> PluginBuilder:
        """Register ``plugin`` on the bundle (see :meth:`agentcore.AgentBuilder.plugin`)."""
        ...


class CommandGroup:
    """A group of subcommands a plugin adds to: ``agentcore`` itself, or ``agentcore sessions``.

    :meth:`add_parser` is argparse's ``add_parser``; the help line of each
    subcommand names the plugin that added it. Give the new parser a
    ``handler``: ``parser.set_defaults(handler=run, parser=parser)``, where
    ``run(args)`` returns the exit code (raise
    ``agentcore.cli.errors.CliError`` for a failure the user can fix).
    """

    def __init__(self, subparsers: Any, plugin_name: str | None = None) -> None:
        self._subparsers = subparsers
        self._plugin_name = plugin_name

    @property
    def plugin_name(self) -> str | None:
        """The plugin whose subcommands this group adds (None: the core's own)."""
        return self._plugin_name

    def for_plugin(self, plugin_name: str) -> CommandGroup:
        """The same group, adding subcommands in the name of ``plugin_name``."""
        return CommandGroup(self._subparsers, plugin_name)

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """Add the subcommand ``name``; ``help`` gets ``(from PLUGIN)`` appended."""
        help_text = kwargs.pop("help", None)
        if self._plugin_name is not None:
            suffix = f"(from {self._plugin_name})"
            help_text = suffix if not help_text else f"{help_text} {suffix}"
        parser: argparse.ArgumentParser = self._subparsers.add_parser(
            name, help=help_text, **kwargs
        )
        return parser


class CliHooks:
    """The command line's hooks of one plugin manager, as typed keyword-only methods.

    Each fires the hook of its name (declared in :mod:`agentcore.cli.hookspecs`)
    through pluggy's own synchronous call; wrappers run around them.
    """

    def __init__(self, plugin_manager: pluggy.PluginManager) -> None:
        self._pm = plugin_manager

    def __repr__(self) -> str:
        return f"CliHooks({self._pm!r})"

    def register_commands(self, *, commands: CommandGroup, sessions: CommandGroup) -> None:
        """Let every plugin add subcommands to the command line."""
        self._pm.hook.register_commands(commands=commands, sessions=sessions)

    def register_chat_options(self, *, parser: argparse.ArgumentParser) -> None:
        """Let every plugin add options to ``agentcore chat``."""
        self._pm.hook.register_chat_options(parser=parser)

    def register_chat_commands(self, *, chat: ChatSetup) -> None:
        """Let every plugin add slash commands and notes to a chat about to start."""
        self._pm.hook.register_chat_commands(chat=chat)


def add_plugin_commands(pm: pluggy.PluginManager, groups: Mapping[str, CommandGroup]) -> None:
    """Call ``register_commands`` once (wrappers run too), each subcommand in its plugin's name.

    :param pm: The plugin manager of the command line.
    :param groups: The groups by hook argument name: ``commands`` and ``sessions``.
    """
    caller = pm.hook.register_commands
    given = {arg: _RunningPluginGroup(group, caller) for arg, group in groups.items()}
    CliHooks(pm).register_commands(commands=given["commands"], sessions=given["sessions"])


class _RunningPluginGroup(CommandGroup):
    """A group that names, in each help line, the plugin whose implementation adds the command."""

    def __init__(self, group: CommandGroup, caller: pluggy.HookCaller) -> None:
        super().__init__(group._subparsers, group.plugin_name)
        self._caller = caller

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """Add the subcommand ``name`` in the name of the plugin adding it."""
        plugin = running_plugin(self._caller)
        if plugin is None:
            return super().add_parser(name, **kwargs)
        return CommandGroup(self._subparsers, plugin).add_parser(name, **kwargs)


@frozen
class ChatCommand:
    """A slash command of ``agentcore chat``, such as ``/undo``.

    :param name: The command as typed, a ``/`` then a word.
    :param help: One line for ``/help``.
    :param run: What runs it (:data:`ChatCommandHandler`).
    :param usage: What may follow the name, for ``/help`` (``"[INSTRUCTIONS]"``).
    """

    name: str
    help: str
    run: ChatCommandHandler
    usage: str = ""

    def __attrs_post_init__(self) -> None:
        word = self.name[1:]
        if not self.name.startswith("/") or not word or not word.isidentifier():
            raise ConfigError(f"a chat command's name is '/' and a word, got {self.name!r}")


@define
class ChatSetup:
    """What ``register_chat_commands`` gets: one chat about to start.

    :param args: The parsed arguments of ``agentcore chat`` (options a plugin
        added with ``register_chat_options`` included).
    :param builder: The builder of the chat's bundle, not built yet: a plugin
        may give it settings and register plugins on it.
    :param model: The model name after ``PROVIDER:``, whose tokenizer the meter uses.
    """

    args: argparse.Namespace
    builder: PluginBuilder
    model: str | None
    commands: list[ChatCommand] = field(factory=list)
    notes: list[NotesSource] = field(factory=list)

    def add_command(self, command: ChatCommand) -> None:
        """Offer ``command`` in this chat; a name already taken is a :class:`ConfigError`."""
        if not isinstance(command, ChatCommand):
            raise ConfigError(f"expected a ChatCommand, got {command!r}")
        if command.name in {"/help", "/quit", *(known.name for known in self.commands)}:
            raise ConfigError(f"the chat command {command.name} is defined twice")
        self.commands.append(command)

    def add_notes(self, source: NotesSource) -> None:
        """Show the lines ``source()`` returns after each turn and command, with the meter."""
        if not callable(source):
            raise ConfigError(f"expected a function returning lines, got {source!r}")
        self.notes.append(source)
