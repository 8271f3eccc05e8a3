"""agentcore-autosummary: automatic conversation summaries for agentcore.

Enable it with ``AgentBuilder().summary_config(SummaryConfig(...))``, or fit
a message list an app already has into its window with :class:`Compactor`.
"""

from importlib import metadata as _metadata

from agentcore_autosummary.compacting import compact, get_conversation_summary
from agentcore_autosummary.compactor import Compaction, Compactor
from agentcore_autosummary.compactor_state import CompactorState
from agentcore_autosummary.config import CORRECTION_KEY, SummaryConfig
from agentcore_autosummary.fencing import fence_summary, unfence_summary
from agentcore_autosummary.formatting import format_message, format_messages_as_text
from agentcore_autosummary.prompt import (
    DEFAULT_SUMMARY_PROMPT,
    STRUCTURED_SUMMARY_PROMPT,
    UPDATE_SUMMARY_PROMPT,
)
from agentcore_autosummary.retention import find_identifiers
from agentcore_autosummary.state import SummaryState
from agentcore_autosummary.summarizer import SummaryFailedError
from agentcore_autosummary.summary_info import (
    CompactError,
    SummaryInfo,
    SummaryQuality,
    SummaryReason,
    SummaryRequestInfo,
)

__version__ = _metadata.version("agentcore-autosummary")
"""The installed distribution's version (from its package metadata)."""

__all__ = [
    "CORRECTION_KEY",
    "DEFAULT_SUMMARY_PROMPT",
    "STRUCTURED_SUMMARY_PROMPT",
    "UPDATE_SUMMARY_PROMPT",
    "CompactError",
    "Compaction",
    "Compactor",
    "CompactorState",
    "SummaryConfig",
    "SummaryFailedError",
    "SummaryInfo",
    "SummaryQuality",
    "SummaryReason",
    "SummaryRequestInfo",
    "SummaryState",
    "__version__",
    "compact",
    "fence_summary",
    "find_identifiers",
    "format_message",
    "format_messages_as_text",
    "get_conversation_summary",
    "unfence_summary",
]
