"""The plot: context size of every turn, for every system, with the budget drawn as a line.

One column per conversation. The top row overlays every system on a log
scale; below it each system has its own panel on a linear scale, so lines
that coincide (inline and background agentcore do in the replay) stay visible.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from bench.systems import label

TITLES = {"generated": "Generated conversation", "corpus": "Corpus conversation"}


def context_per_turn(
    path: Path, index: dict[Any, Any], systems: Sequence[str], budget: int
) -> None:
    rows = 1 + len(systems)
    figure, axes = plt.subplots(
        rows,
        len(TITLES),
        figsize=(15, 3.2 + 1.9 * len(systems)),
        squeeze=False,
        gridspec_kw={"height_ratios": [2.2] + [1] * len(systems)},
    )
    colors = plt.get_cmap("tab10")
    for column, (name, title) in enumerate(TITLES.items()):
        overview = axes[0][column]
        for number, key in enumerate(systems, start=1):
            axis = axes[number][column]
            result = index.get(("replay", key, name))
            ok = bool(result) and result.get("status") == "ok"
            if ok:
                sizes = result["context_per_turn"]
                style = "--" if number % 2 == 0 else "-"
                overview.plot(
                    sizes,
                    label=label(key),
                    color=colors(number - 1),
                    linewidth=0.8,
                    linestyle=style,
                )
                axis.plot(sizes, color=colors(number - 1), linewidth=0.7)
                top = max(max(sizes, default=0) * 1.05, budget * 1.25)
                axis.set_ylim(0, top)
            else:
                reason = (result or {}).get("reason", "not run")
                axis.text(
                    0.5,
                    0.5,
                    f"could not run: {reason}",
                    ha="center",
                    va="center",
                    transform=axis.transAxes,
                    fontsize=8,
                )
            axis.axhline(budget, color="black", linestyle="--", linewidth=1)
            axis.set_title(label(key), fontsize=9, loc="left")
            axis.tick_params(labelsize=8)
            axis.grid(True, alpha=0.3)
        axes[-1][column].set_xlabel("turn")
        overview.axhline(budget, color="black", linestyle="--", linewidth=1.2, label="budget")
        overview.set_yscale("log")
        overview.set_title(f"{title}: largest request of each turn, tokens (log scale)")
        overview.grid(True, alpha=0.3)
        overview.legend(fontsize=7, loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)


def retention(path: Path, index: dict[Any, Any], systems: Sequence[str]) -> None:
    """Input tokens sent (summary calls included) against the facts retained, per system.

    Systems with the same figures (agentcore inline, SqliteStore, background)
    share a point; the legend lists every system.
    """
    figure, axes = plt.subplots(1, len(TITLES), figsize=(14, 6), squeeze=False)
    colors = plt.get_cmap("tab10")
    markers = "osD^v<>Pp*"
    for column, (name, title) in enumerate(TITLES.items()):
        axis = axes[0][column]
        for number, key in enumerate(systems):
            result = index.get(("replay", key, name))
            if not result or result.get("status") != "ok" or result.get("retention") is None:
                continue
            tokens = result.get("input_tokens_total", result["input_tokens"])
            axis.scatter(
                tokens,
                result["retention"] * 100,
                color=colors(number),
                marker=markers[number % len(markers)],
                s=90 - 8 * number,
                label=label(key),
                alpha=0.85,
            )
        axis.set_xscale("log")
        axis.set_xlabel("input tokens sent, summary calls included (log scale)")
        axis.set_ylabel("planted facts retained at the probes, %")
        axis.set_ylim(-5, 105)
        axis.set_title(f"{title}: up and left is better", fontsize=10)
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=7, loc="center right")
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)
