"""The demo's picture (README.md, docs/autosummary.md) shows what the demo does now.

``python -m bench.demo_picture`` writes the picture and the series it draws; this plays the
demo again and compares the series, so a change to the demo, the plugin's defaults or the
token counts fails here until the picture is drawn again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.demo_picture import PICTURE, SERIES, demo_series

ROOT = Path(__file__).resolve().parents[1]


async def test_the_checked_in_series_is_what_the_demo_does_now() -> None:
    pytest.importorskip("agentcore_autosummary", reason="the demo is the autosummary plugin's")
    series = await demo_series()
    assert series == json.loads(SERIES.read_text("utf-8")), (
        "the demo changed: run `python -m bench.demo_picture` (in bench/.venv, which has "
        "matplotlib) and commit docs/_static/demo-context.json and .svg"
    )
    drops = [row for row in series["turns"] if row["after"] is not None]
    assert len(drops) >= 5
    assert all(row["after"] < row["context"] for row in drops)
    assert max(row["context"] for row in series["turns"]) <= series["window"]
    summaries = [row for row in drops if not row["pruned"]]  # a pruning is no summary
    guide = (ROOT / "docs" / "autosummary.md").read_text("utf-8")
    assert f"{len(summaries)} summaries in all" in guide, "docs/autosummary.md counts them"


def test_the_picture_is_shown_where_people_look() -> None:
    assert PICTURE.is_file() and PICTURE.read_text("utf-8").lstrip().startswith("<?xml")
    assert "](docs/_static/demo-context.svg)" in (ROOT / "README.md").read_text("utf-8")
    assert "](_static/demo-context.svg)" in (ROOT / "docs" / "autosummary.md").read_text("utf-8")
