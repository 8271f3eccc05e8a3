"""The context budget: what a request may hold.

One rule holds for every request agentcore sends, turn or plugin call::

    counted messages + counted tool definitions + reply reservation <= window

The reply reservation is the request's ``max_tokens`` when it has one, else
:data:`DEFAULT_REPLY_SHARE` of the window (:func:`reply_reservation`). A
plugin that fits requests into a window corrects the counts into the tokens
of the model that receives them (learning that correction from the usage
servers report).

:data:`OVERFLOW_KEY` is the ``TurnContext.stash`` key that holds the
:class:`~agentcore.errors.ContextWindowExceededError` a server raised, while
the hooks of the retry that follows it run.
"""

from __future__ import annotations

from agentcore.agent import Agent
from agentcore.errors import ContextWindowExceededError
from agentcore.llm import LlmProvider
from agentcore.stash import StashKey
from agentcore.tokens import TokenCounter, get_token_counter

DEFAULT_REPLY_SHARE = 0.125
"""Share of the window reserved for the reply of a request without ``max_tokens``."""

OVERFLOW_KEY = StashKey[ContextWindowExceededError]("agentcore.context_overflow")
"""``TurnContext.stash`` key of the server's overflow error during the retry's hooks.

``ctx.stash.get(OVERFLOW_KEY, None)`` is the error in the ``before_model_call``
hooks of the one retry after a refusal for length, and None otherwise.
"""


def provider_model(provider: LlmProvider) -> str | None:
    """The provider's default model name, when it exposes one as ``.model``."""
    model = getattr(provider, "model", None)
    return model if isinstance(model, str) and model else None


def turn_counter(agent: Agent, provider: LlmProvider) -> TokenCounter:
    """The counter of ``agent``'s turn requests: its ``token_counter``, else its model's.

    The model is the agent's, else the provider's default. Sessions count
    each message they store with it, so the counts the budget uses are made
    once and stored with the messages.
    """
    if agent.token_counter is not None:
        return agent.token_counter
    return get_token_counter(agent.model or provider_model(provider))


def reply_reservation(max_tokens: int | None, window: int) -> int:
    """Tokens a request reserves for its reply in a window of ``window`` tokens.

    ``max_tokens`` when set, else :data:`DEFAULT_REPLY_SHARE` of the window
    (at least 1).
    """
    if max_tokens is not None:
        return max_tokens
    return max(1, int(window * DEFAULT_REPLY_SHARE))
