"""Benchmarks of agentcore autosummary against no compression and against peer libraries.

Run ``bash bench/run.sh``; see ``bench/README.md``. Nothing here is part of the test run.
"""
