"""``python -m bench``: run every benchmark and write ``bench/results/``."""

from bench.run import main

raise SystemExit(main())
