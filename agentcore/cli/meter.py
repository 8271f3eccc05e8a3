"""The context meter: how full the context window is, measured and as text."""

from __future__ import annotations

from agentcore.session import AgentSession
from agentcore.slots import SlotConfig, render_context
from agentcore.tokens import count_tokens

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


def meter(used: int, limit: int | None) -> str:
    """``context  1,134 / 1,500 tokens  [#########---]``.

    With the window not known (``limit`` None): ``context  1,134 tokens  (window not known)``.
    """
    if limit is None:
        return f"context  {format_tokens(used)} tokens  (window not known)"
    width = len(format_tokens(limit))
    return (
        f"context  {format_tokens(used):>{width}} / {format_tokens(limit)} tokens  "
        f"{bar(used, limit)}"
    )


async def context_tokens(
    session: AgentSession, *, as_config: SlotConfig | None = None, model: str | None = None
) -> int:
    """The tokens the next request of the current slot carries (before the new user message).

    :param session: The session to measure.
    :param as_config: Measure as if the slot had this config (for instance the
        config it had before a plugin rewrote it) instead of its own.
    :param model: The model whose tokenizer counts (None: ``cl100k_base``).
    """
    if as_config is None:
        return count_tokens(await session.load_messages(), model)
    slot = await session.get_slot()
    rendered = render_context(slot.system_prompt, await session.history(), as_config)
    return count_tokens(rendered, model)
