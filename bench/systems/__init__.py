"""The benchmarked systems, each in its own module, loaded by key."""

from __future__ import annotations

import importlib

from bench.systems.base import Env, System, SystemUnavailable

SYSTEMS: dict[str, tuple[str, str, str]] = {
    "agentcore-full": (
        "agentcore, no compression (Full slot): baseline",
        "bench.systems.agentcore_systems",
        "FullSystem",
    ),
    "agentcore-seed": (
        "agentcore autosummary, seed rule (cumulative, full)",
        "bench.systems.agentcore_systems",
        "SeedRuleSystem",
    ),
    "agentcore-inline": (
        "agentcore autosummary defaults, inline",
        "bench.systems.agentcore_systems",
        "InlineSystem",
    ),
    "agentcore-sqlite": (
        "agentcore autosummary defaults, inline, SqliteStore",
        "bench.systems.agentcore_systems",
        "SqliteSystem",
    ),
    "agentcore-background": (
        "agentcore autosummary defaults, background",
        "bench.systems.agentcore_systems",
        "BackgroundSystem",
    ),
    "langmem": (
        "langmem summarize_messages",
        "bench.systems.langmem_system",
        "LangmemSystem",
    ),
    "langchain": (
        "LangChain create_agent + SummarizationMiddleware",
        "bench.systems.langchain_system",
        "LangchainSystem",
    ),
    "llamaindex": (
        "LlamaIndex ChatSummaryMemoryBuffer",
        "bench.systems.llamaindex_system",
        "LlamaIndexSystem",
    ),
}
"""Key -> (label, module, class), in the order the tables list them."""

BASELINE = "agentcore-full"


def label(key: str) -> str:
    return SYSTEMS[key][0]


def load(key: str) -> System:
    """A new instance of the system ``key``; :class:`SystemUnavailable` if it cannot load."""
    _, module_name, class_name = SYSTEMS[key]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemUnavailable(f"import failed: {type(exc).__name__}: {exc}") from exc
    system: System = getattr(module, class_name)()
    return system


__all__ = ["BASELINE", "SYSTEMS", "Env", "System", "SystemUnavailable", "label", "load"]
