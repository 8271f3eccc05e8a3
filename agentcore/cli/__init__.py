"""The ``agentcore`` command line: ``demo``, ``chat``, ``plugins`` and ``sessions``.

The console script ``agentcore`` calls :func:`main`; ``python -m agentcore`` and
``python -m agentcore.cli`` do the same.
"""

from agentcore.cli.app import build_parser, main

__all__ = ["build_parser", "main"]
