"""The mutable context handed to every turn hook."""

from __future__ import annotations

import time
from typing import Any

from attrs import define, field

from agentcore.bundle import AgentConfig
from agentcore.llm import LlmProvider, LlmResponse
from agentcore.messages import Message
from agentcore.session_handle import SessionHandle
from agentcore.session_memory import SessionMemory
from agentcore.slots import ContextSlot
from agentcore.stash import Stash
from agentcore.stores.base import MemoryStore
from agentcore.tools import ToolRegistry
from agentcore.usage import CostTracker, Usage


@define
class TurnContext:
    """Everything a turn hook may read or change.

    ``turn_index`` is the index of the turn being run (0 for the first), on
    both the plain and the streamed path. ``messages`` holds the messages the
    turn adds: the user's alone in ``on_turn_start``, then the assistant's and
    the tool results too. ``usage`` sums every provider call of the turn;
    ``response`` is the last reply (its usage measures the context of the
    final call). ``stash`` holds plugins' state for this turn, under typed
    keys (:class:`~agentcore.stash.StashKey`); ``extra`` is untyped scratch
    space plugins may share within a turn.
    A plugin that changes the slot's config (a new ``summary_override``) does it with
    ``await ctx.session.write_slot_config(...)``: one store write, conditional
    on the slot's config version, that also stores the session data and cost.
    ``started_at`` is when the turn started, in seconds since the epoch
    (:func:`time.time`): the start of a tracer's turn span.

    ``session`` is the session running the turn, typed as the
    :class:`~agentcore.session_handle.SessionHandle` protocol: the members a
    hook may use (an :class:`~agentcore.AgentSession` at run time).

    ``context`` is what the next model call sends before ``messages``: None
    (the default, reset before every call's ``before_model_call`` hooks)
    sends ``slot.load_messages()``. A ``before_model_call`` hook may set it
    to send another context for that one call; nothing stored changes.
    ``request_body`` likewise holds JSON fields the next call's request
    adds to its body (:attr:`~agentcore.llm.LlmRequest.extra_body`), emptied
    before every call's ``before_model_call`` hooks: a field of the
    provider's API that agentcore does not model, for that one call.
    ``cache_newest`` is the next call's ``LlmRequest.cache_newest``: True
    (set again before every call's ``before_model_call`` hooks), or False
    from a hook that made this call's newest message one that later turns
    will not send (a part added to the user's message for this call only),
    so the provider writes no prompt-cache entry that nothing would read.

    ``tools`` is what the turn's requests offer the model: the bundle's
    registry, then (from before the first ``before_model_call``) with the
    tools plugins offer for this turn (``offer_tools``); None without tools.
    """

    session: SessionHandle
    session_id: str
    turn_index: int
    slot: ContextSlot
    messages: list[Message]
    cost: CostTracker
    provider: LlmProvider
    store: MemoryStore
    memory: SessionMemory
    config: AgentConfig
    is_stream: bool = False
    usage: Usage | None = None
    response: LlmResponse | None = None
    extra: dict[str, object] = field(factory=dict)
    started_at: float = field(factory=time.time)
    context: list[Message] | None = None
    request_body: dict[str, Any] = field(factory=dict)
    cache_newest: bool = True
    stash: Stash = field(factory=Stash, eq=False, repr=False)
    tools: ToolRegistry | None = field(default=None, eq=False, repr=False)
