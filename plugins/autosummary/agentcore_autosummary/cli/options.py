"""The summary flags of ``chat``, ``demo`` and ``sessions compact``, and what they turn into."""

from __future__ import annotations

import argparse
import re
from typing import Any

from agentcore.cli.plugin_api import EXIT_USAGE, CliError, positive_int, ratio

SUMMARY_SETTING = "summary_config"
"""The builder setting the autosummary plugin owns."""

FLAGS = {
    "max_context_tokens": "--max-context-tokens",
    "trigger_token_ratio": "--trigger-ratio",
    "trigger": "--trigger",
    "strategy": "--strategy",
    "mode": "--summary-mode",
    "summary_model": "--summary-model",
    "summary_provider": "--summary-provider",
    "summary_prompt": "--summary-prompt",
}
"""The flag that sets each ``SummaryConfig`` field, for error messages."""

TRIGGERS = ("context", "cumulative")
STRATEGIES = ("segments", "incremental", "full")
MODES = ("inline", "background")


def add_summary_arguments(
    parser: argparse.ArgumentParser, *, max_context_tokens: int | None
) -> None:
    """Add the summary flags to ``parser``.

    :param parser: A subcommand's parser.
    :param max_context_tokens: The default of ``--max-context-tokens``; None when
        the command has that flag already (``chat``, for its meter).
    """
    group = parser.add_argument_group("summaries", "settings of the autosummary plugin")
    group.add_argument(
        "--no-summary",
        action="store_true",
        help="do not summarize, even when the autosummary plugin is installed",
    )
    if max_context_tokens is not None:
        group.add_argument(
            "--max-context-tokens",
            type=positive_int,
            default=max_context_tokens,
            metavar="N",
            help="the context window the meter and the summaries aim at (default: %(default)s)",
        )
    group.add_argument(
        "--trigger-ratio",
        type=ratio,
        metavar="R",
        help="summarize when the context passes this share of the window (plugin default: 0.8)",
    )
    group.add_argument(
        "--trigger",
        choices=TRIGGERS,
        help="what is measured against the window: the context sent, or the tokens "
        "added since the last summary (plugin default: context)",
    )
    group.add_argument(
        "--strategy",
        choices=STRATEGIES,
        help="summarize the new messages alone as a part of the summary, extend the previous "
        "summary, or summarize everything again (plugin default: segments)",
    )
    group.add_argument(
        "--summary-mode",
        choices=MODES,
        help="summarize before the turn returns, or in the background (plugin default: inline)",
    )
    group.add_argument(
        "--summary-model",
        metavar="MODEL",
        help="the model that writes summaries (plugin default: the chat model)",
    )
    group.add_argument(
        "--summary-provider",
        metavar="PREFIX:MODEL",
        help="another provider for summaries, by name, such as openai:gpt-4o-mini or "
        "ollama:qwen2.5 (its key and URL from the environment, see the providers guide; "
        "plugin default: the chat provider)",
    )
    group.add_argument(
        "--summary-prompt",
        metavar="PROMPT",
        help="the prompt that asks for a summary, with {messages} where the conversation "
        "goes, or @FILE to read it from a file (plugin default: a prompt in Chinese that "
        "asks for the summary in the conversation's language)",
    )


def summary_settings(args: argparse.Namespace, **defaults: Any) -> dict[str, Any] | None:
    """The ``summary_config`` dict the flags in ``args`` ask for, None with ``--no-summary``.

    :param args: Parsed arguments of a parser given :func:`add_summary_arguments`.
    :param defaults: Fields that the command sets unless a flag overrides them.
    """
    if args.no_summary:
        return None
    settings: dict[str, Any] = {**defaults, "max_context_tokens": args.max_context_tokens}
    flags = {
        "trigger_token_ratio": args.trigger_ratio,
        "trigger": args.trigger,
        "strategy": args.strategy,
        "mode": args.summary_mode,
        "summary_model": args.summary_model,
        "summary_provider": args.summary_provider,
        "summary_prompt": _prompt_text(args.summary_prompt),
    }
    settings.update({name: value for name, value in flags.items() if value is not None})
    return settings


def _prompt_text(given: str | None) -> str | None:
    if given is None or not given.startswith("@"):
        return given
    try:
        with open(given[1:], encoding="utf-8") as file:
            return file.read()
    except OSError as exc:
        raise CliError(
            f"argument --summary-prompt: cannot read {given[1:]}: {exc.strerror}", EXIT_USAGE
        ) from None
    except UnicodeDecodeError:
        raise CliError(
            f"argument --summary-prompt: {given[1:]} is not UTF-8 text", EXIT_USAGE
        ) from None


_SETTING_PREFIX = re.compile(r"^invalid value for the setting '" + SUMMARY_SETTING + "': ")
_CATTRS_PATH = re.compile(r" @ \$\S*$")
_FIELD = re.compile(r"\b(" + "|".join(FLAGS) + r")\b(?= must)")


def explain_settings_error(message: str) -> str:
    """A ``summary_config`` error from the builder, reworded in terms of the flags.

    ``invalid value for the setting 'summary_config': summary_model must be a
    non-empty str`` becomes ``invalid summary options: --summary-model must be a
    non-empty str``.
    """
    text = _CATTRS_PATH.sub("", message.strip())
    if not _SETTING_PREFIX.match(text):
        return text
    text = _SETTING_PREFIX.sub("invalid summary options: ", text)
    return _FIELD.sub(lambda match: FLAGS[match.group(1)], text)
