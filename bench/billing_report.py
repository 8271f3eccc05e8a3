"""The billed-dollars table of ``results.md``: the prefix-cache model's figures per system."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench import billing, facts, plot
from bench.systems import label


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _share(part: int, whole: int) -> str:
    return "–" if not whole else f"{part / whole:.0%}"


def billing_table(index: dict[Any, Any], systems: Sequence[str]) -> list[str]:
    """One row per system: dollars per conversation and per retained fact, per provider."""
    header = ["System"]
    for title in plot.TITLES.values():
        for provider in billing.PRICED_MODELS:
            name = provider.capitalize() if provider != "openai" else "OpenAI"
            header += [
                f"{title}: {name} $ (input read / written)",
                f"{title}: {name} $ per retained fact",
                f"{title}: {name} summary input read from cache",
            ]
    rows = []
    for key in systems:
        row = [label(key)]
        for name in plot.TITLES:
            result = index.get(("replay", key, name), {})
            bill = result.get("billing")
            if result.get("status") != "ok" or bill is None:
                row += ["–"] * (3 * len(billing.PRICED_MODELS))
                continue
            retained = (result.get("retention") or 0.0) * facts.FACT_COUNT
            for provider in billing.PRICED_MODELS:
                figures = bill[provider]
                spent = figures["dollars"]
                split = (
                    f"{_share(figures['cache_read'], figures['input'])} / "
                    f"{_share(figures['cache_write'], figures['input'])}"
                )
                per_fact = _money(spent / retained) if retained else "–"
                summary = _share(figures["summary_cache_read"], figures["summary_input"])
                row += [f"{_money(spent)} ({split})", per_fact, summary]
        rows.append(row)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def billing_intro() -> list[str]:
    """The paragraph before the table: the rules and the prices it applies."""
    models = ", ".join(f"{provider} `{model}`" for provider, model in billing.PRICED_MODELS.items())
    return [
        "Every request each system sent, turn and summary alike, goes through a model of "
        "each provider's prompt cache (`bench/billing.py`), then is priced at the list "
        f"prices of `agentcore.pricing.LIST_PRICES` ({models}). Anthropic: only prefixes "
        "ending at a `cache_control` breakpoint are cached, from "
        f"{billing.ANTHROPIC_MIN_TOKENS:,} tokens, found up to "
        f"{billing.ANTHROPIC_LOOKBACK} blocks before a breakpoint; reads bill 0.1x, writes "
        "1.25x. agentcore marks the system prompt, the end of the turn before the newest "
        "user turn and the newest message, LangChain's "
        "`AnthropicPromptCachingMiddleware` the newest message of the agent's calls (not "
        "its summarizer's), langmem and LlamaIndex nothing. OpenAI: every prompt of "
        f"{billing.OPENAI_MIN_TOKENS:,} tokens or more is cached; a later one reads the "
        f"longest shared prefix in {billing.OPENAI_STEP}-token steps. Entries live "
        f"{billing.TTL_SECONDS / 60:.0f} minutes, refreshed by each hit, on a simulated "
        f"clock: a turn every {billing.TURN_GAP_SECONDS:.0f} s, a "
        f"{billing.BREAK_SECONDS / 60:.0f}-minute break after every "
        f"{billing.BREAK_EVERY}th turn, {billing.CALL_SECONDS:.0f} s between the calls of "
        "a turn. The dollars are the input of every request and the output of the summary "
        "calls (the turns' replies are scripted, the same for every system, and left out). "
        "*Per retained fact*: the dollars over the facts retained (the retention share of "
        f"the {facts.FACT_COUNT} planted facts).",
        "",
    ]
