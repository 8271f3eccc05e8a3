"""The compactor.

The plugin's summaries over a message list an app keeps itself, without a session.
"""
