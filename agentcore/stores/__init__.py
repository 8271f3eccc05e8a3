"""Stores that keep sessions: in memory or in SQLite."""

from agentcore.stores.base import MemoryStore, MessageAppend, SessionState, SlotHead, StoreWrite
from agentcore.stores.memory import InMemoryStore
from agentcore.stores.sqlite import SqliteStore

__all__ = [
    "InMemoryStore",
    "MemoryStore",
    "MessageAppend",
    "SessionState",
    "SlotHead",
    "SqliteStore",
    "StoreWrite",
]
