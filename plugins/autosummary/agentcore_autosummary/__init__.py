"""agentcore-autosummary: automatic conversation summaries for agentcore.

Enable it with ``AgentBuilder().summary_config(SummaryConfig(...))``, or fit
a message list an app already has into its window with :class:`Compactor`.

The package is laid out by the stages of a summary, a folder each:
``deciding`` (when a summary is due and what it covers: the trigger, the
plan, the window's budget), ``requesting`` (the prompt, the transcript, the
reusable prefix, the retry routes, the provider), ``calling`` (the attempt,
its calls and retries, the segments strategy), ``judging`` (the gate, the
retention check and the quotes), ``applying`` (storing a summary, its
fence, fitting the request into the window, the degraded request) and
``keeping`` (the stored state and the live runtime). ``text`` is the text
analysis the judging stage reads with (words, sentences, identifiers,
subjects). Beside them: ``plugin`` (the hook implementations), ``config``,
``compacting`` (what a user calls between turns), ``compactor`` (message
lists without a session), ``log_names`` (how log lines name a conversation),
``adapters``, ``cli`` and ``demo``.

One summary attempt, whoever asks for it (a turn, the background task,
:func:`compact`), is planned by ``deciding.plan.plan_next`` and run by
``calling.pipeline.summarize``, which asks for the summary (``calling.retries``
tries the retry routes, ``calling.summary_calls`` makes each route's calls, and
every call is sent by ``calling.summarizer.send_summary_request``), has it
judged (``judging.gate``) and applies it (``applying.storing``). Applying a
summary settles the attachments it covers (``applying.attachments``): the
newest images stay pinned (``deciding.kept_images``), every other image, file
and audio is named in the record the summary ends with (``applying.record``).
Between two summaries, a turn that makes none prunes the summary's parts of the
values its verbatim tail has replaced since (``applying.tail_pruning``).
"""

from importlib import metadata as _metadata

from agentcore_autosummary.applying.fencing import fence_summary, unfence_summary
from agentcore_autosummary.calling.summarizer import SummaryFailedError
from agentcore_autosummary.compacting import compact, get_conversation_summary
from agentcore_autosummary.compactor.compactor import Compaction, Compactor
from agentcore_autosummary.compactor.compactor_state import CompactorState
from agentcore_autosummary.config import CORRECTION_KEY, SummaryConfig
from agentcore_autosummary.keeping.attachments import AttachmentRecord
from agentcore_autosummary.keeping.state import SummaryState
from agentcore_autosummary.keeping.summary_info import (
    CompactError,
    RecallInfo,
    SummaryInfo,
    SummaryQuality,
    SummaryReason,
    SummaryRequestInfo,
)
from agentcore_autosummary.requesting.formatting import format_message, format_messages_as_text
from agentcore_autosummary.requesting.prompt import (
    DEFAULT_SUMMARY_PROMPT,
    ENGLISH_SUMMARY_PROMPT,
    ENGLISH_UPDATE_SUMMARY_PROMPT,
    STRUCTURED_SUMMARY_PROMPT,
    UPDATE_SUMMARY_PROMPT,
)
from agentcore_autosummary.text.identifiers import find_identifiers

__version__ = _metadata.version("agentcore-autosummary")
"""The installed distribution's version (from its package metadata)."""

__all__ = [
    "CORRECTION_KEY",
    "DEFAULT_SUMMARY_PROMPT",
    "ENGLISH_SUMMARY_PROMPT",
    "ENGLISH_UPDATE_SUMMARY_PROMPT",
    "STRUCTURED_SUMMARY_PROMPT",
    "UPDATE_SUMMARY_PROMPT",
    "AttachmentRecord",
    "CompactError",
    "Compaction",
    "Compactor",
    "CompactorState",
    "RecallInfo",
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
