"""A commit runs whole despite a cancel, and a store write that never waits costs no task."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

import pytest

from agentcore import Agent, AgentBuilder, AgentSession, InMemoryStore
from agentcore._cancel import complete_despite_cancel
from agentcore.testing import MockProvider


@contextlib.contextmanager
def tasks_created() -> Iterator[list[object]]:
    """The coroutines the running loop makes tasks of (through its factory) meanwhile."""
    created: list[object] = []
    loop = asyncio.get_running_loop()
    factory = loop.get_task_factory()

    def counting(loop: asyncio.AbstractEventLoop, coro: object, **kwargs: object) -> object:
        created.append(getattr(coro, "__qualname__", coro))
        return asyncio.Task(coro, loop=loop, **kwargs)  # type: ignore[arg-type]

    loop.set_task_factory(counting)  # type: ignore[arg-type]
    try:
        yield created
    finally:
        loop.set_task_factory(factory)


async def test_work_that_never_waits_runs_in_the_callers_task() -> None:
    seen: list[asyncio.Task[object] | None] = []

    async def work() -> int:
        seen.append(asyncio.current_task())
        return 7

    with tasks_created() as created:
        assert await complete_despite_cancel(work(), step_here=True) == 7
    # Python 3.12+ starts an eager task; 3.10 and 3.11 run the step right here. Either
    # way the work ran once, before the caller went on, and no task waited for the loop.
    assert len(seen) == 1
    assert created == []


async def test_work_that_waits_goes_on_despite_the_callers_cancel() -> None:
    gate = asyncio.Event()
    steps: list[str] = []

    async def work() -> str:
        steps.append("first step")
        await gate.wait()
        await asyncio.sleep(0)
        steps.append("done")
        return "stored"

    caller = asyncio.create_task(complete_despite_cancel(work(), step_here=True))
    await asyncio.sleep(0)
    assert steps == ["first step"]
    caller.cancel()
    await asyncio.sleep(0)
    assert not caller.done()  # the work is not finished: the cancel waits for it
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert steps == ["first step", "done"]


async def test_an_error_of_the_first_step_reaches_the_caller() -> None:
    async def work() -> None:
        raise LookupError("no such row")

    with pytest.raises(LookupError, match="no such row"):
        await complete_despite_cancel(work(), step_here=True)


async def test_an_error_after_a_wait_reaches_the_caller() -> None:
    async def work() -> None:
        await asyncio.sleep(0)
        raise LookupError("late")

    with pytest.raises(LookupError, match="late"):
        await complete_despite_cancel(work(), step_here=True)


async def test_a_turn_on_the_in_memory_store_starts_no_task_for_its_commit() -> None:
    store = InMemoryStore()
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=lambda request: "ok"))
        .store(store)
        .load_plugins(False)
        .build()
    )
    session = AgentSession(Agent("a"), "s", bundle)
    await session.submit_turn("first")
    with tasks_created() as created:
        for turn in range(3):
            await session.submit_turn(f"turn {turn}")
    assert created == []
    assert [m.text for m in await session.history()][-2:] == ["turn 2", "ok"]
