"""What autosummary adds to ``agentcore chat``: its options, ``/compact``, ``/summary``, notices."""

from __future__ import annotations

import argparse

from agentcore import AgentSession, ConfigError
from agentcore.cli.plugin_api import (
    EXIT_USAGE,
    ChatCommand,
    ChatSetup,
    CliError,
    printable,
    stderr_is_terminal,
)
from agentcore.plugin_api import SessionHandle
from agentcore_autosummary.applying.fencing import unfence_summary
from agentcore_autosummary.cli.notices import SummaryNotices
from agentcore_autosummary.cli.options import (
    SUMMARY_SETTING,
    add_summary_arguments,
    explain_settings_error,
    summary_settings,
)
from agentcore_autosummary.compacting import compact, get_conversation_summary
from agentcore_autosummary.config import SummaryConfig
from agentcore_autosummary.keeping.summary_info import CompactError


def add_chat_options(parser: argparse.ArgumentParser) -> None:
    """The summary flags of ``agentcore chat`` (its ``--max-context-tokens`` is the core's)."""
    add_summary_arguments(parser, max_context_tokens=None)


def setup_chat(chat: ChatSetup) -> None:
    """Enable summaries in this chat (unless ``--no-summary``), with the commands and notices."""
    settings = summary_settings(chat.args)
    if settings is None:
        return
    try:
        SummaryConfig.coerce(settings)
    except (ConfigError, ValueError, TypeError) as exc:
        message = f"invalid value for the setting {SUMMARY_SETTING!r}: {exc}"
        raise CliError(explain_settings_error(message), EXIT_USAGE) from None
    # One-shot and --json output keep stderr quiet unless a person watches it.
    quiet = chat.args.prompt is not None or chat.args.json
    notices = SummaryNotices(model=chat.model, progress=not quiet or stderr_is_terminal())
    chat.builder.setting(SUMMARY_SETTING, settings).plugin(notices)
    chat.add_command(
        ChatCommand(
            "/compact",
            "summarize now what the context can give up; INSTRUCTIONS (optional) say "
            "what the summary must keep",
            compact_command,
            usage="[INSTRUCTIONS]",
        )
    )
    chat.add_command(ChatCommand("/summary", "show the current summary", summary_command))
    chat.add_notes(notices.lines)


def chat_session(session: SessionHandle) -> AgentSession:
    """The chat's session as the :class:`~agentcore.AgentSession` the chat hands its commands."""
    if not isinstance(session, AgentSession):
        raise ConfigError(f"a chat command runs on an AgentSession, got {session!r}")
    return session


async def compact_command(session: SessionHandle, argument: str | None) -> str:
    """``/compact``: prints nothing itself when it succeeds (the notice says what was done).

    A compaction that cannot be done is reported, and the chat goes on.
    """
    try:
        await compact(chat_session(session), argument)
    except CompactError as exc:
        return f"nothing compacted: {printable(str(exc))}"
    return ""


async def summary_command(session: SessionHandle, argument: str | None) -> str:
    """``/summary``: the slot's summary and what it covers, else the stored summary."""
    focused = (await session.get_slot()).config.focused
    if focused is not None and focused.summary_override is not None:
        covered = f"messages 0..{focused.summary_covers - 1}"
        text = unfence_summary(focused.summary_override)
        return f"summary of {covered}:\n{printable(text)}"
    summary = await get_conversation_summary(chat_session(session))
    return "no summary yet" if summary is None else f"summary:\n{printable(summary)}"
