"""``agentcore plugins``: the installed plugins and the hooks each implements, as JSON."""

from __future__ import annotations

import argparse
import json
import sys

from agentcore.plugins import create_plugin_manager, list_plugins


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``plugins`` subcommand to ``commands`` (argparse subparsers)."""
    parser = commands.add_parser(
        "plugins",
        help="list the installed plugins and their hooks (JSON)",
        description="Print the installed plugins as a JSON list of "
        "{name, hooks, distribution, version}: every plugin a new plugin manager "
        "registers, with the hooks it implements. Plugins blocked with "
        "AGENTCORE_DISABLED_PLUGINS, or all entry-point plugins when "
        "AGENTCORE_DISABLE_PLUGIN_AUTOLOAD=1, are not loaded and so not listed.",
    )
    parser.set_defaults(handler=run, parser=parser)


def run(args: argparse.Namespace) -> int:
    """Print the plugins as JSON on stdout."""
    infos = list_plugins(create_plugin_manager())
    json.dump([info.as_dict() for info in infos], sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
