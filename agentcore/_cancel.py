"""Cancellation helpers: a store write that finishes before a cancel propagates, and deadlines.

Cancellation belongs to the caller: the library finishes what must finish
(shielded), then lets the cancel propagate, and never takes back
(``Task.uncancel()``) a cancel it did not make. Only a turn deadline's own
cancel is consumed, by the deadline that made it.
"""

from __future__ import annotations

import asyncio
import sys
import weakref
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")


async def complete_despite_cancel(work: Coroutine[Any, Any, T], *, step_here: bool = False) -> T:
    """Run ``work`` to its end, then let a cancellation of the caller propagate.

    ``work`` runs as its own task that the caller's cancellation never
    reaches, so what it started (a store write and the bookkeeping right
    after it) is done whole. A caller cancelled meanwhile then gets its
    ``CancelledError``, whether ``work`` succeeded or failed: the cancel is
    never consumed, so ``asyncio.timeout``, ``TaskGroup`` and anyio's cancel
    scopes see it. A caller that was not cancelled gets the result or the
    error of ``work``. The same on every supported Python.

    On Python 3.12+, when no cancel of the caller is pending, the task starts
    eagerly: ``work`` runs at once, in its own task, and a ``work`` that
    finishes without waiting on anything (an in-memory store's write) costs
    no turn of the event loop. On Python 3.10 and 3.11, ``step_here`` does
    the same for a ``work`` whose first step (up to its first wait) looks
    at no task-bound state (no ``asyncio.current_task()``, no
    ``asyncio.timeout``): that step runs in the caller's task, and only a
    ``work`` that then waits goes on in a task of its own. Otherwise (or
    with a cancel already requested) the task is scheduled as usual.
    """
    task = _start(work, step_here)
    if task.done():
        return task.result()
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            # The caller's cancel, even when ``work`` finished just before it landed.
            cancelled = exc
    if cancelled is not None:
        if not task.cancelled():
            task.exception()  # retrieved: the caller's cancellation wins
        raise cancelled
    return task.result()


def _start(work: Coroutine[Any, Any, T], step_here: bool) -> asyncio.Future[T]:
    """``work`` as a task, started eagerly where it can be (see :func:`complete_despite_cancel`)."""
    caller = asyncio.current_task()
    if caller is None or _cancel_pending(caller):
        return asyncio.ensure_future(work)
    loop = caller.get_loop()
    if sys.version_info >= (3, 12):
        return asyncio.Task(work, loop=loop, eager_start=True)
    if not step_here:  # pragma: no cover - Python 3.10 and 3.11
        return asyncio.ensure_future(work)
    return _first_step_here(work, loop)  # pragma: no cover - Python 3.10 and 3.11


def _first_step_here(  # pragma: no cover - Python 3.10 and 3.11
    work: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop
) -> asyncio.Future[T]:
    """Run ``work`` up to its first wait here: a done future, or a task that goes on from there.

    An error of that first step propagates from here, as the task's would.
    """
    try:
        waiting = work.send(None)
    except StopIteration as stop:
        done: asyncio.Future[T] = loop.create_future()
        done.set_result(stop.value)
        return done
    return asyncio.ensure_future(_Resumed(work, waiting).run())


def _cancel_pending(task: asyncio.Task[Any]) -> bool:
    """Whether ``task`` was asked to cancel (known on Python 3.11+; never on 3.10)."""
    if sys.version_info >= (3, 11):
        return task.cancelling() > 0
    return False  # pragma: no cover - Python 3.10


class _Resumed:  # pragma: no cover - Python 3.10 and 3.11
    """A coroutine already started (its first step ran in the caller), awaited from there on."""

    __slots__ = ("_waiting", "_work")

    def __init__(self, work: Coroutine[Any, Any, Any], waiting: Any) -> None:
        self._work = work
        self._waiting = waiting

    async def run(self) -> Any:
        """The rest of the work, in the task that awaits this."""
        return await self

    def __await__(self) -> Generator[Any, Any, Any]:
        work, waiting = self._work, self._waiting
        while True:
            try:
                sent = yield waiting
            except BaseException as error:
                try:
                    waiting = work.throw(error)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    waiting = work.send(sent)
                except StopIteration as stop:
                    return stop.value


def check_timeout(name: str, seconds: object) -> float | None:
    """``seconds`` as a positive finite float, or None; anything else is refused."""
    from agentcore.validators import POSITIVE_NUMBER, is_number

    if is_number(seconds) and seconds > 0:
        return float(seconds)
    POSITIVE_NUMBER.named("a positive finite number of seconds").or_none().check(name, seconds)
    return None


class Deadline:
    """A point in time after which the awaits run under :meth:`guard` are cancelled.

    ``seconds`` None means no deadline. ``error`` builds the exception raised
    in place of the deadline's own ``CancelledError``. On Python 3.11+ the
    deadline works as :func:`asyncio.timeout_at` does (it counts the task's
    pending cancels), so a cancel of the caller that lands together with the
    deadline still reaches the caller; one timer serves all of a deadline's
    guards (armed by the first, cancelled when the deadline is dropped), where
    an ``asyncio.timeout_at`` per guard would schedule and cancel one each; with
    ``timer`` (a :class:`DeadlineTimer`), one timer serves a whole series of
    deadlines instead (the turns of a session). Python 3.10
    has no count of pending cancels: there the
    deadline cancels the task itself and takes the ``CancelledError`` that
    follows as its own, so a caller's cancel landing in the same instant as
    the deadline is reported as the deadline's (as with 3.10's ``wait_for``).
    """

    def __init__(
        self,
        seconds: float | None,
        error: Callable[[], BaseException],
        *,
        timer: DeadlineTimer | None = None,
    ) -> None:
        self._when = None if seconds is None else asyncio.get_running_loop().time() + seconds
        self._error = error
        self._timer: asyncio.TimerHandle | None = None
        self._shared = timer
        self._passed = False
        self._active: _Guard | None = None

    def __del__(self) -> None:
        timer = getattr(self, "_timer", None)
        if timer is not None:
            timer.cancel()

    def remaining(self) -> float | None:
        """Seconds left before the deadline (at least a millisecond), None without one."""
        if self._when is None:
            return None
        return max(0.001, self._when - asyncio.get_running_loop().time())

    def guard(self, *, consume: bool = False) -> _Guard | _NoDeadline:
        """Cancel the current task at the deadline while the body runs (``async with``).

        The deadline's cancel raises ``error()``; with ``consume`` it ends
        the body quietly instead (for work after the turn was stored, whose
        caller is owed the stored turn). Any other cancel propagates. A
        guard entered after the deadline passed cancels the body at its
        first suspension, as ``asyncio.timeout_at`` does.
        """
        if self._when is None:
            return _NO_DEADLINE
        return _Guard(self, consume)

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        """Schedule the one timer, if not yet done; it holds the deadline weakly."""
        if self._passed:
            return
        assert self._when is not None
        if self._shared is not None:
            self._shared.watch(self, loop)
        elif self._timer is None:
            self._timer = loop.call_at(self._when, _deadline_passed, weakref.ref(self))


def _deadline_passed(ref: weakref.ref[Deadline]) -> None:
    """The timer of a deadline: cancel the body of the guard running now, if any."""
    deadline = ref()
    if deadline is None:
        return
    deadline._timer = None
    _passed(deadline)


def _passed(deadline: Deadline) -> None:
    """``deadline`` has passed: cancel the body of its guard running now, if any."""
    deadline._passed = True
    if deadline._active is not None:
        deadline._active.expire()


class DeadlineTimer:
    """One loop timer for a series of deadlines that each come later (a session's turns).

    A :class:`Deadline` given one (``Deadline(..., timer=t)``) has ``t`` watch it
    instead of scheduling and cancelling a timer of its own: ``t`` keeps a
    timer that fires no later than the deadline it watches. When it fires
    for an earlier deadline (a finished turn's), it is scheduled again for the
    one it watches now, so a session whose turns end in time schedules about
    one timer per ``turn_timeout`` instead of one per turn. The deadlines behave
    exactly as with a timer of their own. The loop's timer holds this object
    weakly, and this object holds the deadline it watches weakly. On Python 3.10
    a guard arms a timeout of its own (there is no ``asyncio.timeout``), so the
    shared timer serves Python 3.11 and later.
    """

    __slots__ = ("__weakref__", "_at", "_handle", "_loop", "_watched")

    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._at = 0.0
        self._watched: weakref.ref[Deadline] | None = None

    def watch(self, deadline: Deadline, loop: asyncio.AbstractEventLoop) -> None:
        """Fire for ``deadline``, armed on ``loop``, from now on.

        The deadlines it watches must not overlap: a new one is watched once the
        guards of the one before have ended (a session's turns hold its turn lock).
        """
        watched = self._watched
        if (
            watched is not None
            and self._handle is not None
            and self._loop is loop
            and watched() is deadline
        ):
            return  # armed for it already, by an earlier guard of the same deadline
        when = deadline._when
        assert when is not None
        self._watched = weakref.ref(deadline)
        if self._handle is not None:
            if self._at <= when and self._loop is loop:
                return  # fires first; then waits on for this deadline
            self._handle.cancel()  # too late, or on another loop (run_sync makes one a call)
        self._schedule(when, loop)

    def _schedule(self, when: float, loop: asyncio.AbstractEventLoop) -> None:
        self._at = when
        self._loop = loop
        self._handle = loop.call_at(when, _shared_timer_fired, weakref.ref(self), loop)

    def _fired(self, loop: asyncio.AbstractEventLoop) -> None:
        self._handle = None
        deadline = self._watched() if self._watched is not None else None
        if deadline is None or deadline._passed:
            return
        assert deadline._when is not None
        if deadline._when > self._at:
            self._schedule(deadline._when, loop)  # the watched deadline comes later
        else:
            _passed(deadline)


def _shared_timer_fired(ref: weakref.ref[DeadlineTimer], loop: asyncio.AbstractEventLoop) -> None:
    """The loop timer of a :class:`DeadlineTimer`; nothing once the timer is gone."""
    timer = ref()
    if timer is not None:
        timer._fired(loop)


class _Guard:
    """One ``async with`` of :meth:`Deadline.guard`: a plain class, no generator per use."""

    __slots__ = ("_cancelling", "_consume", "_deadline", "_expiring", "_soon", "_task", "_timeout")

    def __init__(self, deadline: Deadline, consume: bool) -> None:
        self._deadline = deadline
        self._consume = consume
        self._task: asyncio.Task[Any] | None = None
        self._cancelling = 0
        self._soon: asyncio.Handle | None = None
        self._expiring = False
        self._timeout: Any = None

    def expire(self) -> None:
        """The deadline passed: cancel the task (its ``CancelledError`` is the deadline's)."""
        self._soon = None
        self._expiring = True
        assert self._task is not None
        self._task.cancel()

    async def __aenter__(self) -> None:
        deadline = self._deadline
        if deadline._when is None:
            return
        if sys.version_info < (3, 11) or deadline._active is not None:
            # Python 3.10 (a timer that cancels the task), or a guard inside a guard.
            self._timeout = _fallback_timeout(deadline._when)
            await self._timeout.__aenter__()
            return
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._cancelling = task.cancelling()
        deadline._active = self
        if deadline._passed:
            self._soon = task.get_loop().call_soon(self.expire)
        else:
            deadline._arm(task.get_loop())

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> bool:
        if self._timeout is not None:
            try:
                await self._timeout.__aexit__(exc_type, exc, tb)
            except TimeoutError:
                if not self._timeout.expired():
                    raise
                if not self._consume:
                    raise self._deadline._error() from None
                return True
            return False
        if self._task is None:
            return False
        self._deadline._active = None
        if self._soon is not None:
            self._soon.cancel()
            self._soon = None
        if not self._expiring:
            return False
        self._expiring = False
        if sys.version_info >= (3, 11):
            if self._task.uncancel() > self._cancelling or exc_type is not asyncio.CancelledError:
                return False  # another cancel is pending too, or the body ended anyway
        if not self._consume:
            raise self._deadline._error() from None
        return True


class _NoDeadline:
    """The guard of a deadline that never comes: one shared object, it does nothing."""

    __slots__ = ()

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> bool:
        return False


_NO_DEADLINE = _NoDeadline()


def _fallback_timeout(when: float) -> Any:
    """``asyncio.timeout_at(when)``, or on Python 3.10 a timer that cancels the task."""
    if sys.version_info >= (3, 11):
        return asyncio.timeout_at(when)
    return _TaskTimer(when)  # pragma: no cover - Python 3.10


class _TaskTimer:  # pragma: no cover - Python 3.10
    """Python 3.10's stand-in for ``asyncio.timeout_at``: cancels the task at ``when``."""

    def __init__(self, when: float) -> None:
        self._when = when
        self._fired = False
        self._handle: asyncio.TimerHandle | None = None

    def expired(self) -> bool:
        """Whether the timer cancelled the task."""
        return self._fired

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        assert task is not None

        def fire() -> None:
            self._fired = True
            task.cancel()

        self._handle = asyncio.get_running_loop().call_at(self._when, fire)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        assert self._handle is not None
        self._handle.cancel()
        if self._fired and isinstance(exc, asyncio.CancelledError):
            raise TimeoutError from exc
