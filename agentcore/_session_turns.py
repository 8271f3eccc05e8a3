"""The turn methods of :class:`~agentcore.AgentSession`: its turns, and blocks that act as one.

:func:`submit_turn`, :func:`submit_turn_stream`, :func:`submit_turn_sync`
and :func:`exclusive` are the session's methods of those names (the class
binds them, and they are documented there): each checks its arguments and the
session, then runs under the session's turn lock. The turn itself runs in
:mod:`agentcore._turns`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Protocol

from agentcore._store_sync import StoreSync
from agentcore._turn_checks import check_pin_flag, check_turn_id, check_user_message
from agentcore._turn_stream import TurnStream, drain
from agentcore._turns import TurnRunner
from agentcore.context import TurnContext
from agentcore.errors import ConfigError
from agentcore.messages import Message
from agentcore.sync import run_sync


class TurnSession(Protocol):
    """What the turn methods use of their session (an :class:`~agentcore.AgentSession`)."""

    _sync: StoreSync
    _turns: TurnRunner

    async def load(self) -> None:
        """Load the session from the store."""
        ...

    async def submit_turn(
        self, user_input: str | Message, *, pin: bool = False, turn_id: str | None = None
    ) -> Message:
        """Run one turn and return the assistant's final message."""
        ...

    def _check_writable(self, action: str) -> None: ...

    def _check_no_open_stream(self) -> None: ...


async def submit_turn(
    self: TurnSession, user_input: str | Message, *, pin: bool = False, turn_id: str | None = None
) -> Message:
    """Run one turn and return the assistant's final message.

    With ``pin`` the user's message is pinned in the same store write as
    the turn (see :meth:`pin`); a pin that cannot fit is refused with
    :class:`ConfigError` before any model call, and nothing is stored.

    Follows these steps: check the input (text that is not valid Unicode
    raises :class:`ConfigError` before any hook or model call), read-only
    check, catch up with other writers, ``on_turn_start``, load the
    context, run the model (and tools), append the turn's messages (made
    valid Unicode) and store them with the state and cost in one store
    write, advance the turn index, ``on_turn_end``, ``post_turn_end``.
    A provider error stores nothing. A ``turn_timeout`` reached before the
    store write raises :class:`~agentcore.errors.TurnTimeoutError`, and
    nothing is stored; reached later, it skips the end hooks left and the
    message is returned. A cancel always reaches the caller as
    ``CancelledError``: before the store write nothing is stored; once the
    write has begun it completes first (turn index, messages and cost
    are then held by the object, the reply as :attr:`last_reply`), and the
    end hooks that have not run are skipped. See docs/failure-semantics.md.

    ``turn_id`` is the turn's idempotency key (a new random one when
    None): a caller that retries a turn whose outcome it does not know
    (its process died, the connection dropped) passes the same id, and a
    turn already stored under it is returned as stored, with no model
    call and nothing stored twice. The store write of every turn carries
    its id and the time left of ``turn_timeout``.

    It is :meth:`submit_turn_stream` drained to its end, with the model
    called without streaming: the two run the same steps.
    """
    user_message = check_user_message(user_input)
    check_pin_flag(pin)
    check_turn_id(turn_id)
    self._check_writable("submit a turn")
    self._check_no_open_stream()
    return await drain(self._turns.events(user_message, pin=pin, stream=False, turn_id=turn_id))


def submit_turn_stream(
    self: TurnSession, user_input: str | Message, *, pin: bool = False, turn_id: str | None = None
) -> TurnStream:
    """Run one turn, streaming the reply (``pin`` and ``turn_id`` as in :meth:`submit_turn`).

    Iterate the returned :class:`TurnStream` for events. The turn is
    stored, and ``on_turn_end`` and ``post_turn_end`` have run, before
    the final :class:`~agentcore.llm.ResponseComplete` event is handed
    over: a consumer that stops reading after it (or closes the stream)
    keeps the turn. A stream abandoned before that event stores nothing.
    The hooks see the index of the streamed turn; :attr:`turn_index`
    advances when the turn is stored. ``turn_timeout`` covers the turn
    from its first event on (time the consumer spends between events
    counts too).
    """
    user_message = check_user_message(user_input)
    check_pin_flag(pin)
    self._check_writable("submit a turn")
    self._check_no_open_stream()
    check_turn_id(turn_id)
    return TurnStream(self._turns.events(user_message, pin=pin, stream=True, turn_id=turn_id))


def submit_turn_sync(
    self: TurnSession, user_input: str | Message, *, pin: bool = False, turn_id: str | None = None
) -> Message:
    """:meth:`submit_turn` for synchronous code, on a private event loop (:func:`run_sync`).

    :raises SessionError: called where an event loop runs (``async def``, a
        notebook cell): ``await session.submit_turn(...)`` there instead.
    """
    work = self.submit_turn(user_input, pin=pin, turn_id=turn_id)
    return run_sync(work, instead="session.submit_turn(...)")


@contextlib.asynccontextmanager
async def exclusive(
    self: TurnSession, action: str = "act on the session"
) -> AsyncIterator[TurnContext]:
    """Act on the session from outside a turn, as a turn would: ``async with`` it.

    Yields a :class:`~agentcore.TurnContext` for the current slot, the
    same kind of context a turn hook gets: ``ctx.provider`` (its calls
    fire ``after_model_call``), ``ctx.slot``, ``ctx.cost``,
    ``ctx.memory``, ``ctx.session``. Its ``messages`` is empty and its
    ``turn_index`` is the session's next turn index. While the block
    runs, the session's turn lock is held, so no turn (nor another
    ``exclusive`` block) of this object runs meanwhile, and the session
    has caught up with other writers first. Write with
    :meth:`write_slot_config` and :meth:`record_usage`, as a hook does;
    an exception leaves the block and reaches the caller, and what was
    not written is not stored. Do not start a turn of the same session
    inside the block: it waits for the lock the block holds.

    Plugins use it for operations a user calls between turns, such as
    rewriting the slot's context on request.

    :param action: What the caller does, for the errors' wording
        (``"cannot <action>"``).
    :raises ReadonlySessionError: the session is read-only.
    :raises SessionError: a streamed turn is in progress.
    """
    if not isinstance(action, str) or not action.strip():
        raise ConfigError(f"action must be a non-empty str, got {action!r}")
    self._check_writable(action)
    self._check_no_open_stream()
    async with self._turns.lock:
        await self.load()
        await self._sync.catch_up()
        slot = self._sync.slots[self._sync.current]
        ctx = self._turns.context(slot, Message.user(""), is_stream=False)
        ctx.messages = []
        yield ctx
