"""Hook specifications: the points where plugins extend agentcore.

Implement a hook with :data:`agentcore.hookimpl` on a module or object and
register it (``AgentBuilder().plugin(obj)``) or publish it in the
``agentcore`` entry-point group. Hooks are called with keyword arguments; an
implementation may accept only the arguments it needs. The turn hooks and the
call hooks may be ``async def``: agentcore awaits what they return.

Every hook keeps pluggy's calling rules: ``tryfirst``/``trylast`` order the
implementations, ``@hookimpl(wrapper=True)`` (and the older
``hookwrapper=True``) wrappers run around the others, async ones included,
and see their results or their exception, and a ``firstresult`` hook returns
the first non-None answer. A wrapper must be a plain generator function; an
``async`` wrapper, or an ``async`` implementation of a hook in
:data:`SYNC_HOOKS`, is refused by :meth:`~agentcore.AgentBuilder.build` with a
:class:`~agentcore.errors.ConfigError`.

Each spec declares how agentcore calls it with
:func:`~agentcore.hookspecs.hook_policy`, beside ``@hookspec``:
``isolate=True`` (an implementation that raises is logged and the others
still run), ``propagate=(...)`` (exception types that reach the caller all
the same), or ``sync=True`` (pluggy calls it synchronously).
:func:`agentcore.hook_calls.call_hook` reads the policy from the spec, and
``CoreHooks(plugin_manager)`` (:class:`agentcore.hook_calls.CoreHooks`) has
one typed method per hook.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

import pluggy

from agentcore._hook_policy import HookPolicy as HookPolicy
from agentcore._hook_policy import hook_policy as hook_policy
from agentcore._hook_policy import policy_of as policy_of
from agentcore._hook_policy import policy_table as policy_table
from agentcore.errors import ContextWindowExceededError

if TYPE_CHECKING:
    from agentcore.calls import ModelCallInfo, ToolCallInfo
    from agentcore.context import TurnContext
    from agentcore.llm import LlmProvider
    from agentcore.session_handle import SessionHandle
    from agentcore.settings import PluginSetting
    from agentcore.slots import ContextSlot, SlotConfig
    from agentcore.tools import Tool

PROJECT_NAME = "agentcore"
"""The pluggy project name, also the entry-point group plugins publish in."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
"""Marks a function of this module as a hook specification."""

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marks a plugin function as an implementation of an agentcore hook."""

ProviderFactory = Callable[..., "LlmProvider"]
"""Builds a provider: called with the model name (the part after ``"prefix:"``)
and the keyword options given to :func:`agentcore.providers.get_provider`."""


@hookspec
@hook_policy(isolate=False)
def on_turn_start(ctx: TurnContext) -> Awaitable[None] | None:
    """A turn is about to call the model.

    Fires after the read-only check and before the context is loaded, on both
    :meth:`~agentcore.AgentSession.submit_turn` and
    :meth:`~agentcore.AgentSession.submit_turn_stream`. ``ctx.messages`` holds
    the user's new message; ``ctx.response`` and ``ctx.usage`` are None.

    An exception raised here aborts the turn before anything is stored.

    :param ctx: The turn's mutable context.
    """


@hookspec
@hook_policy(isolate=True, propagate=(ContextWindowExceededError,))
def before_model_call(ctx: TurnContext) -> Awaitable[None] | None:
    """A turn is about to send a request to the model.

    Fires before every model call of a turn: the first one, and the one after
    each round of tool calls. ``ctx.messages`` holds the messages the turn has
    added so far (the user's, then the assistant's and the tool results of
    earlier rounds); the request will carry ``ctx.slot.load_messages()``
    followed by them, read again after the hooks ran. So an implementation
    that shrinks the slot's context (a new ``summary_override`` stored with
    ``ctx.session.write_slot_config(...)``) shrinks this very request; one that
    replaces ``ctx.messages`` with shortened copies (a tool result cut to fit)
    shortens them in this request only, the turn stores them whole; one that
    sets ``ctx.context`` sends that list instead of ``ctx.slot.load_messages()``
    in this request only (it is reset before every call's hooks); one that
    puts fields in ``ctx.request_body`` adds them to this request's body
    (emptied before every call's hooks too); one that sets
    ``ctx.cache_newest = False`` (a message of this request alone) keeps
    the provider from writing a prompt-cache entry at its end.
    ``ctx.stash[agentcore.budget.OVERFLOW_KEY]`` holds the server's
    :class:`~agentcore.errors.ContextWindowExceededError` when the call is the
    one retry after the server refused the request as too long
    (``ctx.stash.get(OVERFLOW_KEY, None)`` is None otherwise).

    An exception raised here is logged on the ``agentcore`` logger and does
    not break the turn, except a
    :class:`~agentcore.errors.ContextWindowExceededError`: it ends the turn
    before the call, and nothing of the turn is stored.

    :param ctx: The turn's mutable context.
    """


@hookspec
@hook_policy(isolate=True)
def offer_tools(ctx: TurnContext) -> Awaitable[Sequence[Tool] | None] | Sequence[Tool] | None:
    """Return tools to offer the model in this turn, beside the bundle's registry.

    Called once per turn, after :func:`on_turn_start` and before the first
    model call; the tools returned are offered on every call of the turn and
    answered like the registry's (its timeout and result limit, the tool call
    hooks). A tool can close over ``ctx`` to act on the turn's session. A tool
    whose name is taken (by the registry or by another plugin's tool) is left
    out, with an error logged; the turn goes on.

    :param ctx: The turn's context.
    :return: The tools to offer (see :class:`~agentcore.tools.Tool`), or None.
    """


@hookspec
@hook_policy(isolate=True)
def on_turn_end(ctx: TurnContext) -> Awaitable[None] | None:
    """A turn has been stored. A pure notification.

    Fires once the turn's messages and the slot config are saved, before
    :func:`post_turn_end`. ``ctx.messages`` holds every message the turn
    added (the user's, the assistant's, tool results) and ``ctx.response``
    the model's final reply. On a streamed turn it fires when the stream is
    exhausted, with ``ctx.is_stream`` True.

    An exception raised here is logged on the ``agentcore`` logger and does
    not break the turn.

    :param ctx: The turn's mutable context.
    """


@hookspec
@hook_policy(isolate=True)
def post_turn_end(ctx: TurnContext) -> Awaitable[None] | None:
    """Work that follows a stored turn (the session's turn index has advanced already).

    The place for maintenance such as condensing the conversation: the
    implementation may call ``ctx.provider``, update ``ctx.slot`` with
    :meth:`~agentcore.AgentSession.write_slot_config`, and write ``ctx.memory``. It may hand
    longer work to ``ctx.session.run_in_background``.

    An exception raised here is logged at ERROR on the ``agentcore`` logger
    with the plugin name, session and turn; the turn still returns its reply
    and the other implementations still run. A cancel of the caller reaches
    the implementation as ``CancelledError``: it must let it propagate (the
    turn stays stored; the end hooks that have not run are skipped).

    :param ctx: The turn's mutable context.
    """


@hookspec
@hook_policy(isolate=True)
def on_turn_error(ctx: TurnContext, error: BaseException) -> Awaitable[None] | None:
    """A turn stopped with an exception after :func:`on_turn_start` was called.

    The partner of :func:`on_turn_end` for a turn that does not complete: an
    exception from ``on_turn_start`` itself, a provider error, a failed store
    write, cancellation of the caller, or a streamed turn abandoned before
    its end. So every turn that calls ``on_turn_start`` fires exactly one of
    ``on_turn_end`` and ``on_turn_error``; an implementation must expect
    that its own ``on_turn_start`` may not have run. A pure notification:
    the error still reaches the caller. ``ctx.messages`` holds what the turn
    had added when it failed.

    An exception raised here is logged on the ``agentcore`` logger.

    :param ctx: The turn's mutable context.
    :param error: The exception that stopped the turn (``CancelledError`` for
        a cancelled turn, ``GeneratorExit`` for an abandoned stream). A turn
        cancelled during its store write is stored all the same: then
        ``ctx.session.turn_index`` is past ``ctx.turn_index``.
    """


@hookspec
@hook_policy(isolate=True)
def after_model_call(ctx: TurnContext, call: ModelCallInfo) -> Awaitable[None] | None:
    """A call to the model is over: it returned, raised or was cancelled.

    Fires for every call made through ``ctx.provider``: the turn's own calls
    (``call.purpose == "turn"``) and those plugins make under their own
    purpose, including calls that run in the background after the turn.
    ``call`` holds the request, the response or the error, the usage, the
    start time and the duration: what a plugin needs to time, meter or trace
    each call. On a streamed call it fires when the final event arrives,
    before that event reaches the consumer.

    An exception raised here is logged on the ``agentcore`` logger and
    does not change the call.

    :param ctx: The context of the turn the call belongs to.
    :param call: The finished call.
    """


@hookspec
@hook_policy(isolate=True)
def before_tool_call(ctx: TurnContext, call: ToolCallInfo) -> Awaitable[None] | None:
    """A tool call of the model is about to run.

    Fires for every tool call of a turn, in the task that runs the tool, so
    a context variable set here (such as a tracer's current span) is seen
    by the tool. ``call.result``, ``call.error`` and ``call.duration`` are
    None; ``call.call_id`` pairs it with :func:`after_tool_call`.

    An exception raised here is logged on the ``agentcore`` logger and
    does not stop the tool.

    :param ctx: The turn's mutable context.
    :param call: The tool call: name, arguments, id and start time.
    """


@hookspec
@hook_policy(isolate=True)
def after_tool_call(ctx: TurnContext, call: ToolCallInfo) -> Awaitable[None] | None:
    """A tool call has been answered, or cancelled with its turn.

    Fires once for each :func:`before_tool_call`. ``call.result`` is the
    tool result message the model gets (``is_error`` set for a failure);
    ``call.error`` is the exception behind a failure (what the tool raised,
    ``TimeoutError`` when it ran out of time, ``CancelledError`` with
    ``call.result`` None when the turn was cancelled); ``call.duration``
    is the time the call took.

    An exception raised here is logged on the ``agentcore`` logger and
    does not change the result.

    :param ctx: The turn's mutable context.
    :param call: The finished tool call.
    """


@hookspec(historic=True)
@hook_policy(sync=True)
def register_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Add this plugin's own hooks: call ``pluginmanager.add_hookspecs(module_or_class)``.

    The way pytest's ``pytest_addhooks`` works. Called for each plugin as it
    is registered (a historic hook: a plugin registered later is called
    too), before the manager checks that every implemented hook is known,
    so one plugin may declare hooks that another plugin implements. Mark the
    specifications with :data:`hookspec` and give each a docstring, as this
    module does. An implementation of a plugin's hook in a plugin that
    should also work without it takes ``@hookimpl(optionalhook=True)``.

    :param pluginmanager: The bundle's plugin manager.
    """


@hookspec
@hook_policy(sync=True)
def register_settings() -> Sequence[PluginSetting]:
    """Declare the builder settings this plugin owns.

    Called once when :meth:`~agentcore.AgentBuilder.build` runs. A setting
    given to the builder that no installed plugin declares fails the build.

    :return: The settings, each with its name and a converter that validates
        the value the user gave.
    """
    return ()


@hookspec
@hook_policy(sync=True)
def register_providers(register: Callable[[str, ProviderFactory], None]) -> None:
    """Register providers selectable by name with :func:`agentcore.providers.get_provider`.

    :param register: Call ``register(prefix, factory)``;
        ``get_provider("prefix:model", **options)`` then returns
        ``factory("model", **options)``.
    """


@hookspec
@hook_policy(isolate=False)
def check_slot_config(
    session: SessionHandle, slot: ContextSlot, config: SlotConfig
) -> Awaitable[None] | None:
    """Check a slot config the user is about to store; raise to refuse it.

    Called by :meth:`~agentcore.AgentSession.pin` and
    :meth:`~agentcore.AgentSession.unpin` before the new config is written.
    An exception (a :class:`~agentcore.errors.ConfigError` naming the
    problem) propagates to the caller and nothing is stored.

    :param session: The session whose slot changes.
    :param slot: The slot, holding its current config and raw history.
    :param config: The config about to be stored.
    """


SYNC_HOOKS = frozenset(
    name
    for name, value in list(globals().items())
    if hasattr(value, f"{PROJECT_NAME}_spec") and policy_of(value).sync
)
"""Hooks pluggy calls synchronously (declared ``@hook_policy(sync=True)``): plain ``def`` only.

Every other hook is called by agentcore, which awaits what an implementation
returns; an ``async`` implementation of a hook listed here is refused when
the plugin is registered."""
