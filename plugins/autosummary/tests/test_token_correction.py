"""The token correction autosummary learns from servers' usage, and the counts it corrects."""

from __future__ import annotations

import pytest

from agentcore import Message, ToolSpec
from agentcore.tokens import TOKENS_PER_TOOL, get_token_counter
from agentcore_autosummary.deciding.token_correction import (
    CORRECTION_MARGIN,
    TokenCorrection,
    counted_request,
    counted_request_async,
)


def test_request_count_includes_tool_definitions() -> None:
    counter = get_token_counter("gpt-4o-mini")
    messages = [Message.user("hello")]
    tool = ToolSpec("search", "Search the web.", {"type": "object", "properties": {}})
    with_tool = counted_request(counter, messages, [tool])
    assert with_tool > counted_request(counter, messages) + TOKENS_PER_TOOL


def test_correction_learns_the_highest_ratio_and_stays_on_the_high_side() -> None:
    correction = TokenCorrection()
    assert correction.apply("m", 1000) == 1000
    assert correction.observe("m", 10, 100) is correction  # too small to teach anything
    correction = correction.observe("m", 1000, 1300).observe("m", 1000, 1200)
    assert correction.ratios == {"m": 1.3}
    assert correction.factor("m") == pytest.approx(1.3 * (1 + CORRECTION_MARGIN))
    assert correction.apply("m", 1000) >= 1300
    assert correction.unapply("m", correction.apply("m", 1000)) <= 1000
    # a server that counts fewer never makes budgets looser than the local count
    assert TokenCorrection().observe("n", 1000, 500).factor("n") == 1.0
    assert TokenCorrection().observe("n", 1000, 1000).ratios == {}
    assert correction.factor(None) == 1.0
    assert TokenCorrection.from_json(correction.to_json()) == correction
    assert TokenCorrection.from_json(None) == TokenCorrection()
    with pytest.raises(ValueError, match="ratio"):
        TokenCorrection.from_json({"ratios": {"m": -1}})


async def test_the_async_count_is_the_same_count() -> None:
    counter = get_token_counter("gpt-4o-mini")
    messages = [Message.user("hello " * 500), Message.assistant("fine")]
    tool = ToolSpec("search", "Search the web.", {"type": "object", "properties": {}})
    assert await counted_request_async(counter, messages, [tool]) == counted_request(
        counter, messages, [tool]
    )
