"""The ``agentcore`` command line: ``demo``, ``chat``, ``plugins`` and ``sessions``.

The console script ``agentcore`` calls :func:`main`; ``python -m agentcore.cli``
does the same.
"""

from agentcore.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
