"""``python -m agentcore.cli``: the ``agentcore`` command."""

from agentcore.cli.app import main

raise SystemExit(main())
