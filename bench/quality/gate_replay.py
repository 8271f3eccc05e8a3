"""Replay saved summaries through the gate's identifier check, without a model.

``python -m bench.quality.gate_replay [quality.json ...]`` reads the summary
requests a quality run saved (``bench/results/quality.json`` by default), takes
every request that carried a previous summary (the entry ``System: [label] ...``
at the head of its fenced conversation) and a reply, and prints, per request,
the identifiers the previous summary held, those the reply kept and lost
(:func:`agentcore_autosummary.judging.superseding.compare_identifiers`) and whether
the gate's ``lost`` rule would refuse it at several thresholds. It is how the
thresholds in ``agentcore_autosummary.judging.gate`` were chosen: run it on a run's
results to see what a threshold would have refused.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from agentcore_autosummary.judging.superseding import compare_identifiers
from agentcore_autosummary.text.identifiers import find_identifiers

HERE = Path(__file__).resolve().parent.parent
_FENCE = re.compile(r"(`{3,})text\n(.*)\n\1", re.DOTALL)
_ENTRY = re.compile(r"\n\n(?=(?:User|Assistant|System|Tool Result|Tool Error)[^\n:]*:)")
_PREVIOUS = re.compile(r"^System: \[[^\]\n]*\] ")
THRESHOLDS = ((2, 1 / 3), (2, 1 / 2), (3, 1 / 3), (3, 1 / 2), (4, 1 / 2))
"""(fewest lost, share of the held ones) pairs the replay reports."""


def split_request(content: str) -> tuple[str | None, str]:
    """The previous summary in a summary request's conversation, and the rest."""
    fenced = _FENCE.search(content)
    if fenced is None:
        return None, content
    entries = _ENTRY.split(fenced.group(2))
    if entries and _PREVIOUS.match(entries[0]):
        previous = _PREVIOUS.sub("", entries[0]).replace("\n  ", "\n")
        return previous, "\n\n".join(entries[1:])
    return None, fenced.group(2)


def replay(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per saved summary request that updated a previous summary."""
    rows = []
    for conversation, systems in results.items():
        for system, result in systems.items():
            if not system.startswith("agentcore"):
                continue
            for index, call in enumerate(result.get("summaries", ())):
                text = call.get("text") or ""
                if not text or not call.get("messages"):
                    continue
                previous, transcript = split_request(call["messages"][-1]["content"])
                if not previous:
                    continue
                kept, lost = compare_identifiers(previous, text, transcript)
                held = len(find_identifiers(previous))
                rows.append(
                    {
                        "where": f"{conversation}/{system}#{index + 1}",
                        "held": held,
                        "kept": kept,
                        "lost": lost,
                        "refused": [
                            len(lost) >= least and len(lost) > held * share
                            for least, share in THRESHOLDS
                        ],
                    }
                )
    return rows


def main() -> None:
    """Print the replay of the given runs' summaries."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=Path, default=[HERE / "results" / "quality.json"])
    args = parser.parse_args()
    total = [0] * len(THRESHOLDS)
    count = 0
    for path in args.runs:
        rows = replay(json.loads(path.read_text("utf-8"))["results"])
        for row in rows:
            count += 1
            marks = " ".join("R" if refused else "." for refused in row["refused"])
            total = [t + r for t, r in zip(total, row["refused"], strict=True)]
            print(
                f"{row['where']:<34} held {row['held']:>2}  kept {len(row['kept']):>2}  [{marks}]"
            )
            if row["lost"]:
                print(f"    lost: {', '.join(row['lost'])}")
    labels = ", ".join(
        f"{least}/{share:.2f}: {n}" for (least, share), n in zip(THRESHOLDS, total, strict=True)
    )
    print(f"{count} updates; refused as lost at (MIN_LOST/LOST_SHARE): {labels}")


if __name__ == "__main__":
    main()
