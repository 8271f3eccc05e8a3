"""Several processes opening one new SQLite file at once all get a working store.

One of them creates the schema; the others must not take the half-made file for a
database agentcore did not create (they read its version and tables in one snapshot).
"""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from agentcore import SqliteStore

TRIALS = 25
PROCESSES = 4


def _open(path: str, start: float, results: multiprocessing.Queue[str]) -> None:
    while time.time() < start:
        pass
    try:
        SqliteStore(path)
    except Exception as exc:  # reported to the test
        results.put(f"{type(exc).__name__}: {exc}")
    else:
        results.put("ok")


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="needs the fork start method"
)
def test_processes_opening_a_new_file_at_once_all_get_a_store(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    failures = []
    for trial in range(TRIALS):
        path = str(tmp_path / f"new-{trial}.db")
        results: multiprocessing.Queue[str] = context.Queue()
        start = time.time() + 0.2
        workers = [
            context.Process(target=_open, args=(path, start, results)) for _ in range(PROCESSES)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
        failures += [
            answer for answer in (results.get(timeout=60) for _ in workers) if answer != "ok"
        ]
    print(f"\n{TRIALS} new files opened by {PROCESSES} processes at once: {len(failures)} failed")
    assert failures == []
