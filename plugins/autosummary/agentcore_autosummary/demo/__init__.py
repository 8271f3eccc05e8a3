"""The scripted conversation behind ``agentcore demo``, and what plays it.

:func:`load_script` reads the conversation shipped with the package,
:class:`DemoResponder` answers it offline through
:class:`~agentcore.testing.MockProvider`, and :func:`play` runs it turn by
turn through an :class:`~agentcore.AgentSession`, reporting the context size
and every summary written.
"""

from agentcore_autosummary.demo.measure import (
    SummaryState,
    SummaryWritten,
    context_tokens,
    new_summary,
    summary_state,
)
from agentcore_autosummary.demo.play import TurnReport, play
from agentcore_autosummary.demo.responder import DemoResponder
from agentcore_autosummary.demo.script import DemoScript, DemoTurn, load_script

__all__ = [
    "DemoResponder",
    "DemoScript",
    "DemoTurn",
    "SummaryState",
    "SummaryWritten",
    "TurnReport",
    "context_tokens",
    "load_script",
    "new_summary",
    "play",
    "summary_state",
]
