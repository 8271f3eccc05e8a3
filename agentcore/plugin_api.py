"""What a plugin needs from the core beyond ``agentcore``'s own names, in one documented place.

A plugin takes the names every user of agentcore sees (``Agent``,
``Message``, ``TurnContext``, ``hookimpl``, the stores, the errors a user
catches...) from ``agentcore``, and the ones only a plugin needs from here;
each name has one door. :mod:`agentcore.cli.plugin_api` does the same for the
``agentcore`` command. The modules these names live in are the core's own
business and may move. The first-party plugins (those in the repository's
``plugins/``) import nothing else from the core (a test reads their
imports), so a third-party plugin can do whatever they do.

What is here, by job:

- **Hooks**: ``hookspec`` marks a plugin's own hook specification (see
  ``register_hookspecs``); :func:`hook_policy` declares how a hook of its own
  is called, and :func:`call_hook` calls it as the core calls its hooks.
- **A turn**: :class:`SessionHandle`, what a hook may call on
  ``TurnContext.session``.
- **Plugin state**: :class:`StashKey`, the typed key of ``ctx.session.stash``
  and ``ctx.session.bundle.stash``.
- **Models**: :class:`HookedProvider` makes a call of the plugin's own fire
  ``after_model_call``; :func:`get_provider` and :func:`check_provider_name`
  select a provider by name; :func:`discover_context_window` asks a server
  for a model's window.
- **Messages**: :func:`valid_text`, :func:`message_to_dict`, the format
  converters (:func:`to_openai`, :func:`from_openai`...), :func:`check_history`.
- **Slots**: :func:`render_context` and :func:`render_parts` (what a request
  carries for a slot), :func:`window_start` (the oldest message it carries),
  :func:`system_message`, :func:`pin_group`, and the
  types of a Focused slot's fields (``SummaryPosition``, ``SummaryRole``,
  ``DEFAULT_SUMMARY_LABEL``).
- **Tokens and budgets**: :class:`TokenCounter`, :func:`get_token_counter`,
  :func:`count_tokens`, :func:`count_text_tokens`; :func:`reply_reservation`,
  :func:`provider_model`, ``OVERFLOW_KEY``; :class:`PriceTable`.
- **Storage**: ``JsonValue``; :class:`SearchableStore`, a store that finds stored
  messages by what they say (:class:`MessageHit`, and :func:`matching_terms` to
  tell how much of a query a hit holds).
- **Tools**: :class:`Tool`, what the ``offer_tools`` hook returns.
- **Errors**: the kinds of ``LlmError`` a provider of the plugin's own raises
  (:class:`RateLimitError`, :class:`ServiceUnavailableError`...), so the
  core's retries and the plugin's own fallbacks treat it as any provider.
- **Checking settings**: the rules of :mod:`agentcore.validators`
  (:class:`Rule`, ``POSITIVE_INT``, ``RATIO``, :func:`one_of`...), which raise
  ``ConfigError`` naming the field.
- **Sync code**: :func:`run_sync`.

The constants and type aliases (which carry no docstring of their own at run
time) are described in the docs' plugin API reference.
"""

from agentcore.budget import OVERFLOW_KEY, provider_model, reply_reservation
from agentcore.call_hooks import HookedProvider
from agentcore.errors import (
    AuthenticationError,
    BadRequestError,
    LlmTimeoutError,
    RateLimitError,
    ServiceUnavailableError,
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
from agentcore.hook_calls import call_hook
from agentcore.hookspecs import hook_policy, hookspec
from agentcore.messages import valid_text
from agentcore.pins import pin_group
from agentcore.pricing import PriceTable
from agentcore.providers import check_provider_name, get_provider
from agentcore.providers.windows import discover_context_window
from agentcore.serialization import message_to_dict
from agentcore.session_handle import SessionHandle
from agentcore.slots import (
    DEFAULT_SUMMARY_LABEL,
    SummaryPosition,
    SummaryRole,
    render_context,
    render_parts,
    system_message,
    window_start,
)
from agentcore.stash import StashKey
from agentcore.stores.base import JsonValue
from agentcore.stores.search import MessageHit, SearchableStore, matching_terms
from agentcore.sync import run_sync
from agentcore.tokens import (
    INLINE_COUNT_CHARS,
    REPLY_PRIMING_TOKENS,
    TokenCounter,
    count_text_tokens,
    count_tokens,
    get_token_counter,
)
from agentcore.tools import Tool
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
    "AuthenticationError",
    "BadRequestError",
    "HookedProvider",
    "JsonValue",
    "LlmTimeoutError",
    "MessageHit",
    "PriceTable",
    "RateLimitError",
    "Rule",
    "SearchableStore",
    "ServiceUnavailableError",
    "SessionHandle",
    "StashKey",
    "SummaryPosition",
    "SummaryRole",
    "TokenCounter",
    "Tool",
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
    "hookspec",
    "is_int",
    "matching_terms",
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
    "window_start",
]
