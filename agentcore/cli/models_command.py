"""``agentcore models default [NAME]``: the model ``chat`` uses without ``--model``."""

from __future__ import annotations

import argparse

from agentcore.cli.chat_command import DEFAULT_MODEL, model_name
from agentcore.cli.cli_config import (
    DEFAULT_MODEL_KEY,
    load_config,
    save_config,
    stored_default_model,
)
from agentcore.cli.console import note
from agentcore.cli.errors import EXIT_USAGE, CliError
from agentcore.cli.text import printable


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``models`` and its subcommand ``default`` to ``commands``."""
    models = commands.add_parser(
        "models",
        help="the default model of chat",
        description="Set or show the model 'agentcore chat' (and plugins' commands that "
        "take --model) use without --model.",
    )
    sub = models.add_subparsers(
        title="commands", dest="models_command", required=True, metavar="COMMAND"
    )
    default = sub.add_parser(
        "default",
        help="set or show the default model",
        description="With NAME, store NAME (PROVIDER:MODEL) as the default model in the "
        "CLI's config.json, next to its database; without, print the default model.",
    )
    default.add_argument("name", nargs="?", type=model_name, metavar="PROVIDER:MODEL")
    default.add_argument(
        "--unset", action="store_true", help="forget the stored default (back to the built-in)"
    )
    default.set_defaults(handler=run_default, parser=default)


def run_default(args: argparse.Namespace) -> int:
    """Store, forget or print the default model."""
    if args.unset and args.name is not None:
        raise CliError("give either PROVIDER:MODEL or --unset, not both", EXIT_USAGE)
    if args.name is None and not args.unset:
        print(stored_default_model() or DEFAULT_MODEL)
        return 0
    from agentcore.providers import available_providers

    settings = load_config()
    if args.unset:
        settings.pop(DEFAULT_MODEL_KEY, None)
    else:
        prefix = args.name.partition(":")[0].strip().lower()
        known = available_providers()
        if prefix not in known:
            names = ", ".join(sorted(known)) or "none"
            raise CliError(
                f"argument PROVIDER:MODEL: no provider is registered for {prefix!r} "
                f"(known: {names})",
                EXIT_USAGE,
            )
        settings[DEFAULT_MODEL_KEY] = args.name
    try:
        path = save_config(settings)
    except OSError as exc:
        raise CliError(f"cannot store the default model: {exc}") from None
    shown = stored_default_model() or DEFAULT_MODEL
    note(f"default model: {printable(shown, multiline=False)} (in {path})")
    return 0
