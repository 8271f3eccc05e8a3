"""The ``agentcore`` command line: ``demo``, ``chat``, ``plugins`` and ``sessions``.

The console script ``agentcore`` calls :func:`main`; ``python -m agentcore`` and
``python -m agentcore.cli`` do the same. The command line is imported when one of
its names is first used: every plugin manager registers its hooks
(:mod:`agentcore.cli.hookspecs`), and that must not load the rest of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentcore.cli.app import build_parser, main

__all__ = ["build_parser", "main"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from agentcore.cli import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
