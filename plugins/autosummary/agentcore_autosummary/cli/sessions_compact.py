"""``agentcore sessions compact ID``: summarize a stored session now."""

from __future__ import annotations

import argparse
import asyncio

from agentcore import Agent, AgentBuilder, AgentSession, ConfigError, LlmError
from agentcore.cli.plugin_api import (
    DEFAULT_MAX_CONTEXT_TOKENS,
    DEFAULT_SYSTEM_PROMPT,
    EXIT_USAGE,
    CliError,
    CommandGroup,
    add_db_argument,
    add_provider_arguments,
    check_api_key,
    check_existing,
    db_path,
    explain_llm_error,
    format_tokens,
    note,
    open_existing,
    printable,
    provider_from_args,
    require_session,
)
from agentcore_autosummary.cli.notices import SummaryNotices
from agentcore_autosummary.cli.options import (
    SUMMARY_SETTING,
    add_summary_arguments,
    explain_settings_error,
    summary_settings,
)
from agentcore_autosummary.compacting import compact
from agentcore_autosummary.keeping.summary_info import CompactError


def register(sessions: CommandGroup) -> None:
    """Add ``compact`` to the subcommands of ``agentcore sessions``."""
    parser = sessions.add_parser(
        "compact",
        help="summarize a stored session now",
        description="Summarize now what the session's current slot can give up (everything "
        "before the recent tail kept verbatim), with the autosummary plugin and the model "
        "--model names; the summary goes to stdout, what it covers to stderr. The slot must "
        "be Focused, as 'agentcore chat' makes it.",
    )
    parser.add_argument("session_id", metavar="ID", help="the session id")
    add_db_argument(parser)
    parser.add_argument(
        "--instructions",
        metavar="TEXT",
        help="what the summary must keep, e.g. 'keep the API design decisions'",
    )
    add_provider_arguments(parser)
    add_summary_arguments(parser, max_context_tokens=DEFAULT_MAX_CONTEXT_TOKENS)
    parser.set_defaults(handler=run, parser=parser)


def run(args: argparse.Namespace) -> int:
    """Compact one stored session with the model ``--model`` names."""
    path = db_path(args)
    if not check_existing(path):
        raise CliError(f"no session {args.session_id!r} in {path} (the file is empty)")
    if args.instructions is not None and not args.instructions.strip():
        raise CliError("argument --instructions: the text is empty", EXIT_USAGE)
    settings = summary_settings(args)
    if settings is None:
        raise CliError("compact needs summaries: leave out --no-summary", EXIT_USAGE)
    check_api_key(args)
    provider = provider_from_args(args)
    prefix = args.model.partition(":")[0].strip().lower()

    async def main() -> None:
        store = open_existing(path)
        try:
            await require_session(store, args.session_id, str(path))
            try:
                builder = AgentBuilder().provider(provider).store(store)
                builder.plugin(SummaryNotices(model=args.model.partition(":")[2], prefix=""))
                bundle = builder.setting(SUMMARY_SETTING, settings).build()
            except ConfigError as exc:
                raise CliError(explain_settings_error(str(exc)), EXIT_USAGE) from None
            agent = Agent("chat", system_prompt=DEFAULT_SYSTEM_PROMPT)
            session = AgentSession(agent, args.session_id, bundle)
            try:
                result = await compact(session, args.instructions)
            finally:
                await session.aclose()
        finally:
            await store.close()
            aclose = getattr(provider, "aclose", None)
            if aclose is not None:
                await aclose()
        print(printable(result.summary))
        note(
            f"compacted session {printable(repr(args.session_id), multiline=False)}: the summary "
            f"covers messages 0..{result.covers - 1}; context {format_tokens(result.tokens_before)}"
            f" -> {format_tokens(result.tokens_after)} tokens"
        )

    try:
        asyncio.run(main())
    except CompactError as exc:
        raise CliError(f"nothing compacted: {exc}") from None
    except LlmError as exc:
        raise CliError(explain_llm_error(exc, prefix)) from None
    return 0
