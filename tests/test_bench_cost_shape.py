"""The cost-shape replay (bench/quality/cost_shape.py): the quality bench's bill without a model."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the bench is not installed
pytest.importorskip("agentcore_autosummary", reason="the replay runs autosummary's sessions")

from agentcore.tokens import get_token_counter
from agentcore_autosummary.calling.segments import MERGE_INSTRUCTION
from bench.quality import cost_shape

TRANSCRIPT = " ".join(
    f"The service number {n} listens on port {8000 + n} in the staging cluster." for n in range(60)
)


def test_a_stand_in_summary_is_as_long_as_the_real_models_and_copies_no_sentence() -> None:
    counter = get_token_counter()
    summary = cost_shape.stand_in_reply(TRANSCRIPT, 256)
    merge = cost_shape.stand_in_reply(f"{MERGE_INSTRUCTION}\n\n{TRANSCRIPT}", 2000)
    tokens = counter.count_text(TRANSCRIPT)
    assert 0.5 * cost_shape.SUMMARY_SHARE * tokens <= counter.count_text(summary)
    assert counter.count_text(summary) <= cost_shape.SUMMARY_SHARE * tokens
    assert counter.count_text(merge) > 4 * counter.count_text(summary)
    assert counter.count_text(cost_shape.stand_in_reply(TRANSCRIPT, 40)) <= 40
    assert "The service number 0 listens" not in summary  # words reversed: no echo


def test_a_smaller_verbatim_tail_sends_fewer_tokens_and_the_table_totals_each_row() -> None:
    rows = cost_shape.measure(["gen-support-101"], ["agentcore"], ['{"keep_recent_tokens": 0}'])
    default, no_tail = rows
    assert default[1] == "agentcore" and no_tail[1] == '{"keep_recent_tokens": 0}'
    assert default[2] > 0, "no summary was made"
    assert no_tail[4] < default[4]  # turn tokens
    lines = cost_shape.table(rows)
    assert lines[-2].startswith("| all | agentcore | ")
    assert lines[-1].startswith('| all | `{"keep_recent_tokens": 0}` | ')


def test_the_bill_knows_a_recalled_turn_by_how_automatic_recall_opens_it() -> None:
    from agentcore_autosummary.recalling.automatic import RECALL_LABEL
    from bench import billing

    assert RECALL_LABEL.startswith(billing.RECALLED_OPENING)
