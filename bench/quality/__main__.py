"""``python -m bench.quality``: the quality bench's command line."""

from bench.quality.run import main

raise SystemExit(main())
