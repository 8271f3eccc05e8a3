"""The core's compaction hook and AgentSession.compact, seen from a plugin and a user.

With autosummary installed, its own tests cover compacting and the summary hooks it adds
(plugins/autosummary/tests/test_summary_hooks.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from agentcore import CompactError, SummaryInfo, TurnContext, hookimpl


async def test_hook_compact_session(make_session: Any) -> None:
    seen: list[tuple[int, list[Any], str | None]] = []

    class Compactor:
        @hookimpl
        async def compact_session(self, ctx: TurnContext, instructions: str | None) -> Any:
            seen.append((ctx.turn_index, list(ctx.messages), instructions))
            return SummaryInfo(
                slot_id=ctx.slot.id,
                turn_index=ctx.turn_index,
                reason="compact",
                summary="short",
                start=0,
                end=2,
                covers=2,
                tokens_before=50,
                tokens_after=10,
            )

    session = make_session(plugins=(Compactor(),))
    await session.submit_turn("hello")
    result = await session.compact("keep names")
    assert result.summary == "short" and result.tokens_after == 10
    assert seen == [(1, [], "keep names")]


async def test_compact_without_a_compacting_plugin_is_a_clear_error(make_session: Any) -> None:
    session = make_session()
    with pytest.raises(CompactError, match="no installed plugin compacts"):
        await session.compact()
    with pytest.raises(ValueError, match="instructions must be a non-empty str"):
        await session.compact("  ")
