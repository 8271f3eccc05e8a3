"""The quality bench's wait figures: which turns waited for a summary, and the table (no model)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the bench is not installed

from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig
from agentcore.testing import MockProvider
from bench.quality.waits import TimedProvider, percentile, timed_turn, wait_table


def test_percentiles_are_nearest_rank() -> None:
    values = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert percentile(values, 0.5) == 3.0
    assert percentile(values, 0.95) == 5.0
    assert percentile([], 0.5) == 0.0


async def test_the_turns_that_ran_a_summary_are_told_apart() -> None:
    autosummary = pytest.importorskip(
        "agentcore_autosummary", reason="the waits are those of autosummary's summaries"
    )
    summarizer = TimedProvider(MockProvider(responder=lambda request: "they discussed steps"))
    config = autosummary.SummaryConfig(
        max_context_tokens=2000,
        max_summary_tokens=200,
        trigger_token_ratio=0.1,
        keep_recent_tokens=40,
        debounce_turns=1,
        summary_provider=summarizer,
        retention_check="off",
    )
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=lambda request: "Noted, moving on."))
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(Agent("a"), "waits", bundle, FocusedConfig())
    waits = []
    for number in range(10):
        text = f"Step {number}: check the gateway, the queue depth and the logs of every worker."
        waits.append(await timed_turn(session, text, summarizer))
    await session.aclose()
    assert summarizer.intervals, "no summary ran"
    flagged = [wait for wait in waits if wait["summary"]]
    assert 0 < len(flagged) <= len(summarizer.intervals)
    assert not waits[0]["summary"]  # nothing to summarize yet
    assert all(wait["first_token"] <= wait["done"] for wait in waits)

    results = {
        "gen-project-101": {
            "agentcore": {"status": "ok", "waits": waits, "retained": ["a"], "facts": 3}
        }
    }
    [header, _, row, _] = wait_table(results, {"agentcore": "agentcore defaults"})
    assert header.startswith("| System | Turns | Summary turns |")
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:3] == ["agentcore defaults", "10", str(len(flagged))]
    assert cells[-1] == "1 / 3"
