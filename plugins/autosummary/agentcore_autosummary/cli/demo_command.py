"""``agentcore demo``: a scripted long conversation, summarized as it goes, offline."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ConfigError,
    FocusedConfig,
    Message,
    SqliteStore,
)
from agentcore.cli.plugin_api import (
    EXIT_USAGE,
    CliError,
    CommandGroup,
    add_db_argument,
    format_tokens,
    meter,
    open_or_create,
    plural,
    positive_int,
    printable,
)
from agentcore.plugin_api import count_tokens
from agentcore.testing import MockProvider
from agentcore_autosummary.cli.notices import summary_line
from agentcore_autosummary.cli.options import (
    SUMMARY_SETTING,
    add_summary_arguments,
    explain_settings_error,
    summary_settings,
)
from agentcore_autosummary.demo import (
    DemoResponder,
    DemoScript,
    SummaryWritten,
    TurnReport,
    load_script,
    play,
)

DEMO_SESSION = "demo"
"""The demo's session id without ``--session``."""

DEMO_MAX_CONTEXT_TOKENS = 1500
"""The demo's small window, so that summaries come every few turns."""

DEMO_SUMMARY_DEFAULTS: dict[str, Any] = {"max_summary_tokens": 300, "trigger_token_ratio": 0.5}
"""Summary settings the demo gives unless a flag overrides them: a trigger of 0.5, below the
default 0.8, so that its 45 turns see a summary every few turns."""

_PREVIEW = 72
_LISTED_MESSAGES = 16


def register(commands: CommandGroup) -> None:
    """Add the ``demo`` subcommand to ``commands``."""
    parser = commands.add_parser(
        "demo",
        help="watch autosummary keep a long conversation in a small window (offline)",
        description="Play a scripted conversation of 45 turns through a real AgentSession "
        "with a SqliteStore and the autosummary plugin. Replies come from MockProvider "
        "(canned, offline: no model is called). Each turn prints the context size against "
        "the window; each summary prints what it covers; the end shows the context the "
        "next request would carry.",
    )
    parser.add_argument(
        "--turns",
        type=positive_int,
        metavar="N",
        help="play only the first N turns (default: all of them)",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only the summaries and the final context, not a line per turn",
    )
    add_db_argument(
        parser, help="keep the session in this SQLite file (default: a temporary database)"
    )
    parser.add_argument(
        "--session",
        default=DEMO_SESSION,
        metavar="ID",
        help="the session id; it must not exist yet in --db (default: %(default)s)",
    )
    add_summary_arguments(parser, max_context_tokens=DEMO_MAX_CONTEXT_TOKENS)
    parser.set_defaults(handler=run, parser=parser)


def run(args: argparse.Namespace) -> int:
    """Play the demo and print its report on stdout."""
    script = load_script()
    settings = summary_settings(args, **DEMO_SUMMARY_DEFAULTS)
    with _database(args.db) as (path, temporary):
        asyncio.run(_play(args, script, settings, path, temporary))
    return 0


@contextlib.contextmanager
def _database(given: Path | None) -> Iterator[tuple[Path, bool]]:
    if given is not None:
        yield given, False
        return
    with tempfile.TemporaryDirectory(prefix="agentcore-demo-") as folder:
        yield Path(folder) / "demo.db", True


async def _play(
    args: argparse.Namespace,
    script: DemoScript,
    settings: dict[str, Any] | None,
    path: Path,
    temporary: bool,
) -> None:
    store = open_or_create(path)
    try:
        if args.session in await store.list_sessions():
            raise CliError(
                f"{path} already holds a session {args.session!r}; pass another --session or --db"
            )
        session = _session(args, script, store, settings)
        turns = len(script.turns[: args.turns])
        _header(script, turns, path, temporary, settings, args)
        summaries = 0
        async for event in play(session, script, turns=args.turns):
            if isinstance(event, TurnReport):
                if not args.quiet:
                    width = len(str(turns))
                    used = meter(event.context_tokens, args.max_context_tokens)
                    print(f"turn {event.number:>{width}}  {used}")
                if event.summary is not None:
                    summaries += not event.summary.pruned
                    _print_summary(event.summary, args.quiet, event.number)
            else:
                summaries += not event.pruned
                _print_summary(event, args.quiet, None)
        await _footer(session, summaries, path, temporary, args.max_context_tokens)
    finally:
        await store.close()


def _session(
    args: argparse.Namespace,
    script: DemoScript,
    store: SqliteStore,
    settings: dict[str, Any] | None,
) -> AgentSession:
    provider = MockProvider(responder=DemoResponder(script))
    builder = AgentBuilder().provider(provider).store(store)
    if settings is not None:
        builder.setting(SUMMARY_SETTING, settings)
    try:
        bundle = builder.build()
    except ConfigError as exc:
        raise CliError(explain_settings_error(str(exc)), EXIT_USAGE) from None
    agent = Agent("demo", system_prompt=script.system_prompt)
    return AgentSession(agent, args.session, bundle, FocusedConfig())


def _header(
    script: DemoScript,
    turns: int,
    path: Path,
    temporary: bool,
    settings: dict[str, Any] | None,
    args: argparse.Namespace,
) -> None:
    print(f'agentcore demo: "{script.title}", {plural(turns, "turn")}')
    print("model:    MockProvider: canned replies from the script, offline; no model is called")
    where = "a temporary database, deleted at the end" if temporary else str(path)
    print(f"store:    SqliteStore, {where}")
    if settings is not None:
        given = ", ".join(f"{name}={value!r}" for name, value in settings.items())
        print(f"summary:  autosummary with {given} (plugin defaults for the rest)")
    else:
        print("summary:  none (--no-summary)")
    print(f"window:   {format_tokens(args.max_context_tokens)} tokens, Focused slot")
    print()


def _print_summary(summary: SummaryWritten, quiet: bool, turn: int | None) -> None:
    if summary.pruned:
        line = (
            f"summary pruned: a later message replaced a value it stated "
            f"({format_tokens(summary.tokens)} tokens); "
            f"context now {format_tokens(summary.context_tokens)} tokens"
        )
    else:
        line = summary_line(summary.covers, summary.tokens, summary.context_tokens)
    if not quiet and turn is not None:
        print(f"  -> {line}")
        return
    where = f"turn {turn}" if turn is not None else "after the last turn"
    print(f"{where}: {line}")


async def _footer(
    session: AgentSession,
    summaries: int,
    path: Path,
    temporary: bool,
    limit: int,
) -> None:
    messages = await session.load_messages()
    size = count_tokens(messages)
    print()
    print(
        f"The next request would carry {len(messages)} messages, "
        f"{format_tokens(size)} tokens (before the new user message):"
    )
    shown = messages
    if len(messages) > _LISTED_MESSAGES:
        half = _LISTED_MESSAGES // 2
        shown = [*messages[:half], *messages[-half:]]
    for index, message in enumerate(shown):
        if len(shown) < len(messages) and index == _LISTED_MESSAGES // 2:
            print(f"  ... {plural(len(messages) - len(shown), 'more message')} ...")
        _print_message(message)
    print()
    raw = len(await session.history())
    written = plural(summaries, "summary", "summaries")
    print(f"{written} written; the raw history keeps all {plural(raw, 'message')}.")
    costs = "; ".join(
        f"{purpose} {format_tokens(usage.total_tokens)}"
        for purpose, usage in sorted(session.cost.breakdown().items())
    )
    print(f"Tokens used (counted, not billed): {costs}.")
    if size > limit:
        print(
            f"The context is over its {format_tokens(limit)}-token window: "
            "a model with that window would refuse the next request."
        )
    if not temporary:
        print(f"Inspect the session: agentcore sessions show {session.session_id} --db {path}")


def _print_message(message: Message) -> None:
    tokens = format_tokens(count_tokens([message]))
    head = f"  {message.role:<9} {tokens:>5} tokens  "
    text = message.text
    if message.role == "system" and "\n" in text:
        print(head.rstrip())
        for line in printable(text).splitlines():
            print(f"      {line}")
        return
    flat = printable(" ".join(text.split()))
    if len(flat) > _PREVIEW:
        flat = flat[: _PREVIEW - 3] + "..."
    print(head + flat)
