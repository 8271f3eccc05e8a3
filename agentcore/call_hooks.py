"""Fire the call hooks: a provider that reports its calls, and the hooks around tool calls.

A session hands every turn a :class:`HookedProvider` (as
:attr:`TurnContext.provider <agentcore.TurnContext.provider>` and to the
turn's own cycle), so each model call made through it, a plugin's own
calls included, fires ``after_model_call``; and it gives the turn's cycle the
:func:`tool_call_hooks` that fire ``before_tool_call`` and
``after_tool_call``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import pluggy

from agentcore._hook_loop import call_hook, hook_is_idle
from agentcore.calls import ModelCallInfo, ToolCallInfo
from agentcore.errors import MalformedResponseError
from agentcore.hook_calls import CoreHooks
from agentcore.llm import LlmProvider, LlmRequest, LlmResponse, ResponseComplete, StreamEvent
from agentcore.tools import ToolCallHooks

if TYPE_CHECKING:
    from agentcore.context import TurnContext


class HookedProvider:
    """An :class:`~agentcore.llm.LlmProvider` that fires ``after_model_call`` for each call.

    Wraps ``provider`` for the turn ``ctx``: :meth:`complete` and
    :meth:`stream` pass the request through unchanged, then await
    ``after_model_call(ctx=ctx, call=ModelCallInfo(...))`` once the call is
    over, whether it returned, raised or was cancelled; the hook's own
    exceptions are logged and never reach the caller. Other attributes
    (such as ``model``) are read from the wrapped provider.
    """

    def __init__(
        self, provider: LlmProvider, plugin_manager: pluggy.PluginManager, ctx: TurnContext
    ) -> None:
        if isinstance(provider, HookedProvider):
            provider = provider.wrapped
        self._provider = provider
        self._pm = plugin_manager
        self._ctx = ctx

    @property
    def wrapped(self) -> LlmProvider:
        """The provider that serves the calls."""
        return self._provider

    @property
    def model(self) -> Any:
        """The wrapped provider's ``model`` (read on every turn: no ``__getattr__`` detour)."""
        return self._provider.model  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._provider, name)

    def __repr__(self) -> str:
        return f"HookedProvider({self._provider!r})"

    async def complete(self, request: LlmRequest) -> LlmResponse:
        """Send ``request`` to the wrapped provider, then report the call."""
        started_at, start = time.time(), time.perf_counter()
        try:
            response = await self._provider.complete(request)
        except BaseException as exc:
            await self._report(request, None, exc, started_at, start, streamed=False)
            raise
        await self._report(request, response, None, started_at, start, streamed=False)
        return response

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        """Stream ``request`` from the wrapped provider; report the call at its final event."""
        started_at, start = time.time(), time.perf_counter()
        reported = False
        events = self._provider.stream(request)
        try:
            async for event in events:
                if isinstance(event, ResponseComplete) and not reported:
                    reported = True
                    await self._report(request, event.response, None, started_at, start)
                yield event
            if not reported:
                reported = True
                error = MalformedResponseError(
                    "the provider's stream ended without a ResponseComplete event"
                )
                await self._report(request, None, error, started_at, start)
        except BaseException as exc:
            if not reported:
                reported = True
                await self._report(request, None, exc, started_at, start)
            raise
        finally:
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()

    async def _report(
        self,
        request: LlmRequest,
        response: LlmResponse | None,
        error: BaseException | None,
        started_at: float,
        start: float,
        *,
        streamed: bool = True,
    ) -> None:
        caller = self._pm.hook.after_model_call
        if hook_is_idle(caller):
            return  # no plugin would read the record: it is not made
        call = ModelCallInfo(
            request=request,
            provider=self._provider,
            response=response,
            error=error,
            started_at=started_at,
            duration=time.perf_counter() - start,
            streamed=streamed,
        )
        await call_hook(caller, ctx=self._ctx, call=call)


def tool_call_hooks(plugin_manager: pluggy.PluginManager, ctx: TurnContext) -> ToolCallHooks:
    """The hooks a turn's cycle awaits around each tool call.

    They fire ``before_tool_call`` and ``after_tool_call`` with ``ctx`` and
    the :class:`~agentcore.calls.ToolCallInfo`; an implementation that
    raises is logged and does not change the call.
    """
    hooks = CoreHooks(plugin_manager)

    async def before(call: ToolCallInfo) -> None:
        await hooks.before_tool_call(ctx=ctx, call=call)

    async def after(call: ToolCallInfo) -> None:
        await hooks.after_tool_call(ctx=ctx, call=call)

    return ToolCallHooks(before, after)
