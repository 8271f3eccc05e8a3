"""The slash commands of ``agentcore chat``: ``/help``, and those plugins add."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from agentcore.cli.extensions import ChatCommand
from agentcore.session import AgentSession

QUIT_COMMAND = "/quit"
"""The line that ends the chat (end of input does too)."""

HELP_COMMAND = "/help"
"""The line that lists the commands."""

_CORE_HELP = ((HELP_COMMAND, "show this help"), (QUIT_COMMAND, "end the chat (so does Ctrl-D)"))


@frozen
class SlashCommand:
    """A line of the chat that is a command: its name and the text after it."""

    name: str
    argument: str | None


def parse_command(line: str, commands: Sequence[ChatCommand] = ()) -> SlashCommand | None:
    """The command ``line`` holds, or None when it is a message for the model.

    Only ``/help`` and the names of ``commands`` are commands, so a message
    such as ``/etc/hosts looks wrong`` still goes to the model.
    """
    name, _, rest = line.strip().partition(" ")
    if name != HELP_COMMAND and name not in {command.name for command in commands}:
        return None
    argument = rest.strip()
    return SlashCommand(name, argument or None)


def help_text(commands: Sequence[ChatCommand]) -> str:
    """What ``/help`` prints: every command with its usage and help line."""
    rows = [(f"{c.name} {c.usage}".rstrip(), c.help) for c in commands]
    rows += list(_CORE_HELP)
    width = max(len(usage) for usage, _ in rows) + 2
    lines = ["commands:"]
    lines += [f"  {usage:<{width}}{text}" for usage, text in rows]
    lines.append("any other line is sent to the model")
    return "\n".join(lines)


async def run_command(
    session: AgentSession, command: SlashCommand, commands: Sequence[ChatCommand] = ()
) -> str:
    """Run ``command`` on ``session``; return what to print on stderr ("" for nothing)."""
    if command.name == HELP_COMMAND:
        return help_text(commands)
    for known in commands:
        if known.name == command.name:
            return await known.run(session, command.argument)
    raise ValueError(f"{command.name} is not a chat command")
