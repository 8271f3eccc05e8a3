"""A third-party plugin written against the plugin API alone: ``tail_keeper``.

It keeps every model call inside a token budget the way autosummary's
fallback does, by leaving the oldest messages out of that one request (a
tool call and its results together), and after a turn that left some out it
asks the model for a one-line note of what was dropped, through a provider
that fires ``after_model_call`` for tracers, and stores the note and what it
cost in the session. It also declares a hook of its own, so that other
plugins may veto a note. Everything comes from :mod:`agentcore.plugin_api`.

Run it offline (``MockProvider`` answers):

    python docs/examples/third_party_plugin.py
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ConfigError,
    LlmRequest,
    Message,
    PluginSetting,
    TurnContext,
    hookimpl,
)
from agentcore.plugin_api import (
    JsonValue,
    SessionHandle,
    StashKey,
    discover_context_window,
    get_token_counter,
    hookspec,
    pin_group,
    provider_model,
    render_context,
    reply_reservation,
)
from agentcore.testing import MockProvider

SETTING = "tail_budget"
"""The builder setting: the window in tokens (None: ask the provider for its model's)."""

NOTE_KEY = "tail_keeper.note"
"""The session-data key of the last note."""

PURPOSE = "tail_keeper"
"""The cost purpose of the note calls, and their request's ``purpose``."""

LEFT_OUT = StashKey[list[Message]]("tail_keeper left out")
"""Per session: the messages the last request of the turn left out."""


def check_budget(value: Any) -> int | None:
    """The setting's value: a whole number of tokens >= 64, or None."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise ConfigError(f"{SETTING} must be an int or None, got {value!r}")
    if value is not None and value < 64:
        raise ConfigError(f"{SETTING} must be at least 64 tokens, got {value}")
    return value


class NoteHooks:
    """The hook this plugin adds: other plugins may veto a note."""

    @hookspec
    def before_tail_note(self, ctx: TurnContext, left_out: int) -> bool | None:
        """Called before the note call; return False to skip the note.

        :param ctx: The turn that left messages out.
        :param left_out: How many messages its last request left out.
        """
        raise NotImplementedError


async def window_of(ctx: TurnContext) -> int | None:
    """The budget: the setting, else the window the provider tells for the turn's model."""
    budget: int | None = ctx.config.get(SETTING)
    if budget is not None:
        return budget
    model = ctx.session.agent.model or provider_model(ctx.provider)
    return await discover_context_window(ctx.provider, model)


def fit(context: Sequence[Message], new: Sequence[Message], limit: int, model: str | None) -> int:
    """How many of ``context``'s oldest non-system messages to leave out to fit ``limit``."""
    counter = get_token_counter(model)
    head = 1 if context and context[0].role == "system" else 0
    drop = head
    while (
        drop < len(context)
        and counter.count_messages([*context[:head], *context[drop:], *new]) > limit
    ):
        drop = pin_group(context, drop).stop  # a tool call goes with its results
    return drop - head


class TailKeeper:
    """The plugin: register it with ``AgentBuilder().plugin(TailKeeper())``."""

    @hookimpl
    def register_hookspecs(self, pluginmanager: Any) -> None:
        """Declare ``before_tail_note``."""
        pluginmanager.add_hookspecs(NoteHooks)

    @hookimpl
    def register_settings(self) -> list[PluginSetting]:
        """Declare the ``tail_budget`` setting."""
        return [PluginSetting(SETTING, check_budget, "the token budget of every request")]

    @hookimpl
    async def before_model_call(self, ctx: TurnContext) -> None:
        """Leave the oldest messages out of this request when it would not fit."""
        window = await window_of(ctx)
        if window is None:
            return
        slot = ctx.slot  # what the call sends unless a hook set ctx.context:
        context = ctx.context
        if context is None:
            context = render_context(slot.system_prompt, slot.messages, slot.config)
        limit = window - reply_reservation(None, window)
        left_out = fit(context, ctx.messages, limit, ctx.session.agent.model)
        head = 1 if context and context[0].role == "system" else 0
        ctx.session.stash[LEFT_OUT] = context[head : head + left_out]
        if left_out:
            ctx.context = [*context[:head], *context[head + left_out :]]

    @hookimpl
    async def post_turn_end(self, ctx: TurnContext) -> None:
        """Note what the turn's last request left out, in the session data."""
        left_out = ctx.session.stash.get(LEFT_OUT, [])
        if not left_out:
            return
        hook = ctx.session.bundle.plugin_manager.hook
        if False in hook.before_tail_note(ctx=ctx, left_out=len(left_out)):
            return
        await store_note(ctx.session, ctx, left_out)


async def store_note(session: SessionHandle, ctx: TurnContext, left_out: list[Message]) -> None:
    """Ask the model for a note of what was left out; store it with its cost, in one write."""
    oldest = [m.text for m in left_out if m.text]
    request = LlmRequest(
        [Message.user("In one line, what did these messages say?\n" + "\n".join(oldest))],
        purpose=PURPOSE,
        max_tokens=64,
    )
    response = await ctx.provider.complete(request)  # ctx.provider fires after_model_call
    note: JsonValue = {"left_out": len(left_out), "note": response.message.text}
    await session.record_usage(response.usage, PURPOSE, data={NOTE_KEY: note})


async def demo() -> JsonValue:
    """Three long turns in a 300-token budget; returns the note stored after the last."""

    def reply(request: LlmRequest) -> str:
        return "they greeted" if request.purpose == PURPOSE else "ok " * 40

    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=reply))
        .plugin(TailKeeper())
        .setting(SETTING, 300)
        .load_plugins(False)
        .build()
    )
    async with AgentSession(
        Agent("tail-demo", system_prompt="Be brief."), "demo", bundle
    ) as session:
        for turn in range(3):
            await session.submit_turn(f"message {turn}: " + "words " * 60)
        return await session.get_session_data(NOTE_KEY)


if __name__ == "__main__":
    print(asyncio.run(demo()))
