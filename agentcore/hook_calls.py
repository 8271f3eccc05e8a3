"""Calling hooks: :class:`CoreHooks`, one typed method per core hook, and :func:`call_hook`.

The core calls each of its hooks through :class:`CoreHooks`
(``CoreHooks(bundle.plugin_manager)``), so a hook's name and arguments are checked by mypy, and
the awaited ones go through the one call loop, :func:`call_hook`, which reads
each hook's policy from its spec (:func:`agentcore.hookspecs.hook_policy`).
A plugin that declares hooks of its own calls them the same way:
``await call_hook(pm.hook.before_recall, ctx=ctx, query=query)``, or through
a small typed class of its own like :class:`CoreHooks`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pluggy

from agentcore._hook_loop import await_me_maybe, call_hook, hook_is_idle

if TYPE_CHECKING:
    from agentcore.calls import ModelCallInfo, ToolCallInfo
    from agentcore.context import TurnContext
    from agentcore.hookspecs import ProviderFactory
    from agentcore.session_handle import SessionHandle
    from agentcore.settings import PluginSetting
    from agentcore.slots import ContextSlot, SlotConfig
    from agentcore.tools import Tool

__all__ = ["CoreHooks", "await_me_maybe", "call_hook"]


class CoreHooks:
    """The core's hooks of one plugin manager, as typed keyword-only methods.

    ``CoreHooks(bundle.plugin_manager)`` calls a bundle's. Each method fires the hook of
    its name (documented in :mod:`agentcore.hookspecs`): the awaited hooks
    through :func:`call_hook`, under the policy their spec declares; the
    synchronous ones (``register_*``) through pluggy's own call. Wrappers
    run around every one of them.
    """

    def __init__(self, plugin_manager: pluggy.PluginManager) -> None:
        self._pm = plugin_manager

    @property
    def plugin_manager(self) -> pluggy.PluginManager:
        """The manager whose hooks these are."""
        return self._pm

    def __repr__(self) -> str:
        return f"CoreHooks({self._pm!r})"

    async def on_turn_start(self, *, ctx: TurnContext) -> None:
        """A turn is about to call the model; an exception aborts the turn."""
        caller = self._pm.hook.on_turn_start
        if not hook_is_idle(caller):
            await call_hook(caller, ctx=ctx)

    async def before_model_call(self, *, ctx: TurnContext) -> None:
        """A request is about to be sent; only ``ContextWindowExceededError`` propagates."""
        caller = self._pm.hook.before_model_call
        if not hook_is_idle(caller):
            await call_hook(caller, ctx=ctx)

    async def offer_tools(self, *, ctx: TurnContext) -> list[Tool]:
        """The tools the plugins offer for this turn, in hook order (isolated)."""
        caller = self._pm.hook.offer_tools
        if hook_is_idle(caller):
            return []
        offered: list[Sequence[Tool]] = await call_hook(caller, ctx=ctx)
        return [tool for tools in offered for tool in tools]

    async def on_turn_end(self, *, ctx: TurnContext) -> None:
        """A turn has been stored; failures are logged."""
        caller = self._pm.hook.on_turn_end
        if not hook_is_idle(caller):
            await call_hook(caller, ctx=ctx)

    async def post_turn_end(self, *, ctx: TurnContext) -> None:
        """The work after a stored turn; failures are logged."""
        caller = self._pm.hook.post_turn_end
        if not hook_is_idle(caller):
            await call_hook(caller, ctx=ctx)

    def has_end_hooks(self) -> bool:
        """Whether calling ``on_turn_end`` and ``post_turn_end`` would run anything."""
        hook = self._pm.hook
        return not (hook_is_idle(hook.on_turn_end) and hook_is_idle(hook.post_turn_end))

    async def on_turn_error(self, *, ctx: TurnContext, error: BaseException) -> None:
        """A turn stopped with ``error``; failures are logged."""
        await call_hook(self._pm.hook.on_turn_error, ctx=ctx, error=error)

    async def after_model_call(self, *, ctx: TurnContext, call: ModelCallInfo) -> None:
        """A model call is over; failures are logged."""
        caller = self._pm.hook.after_model_call
        if not hook_is_idle(caller):
            await call_hook(caller, ctx=ctx, call=call)

    async def before_tool_call(self, *, ctx: TurnContext, call: ToolCallInfo) -> None:
        """A tool call is about to run; failures are logged."""
        caller = self._pm.hook.before_tool_call
        if not hook_is_idle(caller):
            await call_hook(caller, ctx=ctx, call=call)

    async def after_tool_call(self, *, ctx: TurnContext, call: ToolCallInfo) -> None:
        """A tool call has been answered; failures are logged."""
        caller = self._pm.hook.after_tool_call
        if not hook_is_idle(caller):
            await call_hook(caller, ctx=ctx, call=call)

    async def check_slot_config(
        self, *, session: SessionHandle, slot: ContextSlot, config: SlotConfig
    ) -> None:
        """A slot config is about to be stored; an exception refuses it."""
        await call_hook(self._pm.hook.check_slot_config, session=session, slot=slot, config=config)

    def register_settings(self) -> list[Sequence[PluginSetting]]:
        """Every plugin's declared settings, one sequence per plugin."""
        groups: list[Sequence[PluginSetting]] = self._pm.hook.register_settings()
        return groups

    def register_providers(self, *, register: Callable[[str, ProviderFactory], None]) -> None:
        """Let every plugin register its providers with ``register(prefix, factory)``."""
        self._pm.hook.register_providers(register=register)
