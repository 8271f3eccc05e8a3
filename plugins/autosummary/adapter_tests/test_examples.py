"""The example scripts in docs/examples keep 300 turns inside a 2,048-token window."""

from __future__ import annotations

import asyncio
import inspect
import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "docs" / "examples"


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
