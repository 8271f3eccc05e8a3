"""``agentcore chat``: an interactive chat with a model chosen by name."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import secrets
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import pluggy

from agentcore.agent import Agent
from agentcore.builder import AgentBuilder
from agentcore.cli.arg_types import non_negative_int, positive_float, positive_int
from agentcore.cli.chat_commands import QUIT_COMMAND
from agentcore.cli.chat_input import BLOCK_MARKER, join_piped_text
from agentcore.cli.chat_loop import ChatLoop, ChatOutput
from agentcore.cli.cli_config import stored_default_model
from agentcore.cli.console import line_editing, note, stderr_is_terminal, stdin_is_interactive
from agentcore.cli.database import Database, add_db_argument, db_path, open_or_create
from agentcore.cli.error_hints import API_KEY_ENVS as API_KEY_ENVS
from agentcore.cli.error_hints import explain_llm_error as explain_llm_error
from agentcore.cli.errors import EXIT_USAGE, CliError
from agentcore.cli.extensions import ChatSetup, CliHooks
from agentcore.cli.last_session import last_session, remember_session
from agentcore.cli.paths import HISTORY_FILENAME, data_dir
from agentcore.cli.text import printable
from agentcore.cli.turn_usage import TurnUsage
from agentcore.cli.window import ChatWindow
from agentcore.errors import ConfigError, LlmError
from agentcore.llm import LlmProvider
from agentcore.session import AgentSession
from agentcore.slots import FocusedConfig

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "openai:gpt-4o-mini"
"""The model ``chat`` talks to without ``--model``."""

DEFAULT_SESSION = "chat"
"""The session an interactive ``chat`` uses without ``--session`` or ``--continue``."""

ONE_SHOT_SESSION_PREFIX = "chat-"
"""How the id of the new session of each one-shot prompt (``-p``) begins."""

DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant."
"""The system prompt of a new chat session without ``--system``."""

DEFAULT_MAX_CONTEXT_TOKENS = 32_000
"""A window for plugins' commands that need one without ``--max-context-tokens``;
``chat`` finds its window instead (:mod:`agentcore.cli.window`)."""

BASE_URL_ENVS = {
    "openai": "OPENAI_BASE_URL",
    "openai-responses": "OPENAI_BASE_URL",
    "anthropic": "ANTHROPIC_BASE_URL",
}
"""The variable that sets the API root of each built-in provider."""

KEY_OPTIONAL_WITH_BASE_URL = {"openai", "openai-responses"}
"""Providers whose servers other than the default (Ollama, vLLM...) may need no key."""


def model_name(text: str) -> str:
    """An argparse type: a provider name of the form ``prefix:model``."""
    prefix, _, model = text.partition(":")
    if not prefix.strip() or not model.strip():
        raise argparse.ArgumentTypeError(
            f"expected PROVIDER:MODEL such as {DEFAULT_MODEL}, got {text!r}"
        )
    return text


def session_id_text(text: str) -> str:
    """An argparse type: a session id, which must not be empty."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the session id must not be empty")
    return text


PROVIDER_OPTION_FLAGS = {
    "base_url": "--base-url",
    "timeout": "--timeout",
    "max_retries": "--max-retries",
    "model": "--model",
}
"""The flag behind each provider option, to word the provider's errors in flags."""

_PROVIDER_PREFIX = re.compile(r"^\w+Provider: ")
_OPTION = re.compile(r"\b(" + "|".join(PROVIDER_OPTION_FLAGS) + r")\b(?= must)")


def explain_provider_error(message: str) -> str:
    """A provider's configuration error in terms of the flags.

    ``OpenAIProvider: base_url must be an http:// or https:// URL`` becomes
    ``argument --base-url: must be an http:// or https:// URL``.
    """
    text = _PROVIDER_PREFIX.sub("", message.strip())
    match = _OPTION.search(text)
    if match is None:
        return text
    flag = PROVIDER_OPTION_FLAGS[match.group(1)]
    return f"argument {flag}: " + text[match.end() :].lstrip()


def add_provider_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options that choose and reach the model: ``--model``, ``--base-url``...

    :func:`provider_from_args` builds the provider they name.
    """
    parser.add_argument(
        "-m",
        "--model",
        type=model_name,
        default=stored_default_model() or DEFAULT_MODEL,
        metavar="PROVIDER:MODEL",
        help="the model, as PROVIDER:MODEL (default: %(default)s, set with "
        "'agentcore models default'; e.g. "
        "anthropic:claude-3-5-haiku-latest, openai-responses:gpt-5-mini for OpenAI's "
        "Responses API, or openai:llama3.1 with --base-url for Ollama)",
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="the API root of an OpenAI-compatible server (for openai: and "
        "openai-responses: models), e.g. http://localhost:11434/v1 for Ollama or "
        "http://localhost:8000/v1 for vLLM",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        metavar="SECONDS",
        help="how long to wait for the server (default: the provider's)",
    )
    parser.add_argument(
        "--max-retries",
        type=non_negative_int,
        metavar="N",
        help="retries after a rate limit, a server error or a connection error "
        "(default: the provider's)",
    )


_SESSION_LIKE = re.compile(r"[\w.:-]{1,64}")
"""A ``-s`` value of this shape was most likely meant as a session id (its old meaning)."""


class SystemPromptAction(argparse.Action):
    """``-s``/``--system``: the system prompt, as in ``llm``.

    ``-s`` chose the session before; a ``-s`` value that reads like a session
    id (one word, no spaces) gets a note on stderr naming ``--cid``/``--session``,
    so an old habit is not silently taken for a system prompt.
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        """Store the prompt; note a ``-s`` value that reads like a session id."""
        if option_string == "-s" and isinstance(values, str) and _SESSION_LIKE.fullmatch(values):
            note(
                f"agentcore chat: -s is the system prompt (as in llm), so {values!r} is the "
                f"system prompt; to choose the session, use --cid {values} (or --session)"
            )
        setattr(namespace, self.dest, values)


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], pm: pluggy.PluginManager
) -> None:
    """Add the ``chat`` subcommand to ``commands``, with the options ``pm``'s plugins add."""
    parser = commands.add_parser(
        "chat",
        help="chat with a model, keeping the session in SQLite",
        description="Chat with a model. Each line of stdin is one turn (a line ending in \\ "
        f"continues on the next; a {BLOCK_MARKER} line opens a block that the next "
        f"{BLOCK_MARKER} line closes); the reply streams to stdout, and the context meter "
        f"and the plugins' notes go to stderr. '{QUIT_COMMAND}' or end of input (Ctrl-D) ends "
        "the chat. With a PROMPT (or -p), one turn is run and the command exits. The "
        "session is stored and resumes when you chat again with the same --cid and --db.",
    )
    parser.add_argument(
        "prompt",
        nargs="?",
        metavar="PROMPT",
        help="run this one turn, print the reply and exit; text piped on stdin is "
        "added after the prompt and a blank line",
    )
    parser.add_argument(
        "-p",
        "--prompt",
        dest="prompt_option",
        metavar="PROMPT",
        help="the same as the PROMPT argument",
    )
    add_provider_arguments(parser)
    parser.add_argument(
        "-s",
        "--system",
        default=DEFAULT_SYSTEM_PROMPT,
        action=SystemPromptAction,
        metavar="PROMPT",
        help="system prompt to use (default: %(default)r)",
    )
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_last",
        action="store_true",
        help="continue the most recent conversation (the session last chatted in with this --db)",
    )
    parser.add_argument(
        "--cid",
        "--conversation",
        "--session",
        dest="session",
        type=session_id_text,
        metavar="ID",
        help="continue the conversation with the given ID (a new ID starts one; default: "
        f"a new session for each one-shot prompt, {DEFAULT_SESSION!r} for an interactive chat)",
    )
    add_db_argument(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print each turn as one JSON object on stdout: session, turn, reply, usage",
    )
    parser.add_argument(
        "--no-stream",
        action="store_true",
        help="ask for the whole reply at once and print it when it is complete",
    )
    parser.add_argument(
        "--max-context-tokens",
        type=positive_int,
        metavar="N",
        help="the context window the meter (and plugins) measure against (default: "
        "discovered for the model, else learned from the server's first refusal for length)",
    )
    CliHooks(pm).register_chat_options(parser=parser)
    parser.set_defaults(handler=run, parser=parser, plugin_manager=pm)


def run(args: argparse.Namespace) -> int:
    """Chat until ``/quit`` or end of input; provider errors end it with exit code 1."""
    if args.prompt is not None and args.prompt_option is not None:
        raise CliError("give the prompt either as PROMPT or with -p/--prompt, not both", EXIT_USAGE)
    if args.prompt_option is not None:
        args.prompt = args.prompt_option
    if args.prompt is not None and not args.prompt.strip():
        raise CliError("argument PROMPT: the prompt is empty", EXIT_USAGE)
    if args.continue_last and args.session is not None:
        raise CliError("give either --continue or --session, not both", EXIT_USAGE)
    check_api_key(args)
    if args.prompt is not None and sys.stdin is not None and not stdin_is_interactive():
        args.prompt = join_piped_text(args.prompt, sys.stdin.read())
    provider = provider_from_args(args)
    asyncio.run(_chat(args, provider))
    return 0


def check_api_key(args: argparse.Namespace) -> None:
    """Fail before anything else when the provider's API key is surely missing."""
    prefix = args.model.partition(":")[0].strip().lower()
    env = API_KEY_ENVS.get(prefix)
    if env is None or os.environ.get(env, "").strip():
        return
    base_url_env = BASE_URL_ENVS.get(prefix, "")
    custom_server = args.base_url is not None or bool(base_url_env and os.environ.get(base_url_env))
    if prefix in KEY_OPTIONAL_WITH_BASE_URL and custom_server:
        return  # A local server (Ollama, vLLM...) may need no key.
    also = " (or pass --base-url for a local server that needs no key)"
    raise CliError(
        f"no API key for {prefix}: set the environment variable {env}, for example "
        f"'export {env}=...'" + (also if prefix in KEY_OPTIONAL_WITH_BASE_URL else "")
    )


async def _chat(args: argparse.Namespace, provider: LlmProvider) -> None:
    prefix, _, model = args.model.partition(":")
    path = db_path(args)
    session_id = _session_id(args, path)
    one_shot = args.prompt is not None
    interactive = stdin_is_interactive() and not one_shot
    window = ChatWindow(args.max_context_tokens, model)
    try:
        store = open_or_create(path)
        try:
            turn_usage = TurnUsage()
            builder = AgentBuilder().provider(provider).store(store)
            builder.plugin(turn_usage).plugin(window)
            setup = ChatSetup(args=args, builder=builder, model=model)
            CliHooks(args.plugin_manager).register_chat_commands(chat=setup)
            try:
                bundle = builder.build()
            except ConfigError as exc:
                raise CliError(str(exc), EXIT_USAGE) from None
            agent = Agent("chat", system_prompt=args.system)
            session = AgentSession(agent, session_id, bundle, FocusedConfig())
            remember_session(path, session_id)
            await window.load(session, provider)
            logger.info("chatting in the session %r of %s", session_id, path)
            output = ChatOutput(
                stream=not args.no_stream,
                json=args.json,
                meter=not (one_shot or args.json),
                indicator=stderr_is_terminal() and not args.json,
            )
            chat = ChatLoop(
                session,
                window=window,
                model_name=args.model,
                model=model,
                output=output,
                commands=setup.commands,
                notes=setup.notes,
                turn_usage=turn_usage,
            )
            if one_shot:
                await chat.one_shot(args.prompt)
                return
            if interactive:
                note(
                    f"chatting with {printable(args.model)}, session "
                    f"'{printable(session_id, multiline=False)}' in {path}; "
                    f"type /help for commands, {QUIT_COMMAND} or Ctrl-D to end"
                )
            with line_editing(data_dir() / HISTORY_FILENAME):
                await chat.run()
        finally:
            await store.close()
    except LlmError as exc:
        raise CliError(explain_llm_error(exc, prefix, window=window.tokens)) from None
    finally:
        aclose = getattr(provider, "aclose", None)
        if aclose is not None:
            await aclose()


def new_session_id(now: datetime | None = None) -> str:
    """A fresh session id for a one-shot prompt: ``chat-20261201-174838-3f9a`` (UTC time).

    :param now: The time in the id (default: now).
    """
    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return f"{ONE_SHOT_SESSION_PREFIX}{when:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def _session_id(args: argparse.Namespace, path: Database) -> str:
    """The session to chat in: ``--session``, the last one, a new one, or the default.

    ``--continue`` names the last one; a one-shot prompt gets a new one.
    """
    if not args.continue_last:
        if args.session is not None:
            return str(args.session)
        return new_session_id() if args.prompt is not None else DEFAULT_SESSION
    last = last_session(path)
    if last is None:
        raise CliError(
            f"no earlier chat to continue with the database {path}; "
            "start one with 'agentcore chat', or pass --session ID"
        )
    return last


def provider_from_args(args: argparse.Namespace) -> LlmProvider:
    """The provider ``--model`` names, with the options of :func:`add_provider_arguments`."""
    from agentcore.providers import available_providers, get_provider

    prefix = args.model.partition(":")[0].strip().lower()
    known = available_providers()
    if prefix not in known:
        names = ", ".join(sorted(known)) or "none"
        raise CliError(
            f"argument --model: no provider is registered for {prefix!r} (known: {names})",
            EXIT_USAGE,
        )
    options: dict[str, Any] = {}
    if args.base_url is not None:
        options["base_url"] = args.base_url
    if args.timeout is not None:
        options["timeout"] = args.timeout
    if args.max_retries is not None:
        options["max_retries"] = args.max_retries
    try:
        return get_provider(args.model, **options)
    except ConfigError as exc:
        raise CliError(explain_provider_error(str(exc)), EXIT_USAGE) from None
