"""The slash commands of ``agentcore chat`` and the summary notices it shows."""

from __future__ import annotations

from typing import Any

from attrs import define, field, frozen

from agentcore.cli.text import printable
from agentcore.context import TurnContext
from agentcore.hookspecs import hookimpl
from agentcore.session import AgentSession

HELP_TEXT = """\
commands:
  /compact [INSTRUCTIONS]  summarize now what the context can give up; INSTRUCTIONS
                           (optional) say what the summary must keep
  /summary                 show the current summary
  /help                    show this help
  /quit                    end the chat (so does Ctrl-D)
any other line is sent to the model"""
"""What ``/help`` prints."""

COMMANDS = ("/compact", "/summary", "/help")
"""The slash commands handled in the chat (besides ``/quit``)."""


@frozen
class SlashCommand:
    """A line of the chat that is a command: its name and the text after it."""

    name: str
    argument: str | None


def parse_command(line: str) -> SlashCommand | None:
    """The command ``line`` holds, or None when it is a message for the model.

    Only the names in :data:`COMMANDS` are commands, so a message such as
    ``/etc/hosts looks wrong`` still goes to the model.
    """
    name, _, rest = line.strip().partition(" ")
    if name not in COMMANDS:
        return None
    argument = rest.strip()
    return SlashCommand(name, argument or None)


@define
class SummaryNotices:
    """A plugin that collects each applied summary (``after_summary``) for the chat to show."""

    pending: list[Any] = field(factory=list)

    @hookimpl(optionalhook=True)  # the hook exists where autosummary is installed
    def after_summary(self, ctx: TurnContext, summary: Any) -> None:
        """Remember ``summary`` until the chat shows it."""
        self.pending.append(summary)

    def take(self) -> list[Any]:
        """The summaries not shown yet, oldest first; they count as shown."""
        taken, self.pending = self.pending, []
        return taken


async def run_command(session: AgentSession, command: SlashCommand) -> str:
    """Run ``command`` on ``session``; return what to print on stderr.

    ``/compact`` prints nothing itself when it succeeds: its notice comes
    from the summary notices, like any summary's. A compaction that cannot
    be done is reported, and the chat goes on.
    """
    if command.name == "/help":
        return HELP_TEXT
    if command.name == "/summary":
        focused = (await session.get_slot()).config.focused
        if focused is not None and focused.summary_override is not None:
            covered = f"messages 0..{focused.summary_covers - 1}"
            return f"summary of {covered}:\n{printable(focused.summary_override)}"
        import agentcore_autosummary

        summary = await agentcore_autosummary.get_conversation_summary(session)
        return "no summary yet" if summary is None else f"summary:\n{printable(summary)}"
    import agentcore_autosummary

    try:
        await agentcore_autosummary.compact(session, command.argument)
    except agentcore_autosummary.CompactError as exc:
        return f"nothing compacted: {printable(str(exc))}"
    return ""
