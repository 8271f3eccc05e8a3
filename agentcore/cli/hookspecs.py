"""The command line's hooks: subcommands, ``chat`` options and slash commands.

They are the CLI's, not the core's: a library that never runs the
``agentcore`` command has no use for them, so :mod:`agentcore.hookspecs`
holds turn, call and setup hooks only. This module declares the three the
way a plugin declares hooks of its own (the core's ``register_hookspecs``
hook), and is registered in every plugin manager before any other plugin
(:data:`agentcore.plugins.SPEC_PLUGIN_MODULES`), so a plugin may implement
them whether or not the command line runs, and an ``async`` implementation
is refused as it registers. :class:`~agentcore.cli.extensions.CliHooks`
calls them, typed. All three are called synchronously.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pluggy

from agentcore.hookspecs import hook_policy, hookimpl, hookspec

if TYPE_CHECKING:
    import argparse

    from agentcore.cli.extensions import ChatSetup, CommandGroup

__all__ = ["register_chat_commands", "register_chat_options", "register_commands"]


@hookimpl
def register_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Declare the command line's hooks on ``pluginmanager``."""
    pluginmanager.add_hookspecs(sys.modules[__name__])


@hookspec
@hook_policy(sync=True)
def register_commands(commands: CommandGroup, sessions: CommandGroup) -> None:
    """Add subcommands to the ``agentcore`` command line, as ``llm`` plugins do.

    Called once as the command line builds its parser, for each plugin
    installed (entry points) and not disabled. ``commands.add_parser(name,
    help=..., description=...)`` adds ``agentcore NAME``,
    ``sessions.add_parser(...)`` adds ``agentcore sessions NAME``; both are
    argparse's ``add_parser``, and ``agentcore --help`` lists the new command
    with ``(from PLUGIN)``. Give the parser its handler:
    ``parser.set_defaults(handler=run, parser=parser)``, with ``run(args)``
    returning the exit code. See :mod:`agentcore.cli.extensions`.

    An exception raised here ends the command line with it.

    :param commands: The top-level commands.
    :param sessions: The subcommands of ``agentcore sessions``.
    """


@hookspec
@hook_policy(sync=True)
def register_chat_options(parser: argparse.ArgumentParser) -> None:
    """Add options to ``agentcore chat``: ``parser.add_argument(...)``.

    Called as the command line builds its parser; the parsed values reach
    :func:`register_chat_commands` in ``chat.args``.

    :param parser: The parser of ``agentcore chat``.
    """


@hookspec
@hook_policy(sync=True)
def register_chat_commands(chat: ChatSetup) -> None:
    """A chat is about to start: add slash commands and notes, configure its bundle.

    Called once per ``agentcore chat``, before its bundle is built.
    ``chat.add_command(ChatCommand(...))`` offers a slash command (listed by
    ``/help``); ``chat.add_notes(source)`` shows the lines ``source()``
    returns after each turn and command, beside the context meter;
    ``chat.builder`` takes settings and plugins (``chat.args`` holds the
    options of :func:`register_chat_options`).

    An exception raised here ends the command line with it.

    :param chat: The chat being set up.
    """
