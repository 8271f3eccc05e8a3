"""``agentcore sessions list | show ID | export ID | delete ID``, and what plugins add."""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
from collections.abc import Awaitable, Callable
from typing import Any

from agentcore.cli.console import stdin_is_interactive
from agentcore.cli.database import (
    Database,
    add_db_argument,
    check_existing,
    db_path,
    open_existing,
)
from agentcore.cli.errors import EXIT_USAGE, CliError
from agentcore.cli.meter import format_tokens
from agentcore.cli.money import format_dollars
from agentcore.cli.session_report import (
    export_records,
    found_messages,
    require_session,
    session_report,
    session_rows,
)
from agentcore.cli.text import dumps, plural, printable
from agentcore.stores import InMemoryStore
from agentcore.stores.base import MemoryStore

_VALUE_PREVIEW = 60


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """Add ``sessions`` and its subcommands to ``commands``; return its subcommands."""
    sessions = commands.add_parser(
        "sessions",
        help="list, show, export and delete stored sessions",
        description="Read the sessions stored in an SQLite database. list, show and export "
        "never create or change the database; delete removes one session.",
    )
    sub = sessions.add_subparsers(
        title="commands", dest="sessions_command", required=True, metavar="COMMAND"
    )

    list_parser = sub.add_parser(
        "list",
        help="one line per stored session",
        description="List the stored sessions: turns, slots, raw messages, and how many "
        "messages a Focused slot's summary_override covers.",
    )
    add_db_argument(list_parser)
    list_parser.add_argument("--json", action="store_true", help="print a JSON list instead")
    list_parser.set_defaults(handler=_run(_list), parser=list_parser)

    show = sub.add_parser(
        "show",
        help="a session's slots, cost and data",
        description="Show one session: turn index, cost by purpose, session-data keys, and "
        "per slot its mode, message count, and for a Focused slot its summary_override and "
        "summary_covers.",
    )
    show.add_argument("session_id", metavar="ID", help="the session id")
    add_db_argument(show)
    show.add_argument("--json", action="store_true", help="print a JSON object instead")
    show.add_argument(
        "--model",
        metavar="MODEL",
        help="price the cost at this model's list price (default: the model the chat "
        "recorded; no dollars for a model without a price)",
    )
    show.add_argument(
        "--find",
        metavar="WORDS",
        help="also list the stored messages that best match WORDS, with the turn each was "
        "said in (messages no longer in the context included)",
    )
    show.add_argument(
        "--limit", type=int, default=5, metavar="N", help="how many messages --find lists"
    )
    show.set_defaults(handler=_run(_show), parser=show)

    export = sub.add_parser(
        "export",
        help="a session's raw history as JSONL",
        description="Write a session's raw message history to stdout as JSON Lines: one "
        "message per line, with its 'slot' and its 'index' in that slot.",
    )
    export.add_argument("session_id", metavar="ID", help="the session id")
    add_db_argument(export)
    export.add_argument("--slot", metavar="SLOT", help="export only this slot")
    export.set_defaults(handler=_run(_export), parser=export)

    delete = sub.add_parser(
        "delete",
        help="delete a stored session",
        description="Delete one session from the database: its messages, slots and their configs, "
        "cost and session data, in one transaction. On a terminal it asks first; "
        "elsewhere pass --yes.",
    )
    delete.add_argument("session_id", metavar="ID", help="the session id")
    add_db_argument(delete)
    delete.add_argument(
        "-y", "--yes", action="store_true", help="delete without asking for confirmation"
    )
    delete.set_defaults(handler=_delete, parser=delete)

    return sub


Command = Callable[[MemoryStore, Database, argparse.Namespace], Awaitable[None]]


def _run(command: Command) -> Callable[[argparse.Namespace], int]:
    """A handler that opens the existing database, runs ``command`` and closes it.

    An empty file holds no session: it is read as an empty store rather than
    opened with :class:`SqliteStore`, which would write its tables into it.
    """

    def handler(args: argparse.Namespace) -> int:
        path = db_path(args)

        async def main() -> None:
            store: MemoryStore = open_existing(path) if check_existing(path) else InMemoryStore()
            try:
                await command(store, path, args)
            finally:
                await store.close()

        asyncio.run(main())
        return 0

    return handler


async def _list(store: MemoryStore, path: Database, args: argparse.Namespace) -> None:
    rows = await session_rows(store)
    if args.json:
        _print_json(rows)
        return
    if not rows:
        print(f"no sessions in {path}", file=sys.stderr)
        return
    table = [("SESSION", "TURNS", "SLOTS", "MESSAGES", "COVERED")]
    table += [
        (
            printable(row["session"], multiline=False),
            str(row["turns"]),
            str(row["slots"]),
            str(row["messages"]),
            f"0..{row['covered'] - 1}" if row["covered"] else "-",
        )
        for row in rows
    ]
    widths = [max(len(line[column]) for line in table) for column in range(5)]
    for line in table:
        cells = [line[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(line[1:], widths[1:], strict=True)]
        print("  ".join(cells).rstrip())


async def _show(store: MemoryStore, path: Database, args: argparse.Namespace) -> None:
    await require_session(store, args.session_id, str(path))
    report = await session_report(store, args.session_id, args.model)
    found = None
    if args.find is not None:
        found = await found_messages(store, args.session_id, args.find, args.limit)
    if args.json:
        extra = {} if found is None else {"found": found}
        _print_json({**report, "database": str(path), **extra})
        return
    print(_render_report(report, path))
    if found is not None:
        print(f"\nfound {printable(args.find, multiline=False)!r}")
        for hit in found or [{"text": "(no stored message matches)"}]:
            if "turn" not in hit:
                print(f"  {hit['text']}")
                continue
            turn = "-" if hit["turn"] is None else str(hit["turn"])
            where = f"turn {turn}  slot {printable(hit['slot'], multiline=False)}"
            print(f"  {where}  message {hit['index']}  {hit['role']}: {_one_line(hit['text'])}")


def _render_report(report: dict[str, Any], path: Database) -> str:
    lines = [
        f"session       {printable(report['session'], multiline=False)}",
        f"database      {path}",
        f"turns         {report['turn_index']}",
        f"current slot  {printable(report['current_slot'] or '-', multiline=False)}",
    ]
    cost_lines = [
        f"{printable(purpose, multiline=False)}: {format_tokens(usage['input_tokens'])} in "
        f"({format_tokens(usage['cached_input_tokens'])} cache reads, "
        f"{format_tokens(usage['cache_write_tokens'])} cache writes) + "
        f"{format_tokens(usage['output_tokens'])} out = "
        f"{format_tokens(usage['total_tokens'])} tokens"
        + ("" if usage["dollars"] is None else f"  {format_dollars(usage['dollars'])}")
        for purpose, usage in report["cost"].items()
    ]
    lines.append("cost          " + "\n              ".join(cost_lines))
    if report["model"] is not None:
        priced = "" if report["cost"]["total"]["dollars"] is not None else " (no list price)"
        lines.append(f"model         {printable(report['model'], multiline=False)}{priced}")
    for slot in report["slots"]:
        lines.append("")
        slot_id = printable(slot["id"], multiline=False)
        lines.append(f"slot {slot_id}" + (" (current)" if slot["current"] else ""))
        lines.append(f"  mode            {slot['mode']}")
        lines.append(f"  messages        {slot['messages']}")
        if slot["last_message_at"] is not None:
            lines.append(f"  first message   {slot['first_message_at']}")
            lines.append(f"  last message    {slot['last_message_at']}")
        if slot["models"]:
            models = ", ".join(printable(name, multiline=False) for name in slot["models"])
            lines.append(f"  models          {models}")
        if slot["mode"] == "focused":
            if slot["max_recent_messages"] is not None:
                recent = plural(slot["max_recent_messages"], "message")
                lines.append(f"  recent limit    {recent}")
            head = slot["summary_override"]
            lines.append(f"  summary_covers  {_covers(slot['summary_covers'], head)}")
            if head is not None:
                lines.append("  summary_override")
                lines.extend(_wrapped(printable(head), indent="    "))
    lines.append("")
    lines.append("data" if report["data"] else "data          (none)")
    for key, value in report["data"].items():
        lines.append(f"  {printable(key, multiline=False)}  {_preview(value)}")
    return "\n".join(lines)


def _covers(covers: int, head: str | None) -> str:
    if head is None:
        return "- (no summary_override yet)"
    if covers <= 0:
        return "no message yet"
    return f"messages 0..{covers - 1} (raw messages from index {covers} on are sent verbatim)"


def _wrapped(text: str, *, indent: str) -> list[str]:
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        hanging = indent + "  " if paragraph.startswith(("- ", "* ")) else indent
        lines.extend(
            textwrap.wrap(paragraph, width=88, initial_indent=indent, subsequent_indent=hanging)
            or [indent.rstrip()]
        )
    return lines


def _one_line(text: str) -> str:
    """``text`` on one printable line, cut to :data:`_VALUE_PREVIEW` characters."""
    line = printable(" ".join(text.split()), multiline=False)
    return line if len(line) <= _VALUE_PREVIEW else f"{line[: _VALUE_PREVIEW - 3]}..."


def _preview(value: Any) -> str:
    text = dumps(value)
    if len(text) <= _VALUE_PREVIEW:
        return text
    return f"{text[: _VALUE_PREVIEW - 3]}... ({len(text):,} characters of JSON)"


async def _export(store: MemoryStore, path: Database, args: argparse.Namespace) -> None:
    await require_session(store, args.session_id, str(path))
    async for record in export_records(store, args.session_id, args.slot):
        sys.stdout.write(dumps(record) + "\n")


def _print_json(data: Any) -> None:
    sys.stdout.write(dumps(data, indent=2) + "\n")


def _delete(args: argparse.Namespace) -> int:
    path = db_path(args)
    if not check_existing(path):
        raise CliError(f"no session {args.session_id!r} in {path} (the file is empty)")

    async def count() -> int:
        store = open_existing(path)
        try:
            await require_session(store, args.session_id, str(path))
            return len([record async for record in export_records(store, args.session_id)])
        finally:
            await store.close()

    async def delete() -> bool:
        store = open_existing(path)
        try:
            return await store.delete_session(args.session_id)
        finally:
            await store.close()

    messages = asyncio.run(count())
    shown = printable(repr(args.session_id), multiline=False)
    if not args.yes:
        if not stdin_is_interactive():
            raise CliError(f"deleting {shown} needs --yes when stdin is not a terminal", EXIT_USAGE)
        answer = input(f"delete session {shown} and its {plural(messages, 'message')}? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted", file=sys.stderr)
            return 1
    if not asyncio.run(delete()):
        raise CliError(f"no session {shown} in {path}")
    print(f"deleted session {shown} ({plural(messages, 'message')}) from {path}", file=sys.stderr)
    return 0
