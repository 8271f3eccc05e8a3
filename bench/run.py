"""Run every job in its own process, then write the table, the plot and the raw figures.

``python -m bench [--quick] [--only KEY ...] [--phases PHASE ...]
[--summary-config FIELD=VALUE ...] [--update-docs]``. Replay and
latency jobs run two (resp. four) at a time: replays are not timed, and the
latency jobs mostly sleep. Overhead jobs run one at a time with nothing else
running, since they are the timed ones.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench import experiments, report
from bench.settings import Settings
from bench.systems import SYSTEMS

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DOCS = HERE.parent / "docs" / "benchmarks.md"
CONVERSATIONS = ("generated", "corpus")
PHASES = ("replay", "overhead", "latency")
LATENCY_LONGEST = ("llamaindex", "agentcore-background", "agentcore-seed")
"""Latency jobs that take longest: LlamaIndex and the seed rule summarize most often, the
background system pauses after every turn."""
EXPERIMENT_FIELDS = ("summary_overrides", "trigger_ratio", "keep_ratio", "langchain_trim")
"""Settings an experiment may change from the command line; a published run changes none."""


def _jobs(
    settings: Settings, systems: Sequence[str], quick: bool
) -> dict[str, list[dict[str, Any]]]:
    changed = {
        name: getattr(settings, name)
        for name in EXPERIMENT_FIELDS
        if getattr(settings, name) != getattr(Settings(), name)
    }

    def job(**fields: Any) -> dict[str, Any]:
        return {**fields, "quick": quick, **({"settings": changed} if changed else {})}

    return {
        # Slowest first (the corpus, the peers), so the two workers finish together.
        "replay": [
            job(phase="replay", system=key, conversation=name)
            for name in reversed(CONVERSATIONS)
            for key in reversed(systems)
        ],
        # Rounds interleaved, so a burst of other work on the machine hits every system.
        "overhead": [
            job(phase="overhead", system=key, length=length, round=round_index)
            for round_index in range(settings.overhead_rounds)
            for key in systems
            for length in settings.overhead_lengths
        ],
        # The jobs that sleep longest first, so the four slots finish together.
        "latency": [
            job(phase="latency", system=key)
            for key in sorted(systems, key=lambda key: key not in LATENCY_LONGEST)
        ],
    }


def _describe(job: dict[str, Any]) -> str:
    extra = str(job.get("conversation") or job.get("length") or "")
    if "round" in job:
        extra += f" (round {job['round'] + 1})"
    return f"{job['phase']:8} {job['system']:21} {extra:18}"


def _run_job(job: dict[str, Any], timeout: float, scratch: Path) -> dict[str, Any]:
    out = scratch / f"{abs(hash(json.dumps(job, sort_keys=True)))}.json"
    command = [sys.executable, "-m", "bench.worker", json.dumps(job), str(out)]
    environment = {**os.environ, experiments.CACHE_ENV: str(scratch)}
    start = time.perf_counter()
    try:
        completed = subprocess.run(
            command,
            cwd=HERE.parent,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=environment,
        )
    except subprocess.TimeoutExpired:
        result = {"status": "error", "reason": f"did not finish within {timeout:.0f} s"}
    else:
        if out.exists():
            result = json.loads(out.read_text(encoding="utf-8"))
        else:
            tail = (completed.stderr or "").strip().splitlines()[-1:] or ["no output"]
            result = {
                "status": "error",
                "reason": f"worker exited {completed.returncode}: {tail[0]}",
            }
        if result.get("status") == "error" and completed.stderr:
            (scratch / f"{out.stem}.stderr").write_text(completed.stderr, encoding="utf-8")
    result["job_seconds"] = time.perf_counter() - start
    status = (
        result["status"] if result["status"] == "ok" else f"{result['status']}: {result['reason']}"
    )
    print(f"  {_describe(job)}  {result['job_seconds']:6.1f} s  {status}", flush=True)
    return {"job": job, "result": result}


def _run_phase(
    jobs: list[dict[str, Any]], workers: int, timeout: float, scratch: Path
) -> list[dict[str, Any]]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: _run_job(job, timeout, scratch), jobs))


def _rewrite(source: Path, out: Path, update_docs: bool) -> int:
    """Write the outputs again from a saved ``results.json``, without running anything."""
    data = json.loads(source.read_text(encoding="utf-8"))
    fields = dict(data["settings"])
    fields["overhead_lengths"] = tuple(fields["overhead_lengths"])
    fields.setdefault("overhead_workers", 1)  # saved before it existed: one job at a time
    settings = Settings(**fields)
    runs = data["runs"]
    present = {run["job"]["system"] for run in runs}
    systems = [key for key in SYSTEMS if key in present]
    phases: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        phases.setdefault(run["job"]["phase"], []).append(run)
    timing = report.Timing(**data["timing"])
    quick = any(run["job"].get("quick") for run in runs)
    out.mkdir(parents=True, exist_ok=True)
    written = report.write(out, settings, systems, phases, timing, quick, data["machine"])
    if update_docs:
        report.update_docs(DOCS, written.body)
    print(f"wrote {written.markdown_path}, {written.plot_path}, {written.json_path}")
    return 0


def _overrides(parser: argparse.ArgumentParser, pairs: Sequence[str]) -> dict[str, Any]:
    """``FIELD=VALUE`` pairs as a dict, each checked by building a ``SummaryConfig``."""
    overrides: dict[str, Any] = {}
    for item in pairs:
        name, equals, raw = item.partition("=")
        if not equals or not name:
            parser.error(f"--summary-config takes FIELD=VALUE, got {item!r}")
        try:
            overrides[name] = json.loads(raw)
        except json.JSONDecodeError:
            overrides[name] = raw
    if overrides:
        from agentcore_autosummary import SummaryConfig

        try:
            SummaryConfig.coerce({"max_context_tokens": Settings().budget, **overrides})
        except (TypeError, ValueError) as exc:
            parser.error(f"--summary-config: {exc}")
    return overrides


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--only", nargs="+", choices=list(SYSTEMS), help="run these systems only")
    parser.add_argument(
        "--update-docs", action="store_true", help="copy the results into docs/benchmarks.md"
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    parser.add_argument(
        "--from-json",
        type=Path,
        metavar="RESULTS_JSON",
        help="rewrite the table, the plot (and with --update-docs the docs) from a results.json",
    )
    parser.add_argument(
        "--phases",
        nargs="+",
        choices=PHASES,
        default=list(PHASES),
        help="run these phases only (default: all)",
    )
    parser.add_argument(
        "--summary-config",
        nargs="+",
        default=[],
        metavar="FIELD=VALUE",
        help="experiment: SummaryConfig fields for the agentcore autosummary systems "
        "(inline, sqlite, background), e.g. keep_recent_tokens=1000; VALUE is JSON, else a str",
    )
    parser.add_argument(
        "--peer-trigger-ratio",
        type=float,
        metavar="RATIO",
        help="experiment: the share of the budget at which the peers summarize (default 0.75)",
    )
    parser.add_argument(
        "--peer-keep-ratio",
        type=float,
        metavar="RATIO",
        help="experiment: the share of the budget LangChain keeps verbatim (default 0.25)",
    )
    parser.add_argument(
        "--langchain-trim",
        metavar="TOKENS",
        help="experiment: LangChain's trim_tokens_to_summarize, a number or 'none' "
        "(default 4000, the library's)",
    )
    args = parser.parse_args(argv)
    if args.from_json:
        return _rewrite(args.from_json, args.out, args.update_docs)
    overrides = _overrides(parser, args.summary_config)
    peers = {
        name: value
        for name, value in (
            ("trigger_ratio", args.peer_trigger_ratio),
            ("keep_ratio", args.peer_keep_ratio),
        )
        if value is not None
    }
    for name, value in peers.items():
        if not 0 < value < 1:
            parser.error(f"--peer-{name.replace('_', '-')} must be in (0, 1), got {value}")
    trim: dict[str, int | None] = {}
    if args.langchain_trim is not None:
        if args.langchain_trim.lower() == "none":
            trim["langchain_trim"] = None
        elif args.langchain_trim.isdigit() and int(args.langchain_trim) > 0:
            trim["langchain_trim"] = int(args.langchain_trim)
        else:
            parser.error(
                f"--langchain-trim takes a number > 0 or 'none', got {args.langchain_trim!r}"
            )
    experiment = overrides or peers or trim or set(args.phases) != set(PHASES)
    if args.update_docs and experiment:
        parser.error(
            "--update-docs publishes a full run: not with --phases, --summary-config, "
            "--peer-*-ratio or --langchain-trim"
        )

    started = time.perf_counter()
    settings = Settings().quick() if args.quick else Settings()
    settings = replace(settings, summary_overrides=overrides, **peers, **trim)
    systems = args.only or list(SYSTEMS)
    jobs = _jobs(settings, systems, args.quick)
    phases: dict[str, list[dict[str, Any]]] = {}
    phase_seconds: dict[str, float] = {}
    load: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="agentcore-bench-") as scratch:
        for phase, workers in (
            ("replay", 2),
            ("overhead", settings.overhead_workers),
            ("latency", 4),
        ):
            if phase not in args.phases:
                continue
            load[phase] = os.getloadavg()[0]
            print(
                f"{phase}: {len(jobs[phase])} jobs, {workers} at a time "
                f"(load average {load[phase]:.2f})",
                flush=True,
            )
            phase_start = time.perf_counter()
            phases[phase] = _run_phase(jobs[phase], workers, settings.job_timeout, Path(scratch))
            phase_seconds[phase] = time.perf_counter() - phase_start
    wall = time.perf_counter() - started

    args.out.mkdir(parents=True, exist_ok=True)
    timing = report.Timing(wall, phase_seconds, load)
    written = report.write(args.out, settings, systems, phases, timing, args.quick)
    print()
    print(written.markdown)
    if args.update_docs:
        report.update_docs(DOCS, written.body)
        print(f"updated {DOCS}")
    print(f"wrote {written.markdown_path}, {written.plot_path}, {written.json_path}")
    print(f"wall time: {wall:.0f} s ({wall / 60:.1f} min)")
    return 0
