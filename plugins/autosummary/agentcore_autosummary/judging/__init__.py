"""Judging a summary before it is applied: the gate, the retention check and the quotes.

The text analysis they share (words, sentences, identifiers, subjects) is
:mod:`agentcore_autosummary.text`.
"""
