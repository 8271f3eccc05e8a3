"""Session leases: one owner at a time, renewed by its owner, lapsed once it expires.

The contract is tested on every engine; a lease whose worker is killed with SIGKILL lapses on
the engines several processes share.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import pytest

from agentcore.errors import StoreError
from agentcore.stores import MemoryStore

if TYPE_CHECKING:
    from conftest import StoreEngine


@pytest.fixture
async def store(store_engine: StoreEngine) -> AsyncIterator[MemoryStore]:
    s = store_engine.open()
    try:
        yield s
    finally:
        await s.close()


async def _wait_for_lease(store: MemoryStore, owner: str, seconds: float, limit: float) -> float:
    """Try to take the lease until it is free (bounded by ``limit`` s); the time it took."""
    started = time.monotonic()
    for _ in range(int(limit / 0.05)):
        if await store.acquire_lease("s", owner, seconds):
            return time.monotonic() - started
        await asyncio.sleep(0.05)
    pytest.fail(f"the lease was not free within {limit} s")


async def test_one_owner_at_a_time(store: MemoryStore) -> None:
    assert await store.acquire_lease("s", "a", 30)
    assert not await store.acquire_lease("s", "b", 30)
    assert await store.acquire_lease("s", "a", 30)  # renewed
    assert await store.acquire_lease("other", "b", 30)  # one lease per session
    assert not await store.release_lease("s", "b")  # not b's: left alone
    assert not await store.acquire_lease("s", "b", 30)
    assert await store.release_lease("s", "a")
    assert not await store.release_lease("s", "a")
    assert await store.acquire_lease("s", "b", 30)


async def test_an_expired_lease_goes_to_the_next_owner(store: MemoryStore) -> None:
    assert await store.acquire_lease("s", "a", 0.3)
    await _wait_for_lease(store, "b", 30, limit=10)
    assert not await store.acquire_lease("s", "a", 30)
    # The first owner's lease is gone: releasing it says so.
    assert not await store.release_lease("s", "a")


async def test_a_lease_is_not_session_data(store: MemoryStore) -> None:
    assert await store.acquire_lease("s", "a", 30)
    assert await store.list_sessions() == []
    assert await store.load_state("s") is None


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("", "a", 1), "session id"),
        (("s", "", 1), "lease owner"),
        (("s", "a\x00", 1), "lease owner"),
        (("s", "a", 0), "lease seconds"),
        (("s", "a", float("inf")), "lease seconds"),
        (("s", "a", "5"), "lease seconds"),
    ],
)
async def test_bad_lease_arguments_are_refused(
    store: MemoryStore, args: tuple[Any, ...], names: str
) -> None:
    with pytest.raises(StoreError, match=names):
        await store.acquire_lease(*args)


_HOLDER = """
import asyncio, sys
from agentcore.stores import SqliteStore

async def main(engine, location):
    if engine == "postgres":
        from agentcore.stores import PostgresStore
        store = PostgresStore(location)
    else:
        store = SqliteStore(location)
    assert await store.acquire_lease("s", "doomed-worker", 3)
    print("held", flush=True)
    await asyncio.sleep(600)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def test_the_lease_of_a_killed_worker_lapses(shared_store_engine: StoreEngine) -> None:
    # Create the tables first, so the worker only takes the lease.
    store = shared_store_engine.open()
    try:
        await store.list_sessions()
        worker = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, shared_store_engine.name, shared_store_engine.location],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert worker.stdout is not None
            line = await asyncio.wait_for(asyncio.to_thread(worker.stdout.readline), 60)
            assert line.strip() == "held"
        finally:
            os.kill(worker.pid, signal.SIGKILL)
            worker.wait(timeout=30)
        assert worker.returncode == -signal.SIGKILL
        assert not await store.acquire_lease("s", "next-worker", 30)
        took = await _wait_for_lease(store, "next-worker", 30, limit=30)
        print(f"\nthe killed worker's 3 s lease was taken over {took:.1f} s after the kill")
    finally:
        await store.close()
