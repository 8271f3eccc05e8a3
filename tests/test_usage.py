from __future__ import annotations

import pytest

from agentcore import CostTracker, Usage


def test_usage_adds_and_totals() -> None:
    usage = Usage.from_input_output(10, 5) + Usage(1, 2, cached_input_tokens=1)
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (11, 7, 18)
    assert usage.cached_input_tokens == 1


def test_usage_rejects_negative_counts() -> None:
    with pytest.raises(ValueError):
        Usage(-1, 0)


def test_cost_tracker_breaks_down_by_purpose() -> None:
    cost = CostTracker()
    cost.add(Usage(100, 10))
    cost.add(Usage(50, 5), purpose="turn")
    cost.add(Usage(30, 20), purpose="summary")
    assert cost.total() == Usage(180, 35)
    assert cost.total("turn") == Usage(150, 15)
    assert cost.breakdown() == {"turn": Usage(150, 15), "summary": Usage(30, 20)}
    assert cost.total("nothing") == Usage()
    with pytest.raises(TypeError):
        cost.add(5)  # type: ignore[arg-type]
