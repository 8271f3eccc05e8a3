"""The context window ``agentcore chat`` measures against: given, discovered or learned.

``--max-context-tokens`` wins. Without it, the window the server showed it
serves (a refusal for length, remembered with the session) comes next, then
what :func:`~agentcore.providers.windows.discover_context_window` finds (the
table of hosted models, the provider's ``context_windows``, what a local
server reports). When nothing tells, the window stays unknown until the
first refusal for length teaches it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agentcore.errors import ContextWindowExceededError
from agentcore.hookspecs import hookimpl
from agentcore.llm import LlmProvider
from agentcore.providers.windows import discover_context_window
from agentcore.session import AgentSession
from agentcore.validators import is_int

if TYPE_CHECKING:
    from agentcore.calls import ModelCallInfo
    from agentcore.context import TurnContext

logger = logging.getLogger(__name__)

LEARNED_WINDOW_KEY = "cli.context_window"
"""Session-data key of the windows refusals taught, by model name."""


class ChatWindow:
    """The window of one chat, how it was found, and what refusals teach (a plugin).

    Registered on the chat's bundle, it sees every refusal for length of a
    turn's call (``after_model_call``), including one the core retries after
    and a plugin recovers from; :meth:`settle` then takes the window the
    refusal named and keeps it with the session.

    :param given: ``--max-context-tokens`` (None: find it with :meth:`load`).
    :param model: The model name, the key of the learned window.
    """

    def __init__(self, given: int | None, model: str | None = None) -> None:
        self.tokens = given
        self.source = "given" if given is not None else "unknown"
        """``"given"``, ``"learned"``, ``"discovered"`` or ``"unknown"``."""
        self.model = model
        self._refused: int | None = None

    async def load(self, session: AgentSession, provider: LlmProvider) -> None:
        """Find the window unless given: learned with the session, else discovered."""
        if self.source == "given":
            return
        learned = (await _learned(session)).get(self.model or "")
        if learned is not None:
            self.tokens, self.source = learned, "learned"
            return
        discovered = await discover_context_window(provider, self.model)
        if discovered is not None:
            logger.info("the context window of %r is %d tokens", self.model, discovered)
            self.tokens, self.source = discovered, "discovered"

    @hookimpl
    def after_model_call(self, ctx: TurnContext, call: ModelCallInfo) -> None:
        """Note the window a turn call's refusal for length names."""
        del ctx
        error = call.error
        if call.purpose == "turn" and isinstance(error, ContextWindowExceededError):
            limit = error.limit_tokens
            if limit is not None and limit > 0:
                self._refused = limit

    async def settle(self, session: AgentSession) -> bool:
        """Take the window a refusal named since the last call; whether it changed.

        A given window (``--max-context-tokens``) is the user's and is kept.
        The learned one is stored in the session data, so the next chat in the
        session starts with it.
        """
        limit, self._refused = self._refused, None
        if limit is None or self.source == "given" or limit == self.tokens:
            return False
        self.tokens, self.source = limit, "learned"
        stored = await _learned(session)
        stored[self.model or ""] = limit
        try:
            await session.set_session_data(LEARNED_WINDOW_KEY, dict(stored))
        except Exception as exc:  # A lost note must not hide the turn's own outcome.
            logger.warning("could not keep the learned window with the session: %s", exc)
        return True


async def _learned(session: AgentSession) -> dict[str, int]:
    stored = await session.get_session_data(LEARNED_WINDOW_KEY)
    if not isinstance(stored, dict):
        return {}
    return {str(model): window for model, window in stored.items() if is_int(window) and window > 0}
