"""The context budget of a session's requests, in the tokens of the model that receives them.

A turn request must hold ``counted messages + counted tool definitions + the
reply reservation <= max_context_tokens`` once its local count is corrected
by the :class:`~.token_correction.TokenCorrection` the session learned from the
usage its provider reported. The correction is stored in the session
data under :data:`CORRECTION_KEY`, so it survives a resume.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Sequence

from attrs import frozen

from agentcore import ContextWindowExceededError, Message, ToolSpec, TurnContext
from agentcore.plugin_api import (
    REPLY_PRIMING_TOKENS,
    TokenCounter,
    get_token_counter,
    provider_model,
    reply_reservation,
    system_message,
)
from agentcore_autosummary.calling.off_loop import cut_middle
from agentcore_autosummary.config import CORRECTION_KEY, SummaryConfig
from agentcore_autosummary.deciding.token_correction import TokenCorrection, counted_request_async
from agentcore_autosummary.log_names import session_name

logger = logging.getLogger("agentcore.autosummary")

MIN_TOOL_RESULT_TOKENS = 64
"""An in-flight tool result is never cut below this many tokens for a request."""

_CUT_MARGIN_TOKENS = 16


def turn_model(ctx: TurnContext) -> str | None:
    """The model that receives the turn's requests: the agent's, else the provider's."""
    return ctx.session.agent.model or provider_model(ctx.provider)


def counter_for(ctx: TurnContext, model: str | None) -> TokenCounter:
    """The counter for ``model``: the agent's own ``token_counter`` for its turn model."""
    agent_counter = ctx.session.agent.token_counter
    if agent_counter is not None and model == turn_model(ctx):
        return agent_counter
    return get_token_counter(model)


async def load_correction(ctx: TurnContext) -> TokenCorrection:
    """The session's stored correction (a damaged entry counts as none, with a warning)."""
    stored = await ctx.memory.get(CORRECTION_KEY)
    try:
        return TokenCorrection.from_json(stored)
    except (TypeError, ValueError) as exc:
        logger.warning("%s: ignoring stored %s: %s", session_name(ctx.session), CORRECTION_KEY, exc)
        return TokenCorrection()


async def save_correction(ctx: TurnContext, correction: TokenCorrection) -> None:
    """Store ``correction`` with the session; a failed write is logged, never raised."""
    try:
        await ctx.memory.set(CORRECTION_KEY, correction.to_json())
    except Exception as exc:
        logger.error("%s: could not store the token correction: %s", session_name(ctx.session), exc)


@frozen
class TurnBudget:
    """What one turn request may hold and how it is counted."""

    window: int
    reserve: int
    counter: TokenCounter
    model: str | None
    correction: TokenCorrection
    tools: tuple[ToolSpec, ...]

    async def local(self, messages: Sequence[Message]) -> int:
        """The local count of a request of ``messages`` with the turn's tools."""
        return await counted_request_async(self.counter, messages, self.tools)

    async def size(self, messages: Sequence[Message]) -> int:
        """A request's size against the rule: corrected count plus the reply reservation."""
        return self.correction.apply(self.model, await self.local(messages)) + self.reserve

    async def turn_local(self, ctx: TurnContext, *, limit: int | None = None) -> int:
        """:meth:`local` of the turn's next request, from the slot's running totals.

        The request is the slot's context (``ctx.slot.load_messages()``,
        counted by :meth:`~agentcore.slots.ContextSlot.count_context`, which
        counts only what was appended since its last call; or ``ctx.context``
        when a hook set it) followed by the turn's messages so far.
        ``limit``: the count may stop once it passes this many local tokens
        (see :meth:`~agentcore.slots.ContextSlot.count_context`); a result at
        or below it is exact.
        """
        extra = await self.counter.count_messages_async(ctx.messages)
        extra += self.counter.count_tools(self.tools) - REPLY_PRIMING_TOKENS
        if ctx.context is not None:
            return await self.counter.count_messages_async(ctx.context) + extra
        room = None if limit is None else limit - extra
        return await ctx.slot.count_context(self.counter, limit=room) + extra

    async def turn_size(self, ctx: TurnContext, *, exact: bool = True) -> int:
        """:meth:`size` of the turn's next request (see :meth:`turn_local`).

        ``exact=False`` when the caller only compares the size with the window:
        counting may then stop once the request is known not to fit, so a size
        over the window is a lower bound (a history loaded without its counts
        is tokenized newest first only as far as the window reaches).
        """
        return self.sized(await self.turn_local(ctx, limit=None if exact else self.room))

    @property
    def room(self) -> int:
        """The most local tokens a request may count and still fit (its :meth:`sized` ≤ window)."""
        room = self.correction.unapply(self.model, self.window - self.reserve)
        while self.sized(room + 1) <= self.window:  # a float's rounding at the edge
            room += 1
        return room

    def sized(self, local: int) -> int:
        """A request's size against the rule from its local count (see :meth:`size`)."""
        return self.correction.apply(self.model, local) + self.reserve

    def with_correction(self, correction: TokenCorrection) -> TurnBudget:
        """The same budget under another correction."""
        return TurnBudget(
            self.window, self.reserve, self.counter, self.model, correction, self.tools
        )


def turn_budget(ctx: TurnContext, config: SummaryConfig, correction: TokenCorrection) -> TurnBudget:
    """The budget of the turn requests of ``ctx``."""
    model = turn_model(ctx)
    registry = ctx.tools  # the bundle's, and those plugins offer this turn
    tools = tuple(registry.specs()) if registry is not None and len(registry) else ()
    window = config.window
    return TurnBudget(
        window=window,
        reserve=reply_reservation(ctx.session.agent.max_tokens, window),
        counter=counter_for(ctx, model),
        model=model,
        correction=correction,
        tools=tools,
    )


def overflow_prompt_tokens(
    error: ContextWindowExceededError, window: int, max_tokens: int | None
) -> int:
    """The prompt tokens a server's refusal shows, at least.

    The server's own figure when it gave one; else the request must have
    held more than the window less the reply it reserved.
    """
    if error.prompt_tokens is not None:
        return error.prompt_tokens
    limit = error.limit_tokens or window
    return max(1, limit - (max_tokens or 0) + 1)


async def refuse_oversized_input(
    ctx: TurnContext, budget: TurnBudget, kept: Collection[int] = ()
) -> None:
    """Raise when the user's message cannot fit the window whatever is summarized.

    The smallest request a turn can send holds the system prompt, the pinned
    messages, the user's message and the tool definitions, plus the reply
    reservation: everything else can be summarized or left out, the pins of
    ``kept`` too (those the plugin made to keep images, which a request that does
    not fit gives up: see ``agentcore_autosummary.applying.attachments``).
    """
    system = ctx.session.agent.system_prompt
    slot = ctx.slot
    focused = slot.config.focused
    count = slot.message_count()
    pinned = () if focused is None else [i for i in focused.pinned if i not in kept]
    pins = [slot.messages[i] for i in pinned if i < count]
    smallest = [*([system_message(system)] if system else []), *pins, ctx.messages[0]]
    size = await budget.size(smallest)
    if size <= budget.window:
        return
    raise ContextWindowExceededError(
        f"the message needs about {size} tokens with the system prompt, the pinned messages, "
        f"the tool definitions "
        f"and the {budget.reserve}-token reply reservation, but the context window "
        f"(max_context_tokens) is {budget.window} tokens: shorten or split the message",
        prompt_tokens=size - budget.reserve,
        limit_tokens=budget.window,
        requested_tokens=size,
    )


async def cut_tool_results(ctx: TurnContext, budget: TurnBudget, over: int) -> bool:
    """Cut the turn's in-flight tool results, for this request only, by ``over`` server tokens.

    The largest results are cut first, keeping head and tail; the turn still
    stores them whole. Returns whether anything was cut.
    """
    factor = budget.correction.factor(budget.model)
    needed = math.ceil(over / factor) + _CUT_MARGIN_TOKENS
    counter = budget.counter
    messages = list(ctx.messages)
    sizes = {
        index: await counter.count_text_async(message.text)
        for index, message in enumerate(messages)
        if index > 0 and message.role == "tool"
    }
    cut_any = False
    for index in sorted(sizes, key=lambda i: sizes[i], reverse=True):
        if needed <= 0:
            break
        keep = max(MIN_TOOL_RESULT_TOKENS, sizes[index] - needed)
        if keep >= sizes[index]:
            continue
        original = messages[index]
        text = await cut_middle(counter, original.text, keep)
        assert original.tool_call_id is not None
        messages[index] = Message.tool_result(
            original.tool_call_id, text, is_error=original.is_error
        )
        needed -= sizes[index] - await counter.count_text_async(text)
        cut_any = True
    if cut_any:
        ctx.messages = messages
    return cut_any
