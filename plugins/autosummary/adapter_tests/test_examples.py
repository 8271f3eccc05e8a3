"""The example scripts in docs/examples keep 300 turns inside a 2,048-token window.

Each script's figures are also the ones docs/compactor.md quotes in its table ("The
examples, measured"): a figure that changes fails here, naming the row and the column.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "docs" / "examples"
COMPACTOR_DOC = ROOT / "docs" / "compactor.md"

COLUMNS = {
    "model requests": "model requests",
    "summary requests": "summary requests",
    "largest request": "largest request",
    "over 2,048": "requests over the window",
}
"""The table's figure columns, each with the figure of the script it shows."""


def _table_row(script: str) -> dict[str, str]:
    """The cells of ``script``'s row in docs/compactor.md's table, by column."""
    lines = COMPACTOR_DOC.read_text("utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| script |"))
    names = [cell.strip() for cell in lines[header].strip("|").split("|")]
    for line in lines[header + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] == f"`{script}`":
            return dict(zip(names, cells, strict=True))
    raise AssertionError(f"docs/compactor.md's table has no row for `{script}`")


def _stale_figures(script: str, figures: dict[str, int]) -> list[str]:
    """The figures ``script``'s row of docs/compactor.md quotes otherwise than it gives."""
    row = _table_row(script)
    stale = []
    for column, figure in COLUMNS.items():
        if row[column] != f"{figures[figure]:,}":
            stale.append(
                f"{column}: the doc says {row[column]}, the script gives {figures[figure]:,}"
            )
    for name, value in figures.items():  # "(898 stored items)" in the description
        quoted = re.search(rf"\(([\d,]+) {re.escape(name)}\)", row["what it shows"])
        if quoted and quoted.group(1) != f"{value:,}":
            stale.append(f"{name}: the doc says {quoted.group(1)}, the script gives {value:,}")
    intro = re.search(r"run a ([\d,]+)-turn conversation", COMPACTOR_DOC.read_text("utf-8"))
    if intro is None or intro.group(1) != f"{figures['turns']:,}":
        stale.append(
            f"the text above the table should say a {figures['turns']:,}-turn conversation"
        )
    return stale


@pytest.mark.parametrize(
    "script", ["compact_openai_dicts.py", "openai_agents_session.py", "langgraph_hook.py"]
)
def test_example_keeps_300_turns_inside_the_window(script: str) -> None:
    main = runpy.run_path(str(EXAMPLES / script))["main"]
    figures = asyncio.run(main()) if inspect.iscoroutinefunction(main) else main()
    print(script, figures)
    assert figures["turns"] == 300
    assert figures["model requests"] >= 300
    assert figures["summary requests"] >= 10  # summarized, not only left out
    assert figures["largest request"] <= 2048
    assert figures["requests over the window"] == 0
    stale = _stale_figures(script, figures)
    row = " | ".join(f"{figures[figure]:,}" for figure in COLUMNS.values())
    assert not stale, (
        f"docs/compactor.md, the table's row for `{script}` is stale:\n  "
        + "\n  ".join(stale)
        + f"\nits figures now: | {row} |"
    )
