"""Token counts of tool definitions, kept per counter so each definition is counted once.

:meth:`TokenCounter.count_tools <agentcore.tokens.TokenCounter.count_tools>`
reads them from a :class:`ToolTokenCounts`: by spec object (tool specs are
immutable, and a registry hands out the same objects on every call) and by the
definition's JSON, at most :data:`TOOL_CACHE_SIZE` of each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from agentcore._token_text import tool_json

if TYPE_CHECKING:
    from agentcore.llm import ToolSpec

TOKENS_PER_TOOL = 8
"""Tokens each tool definition costs besides its JSON (``agentcore.tokens.TOKENS_PER_TOOL``)."""

TOOL_CACHE_SIZE = 1024
"""Tool-definition counts kept (by spec, and by JSON); the cache is emptied when full."""


class ToolTokenCounts:
    """One counter's counts of tool definitions, by spec object and by JSON."""

    def __init__(self) -> None:
        # id(spec) -> (spec, count): the spec is held, so its id is not reused meanwhile.
        self._by_spec: dict[int, tuple[ToolSpec, int]] = {}
        self._by_json: dict[str, int] = {}

    def count(self, tools: Sequence[ToolSpec], count_text: Callable[[str], int]) -> int:
        """The tokens the definitions of ``tools`` cost, a new one counted by ``count_text``.

        Each tool costs :data:`TOKENS_PER_TOOL` plus the tokens of its definition
        as JSON; a definition kept already (the same spec object, or the same
        JSON) is not counted again.
        """
        total = 0
        cache = self._by_spec
        for tool in tools:
            kept = cache.get(id(tool))
            if kept is not None and kept[0] is tool:
                total += kept[1]
                continue
            count = self._count_tool(tool, count_text)
            if len(cache) >= TOOL_CACHE_SIZE:
                cache.clear()
            cache[id(tool)] = (tool, count)
            total += count
        return total

    def _count_tool(self, tool: ToolSpec, count_text: Callable[[str], int]) -> int:
        """One definition's count, kept by its JSON."""
        text = tool_json(tool)
        count = self._by_json.get(text)
        if count is None:
            count = TOKENS_PER_TOOL + count_text(text)
            if len(self._by_json) >= TOOL_CACHE_SIZE:
                self._by_json.clear()
            self._by_json[text] = count
        return count
