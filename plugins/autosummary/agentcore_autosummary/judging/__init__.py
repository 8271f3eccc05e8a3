"""Judging a summary before it is applied.

The gate, and the text analysis it and the quotes use (identifiers, sentences,
subjects).
"""
