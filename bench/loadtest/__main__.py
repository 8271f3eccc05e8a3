"""``python -m bench.loadtest --db DSN_OR_PATH``: many worker processes, one database, kill -9.

Prints turns per second, the p50/p99 overhead of a turn (its wall time without the fake
model's), and the counts of lost, duplicated and misordered messages and of summaries that do
not match the history they claim to cover. Exits 1 when any of those counts is not 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time

from bench.loadtest.coordinator import Coordinator, Options, Outcome
from bench.loadtest.verify import Findings, verify
from bench.loadtest.workload import open_store, session_id


def parse(argv: list[str] | None) -> Options:
    parser = argparse.ArgumentParser(prog="python -m bench.loadtest", description=__doc__)
    parser.add_argument(
        "--db",
        required=True,
        help="a postgresql:// DSN, or the path of an SQLite file (created; must not exist)",
    )
    parser.add_argument("--workers", type=int, default=4, help="worker processes (default: 4)")
    parser.add_argument("--sessions", type=int, default=200, help="sessions (default: 200)")
    parser.add_argument("--turns", type=int, default=20, help="turns per session (default: 20)")
    parser.add_argument(
        "--concurrency", type=int, default=8, help="turns in flight per worker (default: 8)"
    )
    parser.add_argument(
        "--kill-every",
        type=int,
        default=200,
        metavar="TURNS",
        help="kill -9 a random busy worker once every TURNS stored turns on average; "
        "0: never (default: 200)",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="stop handing out turns after this long (default: 600)",
    )
    parser.add_argument(
        "--model-delay",
        type=float,
        default=0.005,
        metavar="SECONDS",
        help="how long the fake model takes per turn call (default: 0.005)",
    )
    parser.add_argument(
        "--resume-each-turn",
        action="store_true",
        help="workers resume the session from the store for every turn (default: they keep "
        "their AgentSession objects, which catch up with other workers before a model call)",
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    return Options(
        db=args.db,
        workers=args.workers,
        sessions=args.sessions,
        turns=args.turns,
        concurrency=args.concurrency,
        kill_every=args.kill_every,
        time_limit=args.time_limit,
        model_delay=args.model_delay,
        reuse_sessions=not args.resume_each_turn,
        seed=args.seed,
    )


def _percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _engine(db: str) -> str:
    return "SQLite" if not db.startswith(("postgresql://", "postgres://")) else "PostgreSQL"


async def _check(options: Options, outcome: Outcome) -> tuple[Findings, int]:
    store = open_store(options.db)
    try:
        findings = await verify(store, options.sessions, outcome.acknowledged)
        stored_sessions = len(
            set(await store.list_sessions()) & {session_id(s) for s in range(options.sessions)}
        )
    finally:
        await store.close()
    return findings, stored_sessions


def report(options: Options, outcome: Outcome, findings: Findings, stored_sessions: int) -> str:
    overheads_ms = [s * 1000 for s in outcome.overheads]
    planned = options.sessions * options.turns
    lines = [
        f"engine                {_engine(options.db)}",
        f"machine               {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        f"workers x sessions x turns   {options.workers} x {options.sessions} x "
        f"{options.turns} ({planned} turns), {options.concurrency} in flight per worker, "
        + ("session objects kept" if options.reuse_sessions else "sessions resumed each turn"),
        f"turns stored          {findings.stored_turns} of {planned} in {outcome.seconds:.1f} s"
        + (" (time limit reached)" if outcome.timed_out else ""),
        f"sessions stored       {stored_sessions}",
        f"turns per second      {len(outcome.acknowledged) / max(outcome.seconds, 1e-9):.1f}",
        f"turn overhead p50     {_percentile(overheads_ms, 0.50):.1f} ms",
        f"turn overhead p99     {_percentile(overheads_ms, 0.99):.1f} ms",
        f"kill -9               {outcome.kills} (with turns in flight: "
        f"{outcome.kills_with_jobs}); {outcome.started_workers} workers started",
        f"turns handed again    {outcome.redone} (already stored: {outcome.already_stored})",
        f"write conflicts       {outcome.conflicts} (resumed and retried)",
        f"summaries checked     {findings.summaries}",
        f"lost messages         {findings.lost}",
        f"duplicated messages   {findings.duplicated}",
        f"misordered messages   {findings.misordered}",
        f"foreign messages      {findings.foreign}",
        f"stale summaries       {findings.bad_summaries}",
        f"worker failures       {len(outcome.failures)}",
    ]
    for example in findings.examples:
        lines.append(f"  ! {example}")
    for failure in outcome.failures[:5]:
        lines.append(f"  ! {failure.strip().splitlines()[-1]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    options = parse(argv)
    os.environ.setdefault("AGENTCORE_TIKTOKEN_TIMEOUT", "0")
    if _engine(options.db) == "SQLite" and os.path.exists(options.db):
        print(f"{options.db} exists; the load test needs a new database", file=sys.stderr)
        return 2
    began = time.monotonic()
    outcome = Coordinator(options).run()
    findings, stored_sessions = asyncio.run(_check(options, outcome))
    print(report(options, outcome, findings, stored_sessions))
    print(f"wall time             {time.monotonic() - began:.1f} s")
    ok = findings.clean and not outcome.failures
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
