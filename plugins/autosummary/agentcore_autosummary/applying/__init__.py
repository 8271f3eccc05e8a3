"""Applying a summary and fitting the request.

Storing it, the fence it is sent in, the window guard, the degraded request, the Full
mode, and the summary pruned to its tail between two summaries.
"""
