"""Stores that keep sessions: in memory, in SQLite, or in PostgreSQL.

:class:`PostgresStore` is imported on first access, so that ``import agentcore`` never needs
psycopg; it needs the ``postgres`` extra (``pip install "agentcore[postgres]==0.3.0"``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentcore.stores.base import (
    MAX_ID_BYTES,
    BaseStore,
    MemoryStore,
    MessageAppend,
    SessionState,
    SlotHead,
    StoredTurn,
    StoreWrite,
)
from agentcore.stores.memory import InMemoryStore
from agentcore.stores.sqlite import SqliteStore

if TYPE_CHECKING:
    from agentcore.stores.postgres import PostgresStore

__all__ = [
    "MAX_ID_BYTES",
    "BaseStore",
    "InMemoryStore",
    "MemoryStore",
    "MessageAppend",
    "PostgresStore",
    "SessionState",
    "SlotHead",
    "SqliteStore",
    "StoreWrite",
    "StoredTurn",
]


def __getattr__(name: str) -> Any:
    """Import :class:`PostgresStore` when it is first asked for."""
    if name == "PostgresStore":
        try:
            from agentcore.stores.postgres import PostgresStore
        except ImportError as exc:
            from agentcore.settings import pinned_requirement

            raise ImportError(
                f"PostgresStore needs psycopg 3 and psycopg_pool ({exc}); install them with: "
                f'pip install "{pinned_requirement("postgres")}" (add --find-links WHEELHOUSE '
                'when agentcore comes from a wheelhouse), or pip install "psycopg[binary]>=3.1" '
                '"psycopg-pool>=3.2"'
            ) from exc
        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, :class:`PostgresStore` included (for help() and autodoc)."""
    return sorted({*globals(), *__all__})
