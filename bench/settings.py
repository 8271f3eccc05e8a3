"""The knobs shared by every system: budget, conversation sizes, repetitions."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

SYSTEM_PROMPT = (
    "You are a careful engineering assistant. Answer precisely, use the tools when a "
    "question needs data you do not have, and keep track of the user's decisions."
)
"""The system prompt every system sends first."""


@dataclass(frozen=True)
class Settings:
    """What one benchmark run uses; :meth:`quick` shrinks it for a smoke run."""

    budget: int = 16_000
    """The model's context window in tokens, the same for every system."""
    trigger_ratio: float = 0.75
    """Fraction of the budget at which the peers summarize (langmem, LangChain): the seed's
    ratio, agentcore's default until it moved to 0.5, then 0.4 (``docs/benchmarks.md``
    says why)."""
    keep_ratio: float = 0.25
    """Fraction of the budget LangChain keeps verbatim after a summary (agentcore's former
    default; it now keeps an eighth)."""
    langchain_trim: int | None = 4000
    """``SummarizationMiddleware(trim_tokens_to_summarize=...)``: LangChain's summarizer
    reads only the last this many tokens of what it summarizes (the library's default,
    4,000); None: all of it."""
    max_summary_tokens: int = 1024
    generated_seed: int = 20_240_611
    generated_turns: int = 600
    corpus_turns: int | None = 1_000
    """Turns of the corpus conversation to replay (None: all 2,180; 1,000 keeps the run short)."""
    overhead_lengths: tuple[int, ...] = (10, 1_000, 10_000)
    overhead_warmup: int = 5
    overhead_turns: int = 100
    overhead_rounds: int = 1
    """Times each overhead job runs (interleaved); the table keeps the fastest round. One
    since 2026-12-02 (it was three): the run must finish in 10 minutes at load 5 on 2 cores,
    and the overhead jobs were most of it."""
    overhead_workers: int = 2
    """Overhead jobs run at a time, one per core of a 2-core machine."""
    latency_turns: int = 200
    summary_delay: float = 0.5
    """Seconds the summarizer takes in the latency run."""
    think_time: float = 0.2
    """Pause between turns in the latency run, for the system that summarizes in the background."""
    job_timeout: float = 420.0
    """Seconds one job may take before it is reported as not finished."""
    summary_overrides: dict[str, Any] = field(default_factory=dict)
    """``SummaryConfig`` fields that replace the defaults of the agentcore autosummary
    systems (inline, SqliteStore, background), for experiments: ``--summary-config``.
    Empty in a published run."""

    @property
    def trigger_tokens(self) -> int:
        return int(self.budget * self.trigger_ratio)

    @property
    def keep_tokens(self) -> int:
        return int(self.budget * self.keep_ratio)

    def quick(self) -> Settings:
        return replace(
            self,
            generated_turns=120,
            corpus_turns=300,
            overhead_lengths=(10, 1_000),
            overhead_turns=10,
            overhead_rounds=1,
            latency_turns=40,
            summary_delay=0.1,
            think_time=0.05,
        )
