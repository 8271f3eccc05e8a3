"""The CLI hooks: a plugin adds a subcommand, chat options, a chat command and notes."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

import pytest

from agentcore import AgentBuilder, hookimpl
from agentcore.cli import build_parser, chat_loop
from agentcore.cli.chat_loop import ChatLoop, ChatOutput
from agentcore.cli.extensions import ChatCommand, ChatSetup, CommandGroup
from agentcore.plugins import create_plugin_manager
from agentcore.session_handle import SessionHandle


class _Greeter:
    """A plugin that adds ``agentcore greet``, ``agentcore sessions count`` and ``chat --shout``."""

    @hookimpl
    def register_commands(self, commands: CommandGroup, sessions: CommandGroup) -> None:
        greet = commands.add_parser("greet", help="say hello", description="Say hello.")
        greet.add_argument("name")
        greet.set_defaults(handler=lambda args: print(f"hello {args.name}") or 0, parser=greet)
        count = sessions.add_parser("count", help="count the sessions")
        count.set_defaults(handler=lambda args: 0, parser=count)

    @hookimpl
    def register_chat_options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--shout", action="store_true", help="shout the echo")

    @hookimpl
    def register_chat_commands(self, chat: ChatSetup) -> None:
        seen: list[str] = []

        async def echo(session: SessionHandle, argument: str | None) -> str:
            text = argument or ""
            seen.append(text)
            return text.upper() if chat.args.shout else text

        chat.add_command(ChatCommand("/echo", "repeat TEXT", echo, usage="TEXT"))
        chat.add_notes(lambda: [f"echoed {len(seen)}"] if seen else [])


def _parser() -> argparse.ArgumentParser:
    pm = create_plugin_manager(load_entrypoints=False, plugins=[_Greeter()])
    pm.set_blocked("autosummary")  # whatever is installed, only this test's plugin adds commands
    return build_parser(pm)


def test_hook_register_commands(capsys: pytest.CaptureFixture[str]) -> None:
    parser = _parser()
    args = parser.parse_args(["greet", "Ada"])
    assert args.handler(args) == 0
    assert capsys.readouterr().out == "hello Ada\n"
    assert parser.parse_args(["sessions", "count"]).handler is not None
    help_text = parser.format_help()
    assert "greet" in help_text and "say hello (from " in help_text


def test_hook_register_chat_options() -> None:
    args = _parser().parse_args(["chat", "--shout"])
    assert args.shout is True
    assert _parser().parse_args(["chat"]).shout is False


@pytest.fixture
def typed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """What the chat reads from stdin, line by line (then end of input)."""
    lines: list[str] = []

    async def read_line(prompt: str) -> str | None:
        return lines.pop(0) if lines else None

    monkeypatch.setattr(chat_loop, "read_line", read_line)
    monkeypatch.setattr(chat_loop, "stdin_is_interactive", lambda: False)
    yield lines


async def test_hook_register_chat_commands(
    make_session: Any, typed: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    parser = _parser()
    args = parser.parse_args(["chat", "--shout"])
    session = make_session()
    setup = ChatSetup(args=args, builder=AgentBuilder(), model=None)
    args.plugin_manager.hook.register_chat_commands(chat=setup)
    typed += ["/echo hi there", "/help", "/etc/hosts is not a command"]
    loop = ChatLoop(
        session,
        max_context_tokens=1000,
        output=ChatOutput(stream=False),
        commands=setup.commands,
        notes=setup.notes,
    )
    await loop.run()
    out, err = capsys.readouterr()
    assert "HI THERE" in err and "  -> echoed 1" in err
    assert "/echo TEXT" in err and "repeat TEXT" in err and "/quit" in err
    assert out == "ok\n"  # only the last line went to the model
    assert session.turn_index == 1


def test_a_chat_command_needs_a_slash_name_and_a_free_one() -> None:
    async def run(session: SessionHandle, argument: str | None) -> str:
        return ""

    with pytest.raises(ValueError, match="'/' and a word"):
        ChatCommand("echo", "no slash", run)
    setup = ChatSetup(args=argparse.Namespace(), builder=AgentBuilder(), model=None)
    with pytest.raises(ValueError, match="/help is defined twice"):
        setup.add_command(ChatCommand("/help", "mine", run))
