"""Making a summary.

The one attempt path, its calls, its retries, the segments strategy.
"""
