"""Hook specifications: the points where plugins extend agentcore.

Implement a hook with :data:`agentcore.hookimpl` on a module or object and
register it (``AgentBuilder().plugin(obj)``) or publish it in the
``agentcore`` entry-point group. Hooks are called with keyword arguments; an
implementation may accept only the arguments it needs. The turn hooks may be
``async def``: the session awaits what they return.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from agentcore.builder import AgentConfig
    from agentcore.context import TurnContext
    from agentcore.llm import LlmProvider
    from agentcore.settings import PluginSetting

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
def before_model_call(ctx: TurnContext) -> Awaitable[None] | None:
    """A turn is about to send a request to the model.

    Fires before every model call of a turn: the first one, and the one after
    each round of tool calls. ``ctx.messages`` holds the messages the turn has
    added so far (the user's, then the assistant's and the tool results of
    earlier rounds); the request will carry ``ctx.slot.load_messages()``
    followed by them, read again after the hooks ran. So an implementation
    that shrinks the slot's context (a new summary saved with
    :meth:`~agentcore.ContextSlot.save`) shrinks this very request; one that
    replaces ``ctx.messages`` with shortened copies (a tool result cut to fit)
    shortens them in this request only, the turn stores them whole.
    ``ctx.extra[agentcore.budget.OVERFLOW_KEY]`` holds the server's
    :class:`~agentcore.errors.ContextWindowExceededError` when the call is the
    one retry after the server refused the request as too long.

    An exception raised here is logged on the ``agentcore`` logger and does
    not break the turn, except a
    :class:`~agentcore.errors.ContextWindowExceededError`: it ends the turn
    before the call, and nothing of the turn is stored.

    :param ctx: The turn's mutable context.
    """


@hookspec
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
def post_turn_end(ctx: TurnContext) -> Awaitable[None] | None:
    """Work that follows a stored turn, before the turn index advances.

    The place for maintenance such as summarizing the conversation: the
    implementation may call ``ctx.provider``, update ``ctx.slot`` with
    :meth:`~agentcore.ContextSlot.save`, and write ``ctx.memory``. It may hand
    longer work to ``ctx.session.run_in_background``.

    An exception raised here is logged at ERROR on the ``agentcore`` logger
    with the plugin name, session and turn; the turn still returns its reply
    and the other implementations still run.

    :param ctx: The turn's mutable context.
    """


@hookspec
def register_settings() -> Sequence[PluginSetting]:
    """Declare the builder settings this plugin owns.

    Called once when :meth:`~agentcore.AgentBuilder.build` runs. A setting
    given to the builder that no installed plugin declares fails the build.

    :return: The settings, each with its name and a converter that validates
        the value the user gave.
    """
    return ()


@hookspec
def register_providers(register: Callable[[str, ProviderFactory], None]) -> None:
    """Register providers selectable by name with :func:`agentcore.providers.get_provider`.

    :param register: Call ``register(prefix, factory)``;
        ``get_provider("prefix:model", **options)`` then returns
        ``factory("model", **options)``.
    """


@hookspec(firstresult=True)
def summary_memory_key(config: AgentConfig) -> str | None:
    """Name the session-data key that holds the conversation summary.

    :meth:`~agentcore.AgentSession.get_conversation_summary` reads this key.
    The first non-None answer wins; None from every plugin means the session
    keeps no summary.

    :param config: The bundle's configuration, with every plugin setting.
    :return: The key, or None when this plugin keeps no summary for ``config``.
    """
