"""agentcore-autosummary: automatic conversation summaries for agentcore.

Enable it with ``AgentBuilder().summary_config(SummaryConfig(...))``.
"""

from importlib import metadata as _metadata

from agentcore_autosummary.config import CORRECTION_KEY, SummaryConfig
from agentcore_autosummary.formatting import format_message, format_messages_as_text
from agentcore_autosummary.prompt import (
    DEFAULT_SUMMARY_PROMPT,
    STRUCTURED_SUMMARY_PROMPT,
    UPDATE_SUMMARY_PROMPT,
)
from agentcore_autosummary.retention import find_identifiers
from agentcore_autosummary.state import SummaryState
from agentcore_autosummary.summarizer import SummaryFailedError

__version__ = _metadata.version("agentcore-autosummary")
"""The installed distribution's version (from its package metadata)."""

__all__ = [
    "CORRECTION_KEY",
    "DEFAULT_SUMMARY_PROMPT",
    "STRUCTURED_SUMMARY_PROMPT",
    "UPDATE_SUMMARY_PROMPT",
    "SummaryConfig",
    "SummaryFailedError",
    "SummaryState",
    "__version__",
    "find_identifiers",
    "format_message",
    "format_messages_as_text",
]
