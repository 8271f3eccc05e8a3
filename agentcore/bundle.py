"""The data a bundle's sessions run on: :class:`AgentBundle` and its :class:`AgentConfig`.

Plain data, below the turn context and the hook specifications that name
them; :class:`~agentcore.AgentBuilder` (in :mod:`agentcore.builder`) makes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pluggy
from attrs import field, frozen

from agentcore._cancel import check_timeout
from agentcore.llm import LlmProvider
from agentcore.output import OutputSpec
from agentcore.stash import Stash
from agentcore.stores.base import MemoryStore
from agentcore.tools import ToolRegistry

DEFAULT_TURN_TIMEOUT = 600.0
"""The deadline of a turn, in seconds, unless ``AgentBuilder().turn_timeout(...)`` sets one.

Generous on purpose: it stops a turn that hangs (a server that never
answers, a hook that never returns), not a slow one. ``turn_timeout(None)``
disables it.
"""


def _turn_timeout(value: Any) -> float | None:
    return check_timeout("turn_timeout", value)


@frozen
class AgentConfig:
    """Settings shared by every session of a bundle.

    ``settings`` holds the plugin settings by name, already validated by the
    plugin that owns each of them. ``turn_timeout`` is the deadline of a
    turn in seconds (default ``agentcore.DEFAULT_TURN_TIMEOUT``; None: no deadline).
    ``session_lease`` (default True) makes a turn hold its session's lease
    from before its model call until it is stored (see
    :meth:`AgentBuilder.session_lease`).
    """

    settings: Mapping[str, Any] = field(factory=dict)
    max_tool_rounds: int = 8
    turn_timeout: float | None = field(default=DEFAULT_TURN_TIMEOUT, converter=_turn_timeout)
    session_lease: bool = True
    output: OutputSpec[Any] | None = None
    """The output schema of every turn whose agent names none."""
    tool_choice: str | None = None
    """The tool choice of every turn whose agent names none."""

    def get(self, name: str, default: Any = None) -> Any:
        """The plugin setting ``name``, or ``default``."""
        return self.settings.get(name, default)


@frozen
class AgentBundle:
    """What sessions run on: provider, tools, store, plugins and config.

    Each bundle has its own plugin manager.
    """

    provider: LlmProvider
    store: MemoryStore
    plugin_manager: pluggy.PluginManager
    config: AgentConfig
    tools: ToolRegistry | None = None
    stash: Stash = field(factory=Stash, eq=False, repr=False)
    """Plugins' in-memory state shared by the bundle's sessions (see :mod:`agentcore.stash`)."""
