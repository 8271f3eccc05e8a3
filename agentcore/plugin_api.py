"""Everything a plugin needs from the core, in one documented place.

A plugin imports the core's names from here (or from ``agentcore`` itself)
and from :mod:`agentcore.cli.plugin_api` for the ``agentcore`` command; the
modules these names live in are the core's own business and may move. The
first-party plugins (those in the repository's ``plugins/``) import nothing
else from the core (a test reads their imports), so a third-party plugin can
do whatever they do.

What is here, by job:

- **Hooks**: :data:`~agentcore.hookimpl` marks an implementation, ``hookspec``
  a plugin's own hook specification (see ``register_hookspecs``);
  :func:`hook_policy` declares how a hook of its own is called, and
  :func:`call_hook` calls it as the core calls its hooks (:class:`CoreHooks`
  calls the core's hooks, one typed method each).
- **A turn**: :class:`TurnContext` is what turn hooks get; its ``session`` is
  a :class:`SessionHandle`, what a hook may call on the session.
  :class:`ModelCallInfo` and :class:`ToolCallInfo` describe one model or tool
  call. :class:`AgentConfig` holds the plugin settings a
  :class:`PluginSetting` declares.
- **Plugin state**: :class:`Stash` and :class:`StashKey` (``ctx.session.stash``,
  ``ctx.session.bundle.stash``).
- **Models**: :class:`LlmProvider`, :class:`LlmRequest`, :class:`LlmResponse`,
  :class:`ToolSpec`, :class:`LlmCycle` and :class:`CycleResult` for a call of
  the plugin's own; :class:`HookedProvider` makes such a call fire
  ``after_model_call``; :func:`get_provider` and :func:`check_provider_name`
  select a provider by name; :func:`discover_context_window` asks a server
  for a model's window.
- **Messages**: :class:`Message`, :class:`TextBlock`, :class:`ToolUseBlock`,
  :func:`valid_text`, :func:`message_to_dict`, the format converters
  (:func:`to_openai`, :func:`from_openai`...).
- **Slots**: :class:`ContextSlot`, :class:`SlotConfig`, :class:`FocusedConfig`,
  :func:`render_context` and :func:`render_parts` (what a request carries for
  a slot), :func:`system_message`, :func:`pin_group`.
- **Tokens and budgets**: :class:`TokenCounter`, :func:`get_token_counter`,
  :func:`count_tokens`, :func:`count_text_tokens`; :func:`reply_reservation`,
  :func:`provider_model`; :class:`Usage`, :class:`CostTracker`,
  :class:`PriceTable`.
- **Storage**: :class:`MemoryStore`, :class:`InMemoryStore`, :class:`SqliteStore`,
  ``JsonValue``.
- **Errors**: :class:`AgentCoreError` and the errors a plugin raises or catches,
  among them the kinds of :class:`LlmError` a provider of the plugin's own
  raises (:class:`RateLimitError`, :class:`ServiceUnavailableError`...), so the
  core's retries and the plugin's own fallbacks treat it as any provider.
- **Checking settings**: the rules of :mod:`agentcore.validators`
  (:class:`Rule`, ``POSITIVE_INT``, ``RATIO``, :func:`one_of`...), which raise
  :class:`ConfigError` naming the field.
- **Sync code**: :func:`run_sync`.

The constants and type aliases (which carry no docstring of their own at run
time) are described in the docs' plugin API reference.
"""

from agentcore.agent import Agent
from agentcore.budget import OVERFLOW_KEY, provider_model, reply_reservation
from agentcore.builder import AgentBuilder, AgentBundle, AgentConfig
from agentcore.call_hooks import HookedProvider
from agentcore.calls import ModelCallInfo, ToolCallInfo
from agentcore.context import TurnContext
from agentcore.cycle import CycleResult, LlmCycle
from agentcore.errors import (
    AgentCoreError,
    AuthenticationError,
    BadRequestError,
    ConfigError,
    ConflictError,
    ContextWindowExceededError,
    CorruptDataError,
    LlmError,
    LlmTimeoutError,
    RateLimitError,
    ServiceUnavailableError,
    SessionError,
)
from agentcore.formats import (
    check_history,
    from_anthropic,
    from_langchain,
    from_openai,
    to_anthropic,
    to_langchain,
    to_openai,
)
from agentcore.hook_calls import CoreHooks, call_hook
from agentcore.hookspecs import HookPolicy, hook_policy, hookimpl, hookspec
from agentcore.llm import LlmProvider, LlmRequest, LlmResponse, ToolSpec
from agentcore.messages import Message, TextBlock, ToolUseBlock, valid_text
from agentcore.pins import pin_group
from agentcore.pricing import PriceTable
from agentcore.providers import check_provider_name, get_provider
from agentcore.providers.windows import discover_context_window
from agentcore.serialization import message_to_dict
from agentcore.session import AgentSession
from agentcore.session_handle import SessionHandle
from agentcore.settings import PluginSetting
from agentcore.slots import (
    DEFAULT_SUMMARY_LABEL,
    ContextSlot,
    FocusedConfig,
    SlotConfig,
    SummaryPosition,
    SummaryRole,
    render_context,
    render_parts,
    system_message,
)
from agentcore.stash import Stash, StashKey
from agentcore.stores.base import JsonValue, MemoryStore
from agentcore.stores.memory import InMemoryStore
from agentcore.stores.sqlite import SqliteStore
from agentcore.sync import run_sync
from agentcore.tokens import (
    INLINE_COUNT_CHARS,
    REPLY_PRIMING_TOKENS,
    TokenCounter,
    count_text_tokens,
    count_tokens,
    get_token_counter,
)
from agentcore.tools import ToolRegistry
from agentcore.usage import CostTracker, Usage
from agentcore.validators import (
    BOOL,
    NON_EMPTY_STR,
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    POSITIVE_NUMBER,
    RATIO,
    STR,
    Rule,
    field_name,
    is_int,
    one_of,
)

__all__ = [
    "BOOL",
    "DEFAULT_SUMMARY_LABEL",
    "INLINE_COUNT_CHARS",
    "NON_EMPTY_STR",
    "NON_NEGATIVE_INT",
    "OVERFLOW_KEY",
    "POSITIVE_INT",
    "POSITIVE_NUMBER",
    "RATIO",
    "REPLY_PRIMING_TOKENS",
    "STR",
    "Agent",
    "AgentBuilder",
    "AgentBundle",
    "AgentConfig",
    "AgentCoreError",
    "AgentSession",
    "AuthenticationError",
    "BadRequestError",
    "ConfigError",
    "ConflictError",
    "ContextSlot",
    "ContextWindowExceededError",
    "CoreHooks",
    "CorruptDataError",
    "CostTracker",
    "CycleResult",
    "FocusedConfig",
    "HookPolicy",
    "HookedProvider",
    "InMemoryStore",
    "JsonValue",
    "LlmCycle",
    "LlmError",
    "LlmProvider",
    "LlmRequest",
    "LlmResponse",
    "LlmTimeoutError",
    "MemoryStore",
    "Message",
    "ModelCallInfo",
    "PluginSetting",
    "PriceTable",
    "RateLimitError",
    "Rule",
    "ServiceUnavailableError",
    "SessionError",
    "SessionHandle",
    "SlotConfig",
    "SqliteStore",
    "Stash",
    "StashKey",
    "SummaryPosition",
    "SummaryRole",
    "TextBlock",
    "TokenCounter",
    "ToolCallInfo",
    "ToolRegistry",
    "ToolSpec",
    "ToolUseBlock",
    "TurnContext",
    "Usage",
    "call_hook",
    "check_history",
    "check_provider_name",
    "count_text_tokens",
    "count_tokens",
    "discover_context_window",
    "field_name",
    "from_anthropic",
    "from_langchain",
    "from_openai",
    "get_provider",
    "get_token_counter",
    "hook_policy",
    "hookimpl",
    "hookspec",
    "is_int",
    "message_to_dict",
    "one_of",
    "pin_group",
    "provider_model",
    "render_context",
    "render_parts",
    "reply_reservation",
    "run_sync",
    "system_message",
    "to_anthropic",
    "to_langchain",
    "to_openai",
    "valid_text",
]
