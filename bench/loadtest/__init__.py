"""A load test of the stores: worker processes sharing one database, killed at random.

Not part of the test matrix; run ``python -m bench.loadtest --help``.
"""
