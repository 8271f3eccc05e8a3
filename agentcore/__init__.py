"""agentcore: a small, typed, async core for LLM agents, extended by pluggy plugins."""

from importlib import metadata as _metadata

from agentcore.agent import Agent
from agentcore.builder import DEFAULT_TURN_TIMEOUT, AgentBuilder, AgentBundle, AgentConfig
from agentcore.calls import ModelCallInfo, ToolCallInfo
from agentcore.context import TurnContext
from agentcore.cycle import CycleResult, LlmCycle, ToolResultEvent
from agentcore.errors import (
    AgentCoreError,
    ConfigError,
    ConflictError,
    ContextWindowExceededError,
    CorruptDataError,
    EmptyReplyError,
    LlmError,
    OutputError,
    ReadonlySessionError,
    SessionError,
    StoreError,
    TurnTimeoutError,
    UnknownSlotError,
)
from agentcore.hookspecs import hookimpl
from agentcore.llm import (
    LlmProvider,
    LlmRequest,
    LlmResponse,
    ResponseComplete,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolSpec,
)
from agentcore.messages import (
    AudioBlock,
    ContentBlock,
    FileBlock,
    ImageBlock,
    Message,
    OpaqueBlock,
    ReasoningBlock,
    TextBlock,
    ToolUseBlock,
)
from agentcore.output import OutputSpec, parse_output
from agentcore.session import AgentSession, TurnStream
from agentcore.session_memory import SessionMemory
from agentcore.settings import PluginSetting
from agentcore.slots import ContextSlot, FocusedConfig, SlotConfig
from agentcore.stores import InMemoryStore, MemoryStore, SqliteStore
from agentcore.tools import ToolRegistry
from agentcore.usage import CostTracker, Usage

__version__ = _metadata.version("agentcore")
"""The installed distribution's version (from its package metadata)."""

__all__ = [
    "DEFAULT_TURN_TIMEOUT",
    "Agent",
    "AgentBuilder",
    "AgentBundle",
    "AgentConfig",
    "AgentCoreError",
    "AgentSession",
    "AudioBlock",
    "ConfigError",
    "ConflictError",
    "ContentBlock",
    "ContextSlot",
    "ContextWindowExceededError",
    "CorruptDataError",
    "CostTracker",
    "CycleResult",
    "EmptyReplyError",
    "FileBlock",
    "FocusedConfig",
    "ImageBlock",
    "InMemoryStore",
    "LlmCycle",
    "LlmError",
    "LlmProvider",
    "LlmRequest",
    "LlmResponse",
    "MemoryStore",
    "Message",
    "ModelCallInfo",
    "OpaqueBlock",
    "OutputError",
    "OutputSpec",
    "PluginSetting",
    "ReadonlySessionError",
    "ReasoningBlock",
    "ResponseComplete",
    "SessionError",
    "SessionMemory",
    "SlotConfig",
    "SqliteStore",
    "StoreError",
    "StreamEvent",
    "TextBlock",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallInfo",
    "ToolRegistry",
    "ToolResultEvent",
    "ToolSpec",
    "ToolUseBlock",
    "TurnContext",
    "TurnStream",
    "TurnTimeoutError",
    "UnknownSlotError",
    "Usage",
    "__version__",
    "hookimpl",
    "parse_output",
]
