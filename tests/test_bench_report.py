"""The evaluation set's tables (bench/quality/report.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the bench is not installed

from bench.quality.report import evaluation_totals


def _result(kept: int, right: int, dollars: float) -> dict[str, Any]:
    return {
        "status": "ok",
        "facts": 10,
        "retained": ["fact"] * kept,
        "stale": [],
        "contradicted": ["both"] if kept > 5 else [],
        "retracted_as_true": [],
        "answer_verdicts": {"right": ["fact"] * right, "stale": ["old"]},
        "dollars": {"openai": dollars, "anthropic": 2 * dollars},
    }


def test_the_totals_sum_the_seeds_and_leave_out_a_system_not_measured_on_all() -> None:
    results = {
        "gen-project-901": {"agentcore": _result(8, 9, 0.05), "langmem": _result(4, 3, 0.03)},
        "gen-project-902": {
            "agentcore": _result(6, 7, 0.04),
            "langmem": _result(5, 5, 0.03),
            "agentcore-structured": _result(10, 10, 0.01),
        },
        "gen-support-901": {"agentcore": _result(2, 2, 0.02), "langmem": _result(3, 4, 0.01)},
        "gen-support-902": {"agentcore": _result(2, 2, 0.02), "langmem": _result(3, 4, 0.01)},
        "gen-project-903": {"agentcore": _result(0, 0, 9.0)},  # another seed: not counted
    }
    lines = evaluation_totals(results, [901, 902])
    rows = {tuple(cell.strip() for cell in line.split("|")[1:3]): line for line in lines[2:]}
    assert set(rows) == {
        ("project (20)", "agentcore defaults (segments, 0.8)"),
        ("project (20)", "langmem"),
        ("support (20)", "agentcore defaults (segments, 0.8)"),
        ("support (20)", "langmem"),
        ("all (40)", "agentcore defaults (segments, 0.8)"),
        ("all (40)", "langmem"),
    }
    project = rows["project (20)", "agentcore defaults (segments, 0.8)"]
    assert "| **14** | **16** | 0 | 2 | 0 | 2 / 0 | 0.090 / 0.180 |" in project
    assert "| **0.060** / **0.120** |" in rows["project (20)", "langmem"]
    assert "| **18** | **20** |" in rows["all (40)", "agentcore defaults (segments, 0.8)"]
