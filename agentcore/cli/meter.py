"""The context meter: how full the context window is, as text."""

from __future__ import annotations

BAR_WIDTH = 12
"""How many cells the meter's bar has."""


def format_tokens(count: int) -> str:
    """``count`` with thousands separators: ``1,134``."""
    return f"{count:,}"


def bar(used: int, limit: int, width: int = BAR_WIDTH) -> str:
    """A bar of ``width`` cells, ``#`` for the part of ``limit`` that ``used`` fills.

    A context over its limit gets a full bar followed by ``!``.
    """
    if limit <= 0:
        raise ValueError(f"limit must be > 0, got {limit!r}")
    filled = min(width, round(width * used / limit))
    if used > 0 and filled == 0:
        filled = 1
    marker = "!" if used > limit else ""
    return f"[{'#' * filled}{'-' * (width - filled)}]{marker}"


def meter(used: int, limit: int) -> str:
    """``context  1,134 / 1,500 tokens  [#########---]``."""
    width = len(format_tokens(limit))
    return (
        f"context  {format_tokens(used):>{width}} / {format_tokens(limit)} tokens  "
        f"{bar(used, limit)}"
    )


def summary_line(covers: int, tokens: int, context_after: int | None = None) -> str:
    """``summary written: covers messages 0..23 (412 tokens)``.

    :param covers: The index of the first raw message the summary does not cover.
    :param tokens: The summary's size.
    :param context_after: The context's size with the summary in place, if known.
    """
    size = f"({format_tokens(tokens)} tokens)"
    line = f"summary written: covers messages 0..{covers - 1} {size}"
    if covers <= 0:  # The full strategy leaves summary_covers where it was.
        line = f"summary written {size}"
    if context_after is not None:
        line += f"; context now {format_tokens(context_after)} tokens"
    return line
