"""A directive that prints the ``--help`` of an ``agentcore`` command, so the docs never drift.

Usage in a MyST page::

    ```{cli-help} sessions export
    ```
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

HELP_WIDTH = "88"


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise ValueError(f"{parser.prog} has no subcommand {name!r}")


def command_help(words: list[str]) -> str:
    """The ``--help`` text of ``agentcore WORDS...``, formatted at a fixed width."""
    from agentcore.cli import build_parser

    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        parser = build_parser()
        for word in words:
            parser = _subparser(parser, word)
        return parser.format_help()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


class CliHelp(SphinxDirective):
    """``cli-help [SUBCOMMAND...]``: a literal block with that command's ``--help``."""

    optional_arguments = 3
    has_content = False

    def run(self) -> list[nodes.Node]:
        """The literal block, or an error naming an unknown subcommand."""
        try:
            text = command_help(list(self.arguments))
        except ValueError as exc:
            raise self.error(str(exc)) from exc
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the ``cli-help`` directive."""
    app.add_directive("cli-help", CliHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
