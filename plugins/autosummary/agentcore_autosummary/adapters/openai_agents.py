"""A ``Session`` for the OpenAI Agents SDK that compacts the history it returns.

:class:`CompactingSession` wraps any session of the SDK (``SQLiteSession``,
a Redis or SQLAlchemy session, your own) and implements the SDK's session
protocol (``get_items``, ``add_items``, ``pop_item``, ``clear_session``).
The wrapped session keeps the whole history; ``get_items()`` returns it
through a :class:`~agentcore_autosummary.Compactor`: the summary, the pinned
items and the verbatim tail, inside the window with room kept for the new
input and the run's own items. The SDK itself is imported only when this
module is used without it installed it raises ``ImportError`` naming
``pip install openai-agents``.
"""

from __future__ import annotations

import logging
from typing import Any

from agentcore import ConfigError
from agentcore.plugin_api import NON_NEGATIVE_INT
from agentcore_autosummary.adapters.responses_items import items_to_messages, message_to_item
from agentcore_autosummary.compactor.compactor import Compaction, Compactor
from agentcore_autosummary.compactor.compactor_state import CompactorState

logger = logging.getLogger("agentcore.autosummary")

__all__ = ["CompactingSession"]


def _check_sdk() -> None:
    try:
        import agents  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "CompactingSession wraps an OpenAI Agents SDK session: pip install openai-agents"
        ) from exc


class CompactingSession:
    """An OpenAI Agents SDK session whose ``get_items()`` is compacted to fit the window.

    :param session: The SDK session that stores the history (all of it, never cut).
    :param compactor: The :class:`~agentcore_autosummary.Compactor` that fits it (its
        ``SummaryConfig.max_context_tokens`` is the model's window; its ``tools`` the
        agent's tool definitions, counted).
    :param instructions: The agent's instructions, which the SDK sends as the system
        prompt: counted, never returned as an item.
    :param reserve_tokens: Room kept for what a run adds after the history: the new
        input and the run's tool calls and results (the reply has its own reservation).
    :param state: The compactor state to start from (a stored ``state.to_json()``).

    ``get_items(limit=N)`` returns the wrapped session's newest ``N`` items as they
    are stored: the SDK reads them so to check its own writes.
    """

    def __init__(
        self,
        session: Any,
        compactor: Compactor,
        *,
        instructions: str | None = None,
        reserve_tokens: int = 512,
        state: CompactorState | dict[str, Any] | None = None,
    ) -> None:
        _check_sdk()
        for name in ("get_items", "add_items", "pop_item", "clear_session"):
            if not callable(getattr(session, name, None)):
                raise ConfigError(
                    f"session must be an OpenAI Agents SDK session (it has no {name}()), "
                    f"got {session!r:.100}"
                )
        if not isinstance(compactor, Compactor):
            raise ConfigError(f"compactor must be a Compactor, got {compactor!r:.100}")
        NON_NEGATIVE_INT.check("reserve_tokens", reserve_tokens)
        self.session = session
        """The wrapped session, which holds the whole history."""
        self.session_id: str = session.session_id
        """The wrapped session's id."""
        self.session_settings: Any = getattr(session, "session_settings", None)
        """The wrapped session's settings (the SDK reads them)."""
        self.compactor = compactor
        """The compactor that fits the history."""
        self.instructions = instructions
        """The agent's instructions, counted in every request."""
        self.reserve_tokens = reserve_tokens
        """Room kept for the new input and the run's own items."""
        self.state: CompactorState = (
            CompactorState.from_json(state)
            if isinstance(state, dict)
            else state or CompactorState()
        )
        """The compactor state after the last ``get_items()`` (store ``state.to_json()``)."""
        self.last: Compaction | None = None
        """The last compaction ``get_items()`` made (None before the first)."""

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The history to send: compacted without ``limit``; the newest ``limit`` items with it."""
        if limit is not None:
            return list(await self.session.get_items(limit))
        items = list(await self.session.get_items())
        messages, groups = items_to_messages(items)
        if self.state.covered > len(messages):
            logger.warning(
                "session %s: the history is shorter than the summary's; summarizing it anew",
                self.session_id,
            )
            self.state = CompactorState()
        result = await self.compactor.compact(
            messages,
            self.state,
            format="agentcore",
            system_prompt=self.instructions,
            reserve_tokens=self.reserve_tokens,
        )
        self.state = result.state
        self.last = result
        out: list[Any] = []
        for message, source in zip(result.sent, result.sources, strict=True):
            if source is None:
                out.append(message_to_item(message))
            else:
                out.extend(items[index] for index in groups[source])
        return out

    async def add_items(self, items: list[Any]) -> None:
        """Add ``items`` to the wrapped session."""
        await self.session.add_items(items)

    async def pop_item(self) -> Any:
        """Remove and return the newest item of the wrapped session (None when empty)."""
        return await self.session.pop_item()

    async def clear_session(self) -> None:
        """Clear the wrapped session, and the summary with it."""
        await self.session.clear_session()
        self.state = CompactorState()
        self.last = None
