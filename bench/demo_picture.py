"""The picture of the demo conversation: context tokens over its turns, summaries marked.

``python -m bench.demo_picture`` plays ``agentcore demo``'s conversation (its script, its
canned replies, its 1,500-token window and summary settings; offline, no model) through
:func:`agentcore_autosummary.demo.play`, and writes, in ``docs/_static/``:

- ``demo-context.json``: each turn's context (what the next request would carry) before
  and after the summary the turn wrote, and the window;
- ``demo-context.svg``: that series drawn, the window and the watermark as lines, each
  summary as a drop (needs matplotlib, which ``bench/run.sh`` installs in ``bench/.venv``).

README.md and docs/autosummary.md show the picture; ``tests/test_demo_picture.py`` plays
the demo again and fails when the series no longer matches the checked-in one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

STATIC = Path(__file__).resolve().parents[1] / "docs" / "_static"
SERIES = STATIC / "demo-context.json"
PICTURE = STATIC / "demo-context.svg"


async def demo_series() -> dict[str, Any]:
    """Play the demo as ``agentcore demo`` does; the context of each turn and the window."""
    from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, SqliteStore
    from agentcore.testing import MockProvider
    from agentcore_autosummary.cli.demo_command import (
        DEMO_MAX_CONTEXT_TOKENS,
        DEMO_SUMMARY_DEFAULTS,
    )
    from agentcore_autosummary.demo import DemoResponder, TurnReport, load_script, play

    script = load_script()
    settings = {**DEMO_SUMMARY_DEFAULTS, "max_context_tokens": DEMO_MAX_CONTEXT_TOKENS}
    turns: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="demo-picture-") as folder:
        store = SqliteStore(Path(folder) / "demo.db")
        builder = AgentBuilder().provider(MockProvider(responder=DemoResponder(script)))
        bundle = builder.store(store).setting("summary_config", settings).build()
        agent = Agent("demo", system_prompt=script.system_prompt)
        session = AgentSession(agent, "demo", bundle, FocusedConfig())
        try:
            async for event in play(session, script):
                if isinstance(event, TurnReport):
                    after = event.summary.context_tokens if event.summary else None
                    pruned = event.summary is not None and event.summary.pruned
                    turns.append(
                        {
                            "turn": event.number,
                            "context": event.context_tokens,
                            "after": after,
                            "pruned": pruned,
                        }
                    )
        finally:
            await store.close()
    ratio = settings["trigger_token_ratio"]
    return {
        "title": script.title,
        "window": DEMO_MAX_CONTEXT_TOKENS,
        "watermark": int(DEMO_MAX_CONTEXT_TOKENS * ratio),
        "turns": turns,
    }


def draw(series: dict[str, Any], path: Path) -> None:
    """``series`` as an SVG picture at ``path`` (matplotlib, text kept as text)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["svg.hashsalt"] = "agentcore-demo"  # the same file for the same data
    import matplotlib.pyplot as plt

    xs: list[float] = []
    ys: list[int] = []
    drops: list[tuple[int, int, int]] = []
    for row in series["turns"]:
        xs.append(row["turn"])
        ys.append(row["context"])
        if row["after"] is not None:
            xs.append(row["turn"])
            ys.append(row["after"])
            drops.append((row["turn"], row["context"], row["after"]))
    figure, axis = plt.subplots(figsize=(8, 3.4))
    axis.plot(xs, ys, color="#1f77b4", linewidth=1.6, label="context sent (tokens)")
    axis.axhline(series["window"], color="#d62728", linewidth=1.2, label="window")
    axis.axhline(
        series["watermark"], color="#7f7f7f", linewidth=1, linestyle="--", label="watermark"
    )
    for turn, before, after in drops:
        axis.annotate(
            "",
            xy=(turn, after),
            xytext=(turn, before),
            arrowprops={"arrowstyle": "->", "color": "#2ca02c", "linewidth": 1.2},
        )
    summaries = sum(1 for row in series["turns"] if row["after"] is not None and not row["pruned"])
    axis.plot([], [], color="#2ca02c", label=f"a summary ({summaries} in all)")
    axis.set_xlabel("turn")
    axis.set_ylabel("tokens")
    axis.set_ylim(0, series["window"] * 1.1)
    axis.set_xlim(0.5, max(xs) + 0.5)
    axis.set_title(f"agentcore demo: {series['title']}", fontsize=10)
    axis.legend(loc="lower right", fontsize=8, ncol=2, frameon=False)
    axis.grid(alpha=0.25)
    figure.tight_layout()
    figure.savefig(path, format="svg", metadata={"Date": None})
    plt.close(figure)


def main() -> None:
    """Play the demo, write the series and draw the picture."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-picture", action="store_true", help="write the series only")
    args = parser.parse_args()
    series = asyncio.run(demo_series())
    STATIC.mkdir(exist_ok=True)
    SERIES.write_text(json.dumps(series, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {SERIES} ({len(series['turns'])} turns)")
    if not args.no_picture:
        draw(series, PICTURE)
        print(f"wrote {PICTURE}")


if __name__ == "__main__":
    main()
