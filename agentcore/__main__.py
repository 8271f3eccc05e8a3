"""``python -m agentcore``: the ``agentcore`` command."""

from agentcore.cli.app import main

raise SystemExit(main())
