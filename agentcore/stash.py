"""Typed per-object storage for plugins: :class:`Stash` and :class:`StashKey`, as pytest's.

A plugin that keeps state for a live session (or a bundle) puts it in that
object's stash under a key of its own, instead of a module-level map keyed
by the object::

    RUNTIME = StashKey[MyRuntime]()

    runtime = ctx.session.stash.setdefault(RUNTIME, MyRuntime())

Each key is its own object, so two plugins never collide, and its type
parameter types what the stash returns. The state lives as long as the turn
(``TurnContext.stash``, a fresh one each turn), the session
(``AgentSession.stash``) or the bundle (``AgentBundle.stash``) does.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")
D = TypeVar("D")


class StashKey(Generic[T]):
    """A key of a :class:`Stash`, typed by what it holds; compared by identity."""

    __slots__ = ("name",)

    def __init__(self, name: str = "") -> None:
        self.name = name
        """A label for ``repr`` and error messages."""

    def __repr__(self) -> str:
        return f"StashKey({self.name!r})" if self.name else super().__repr__()


class Stash:
    """A mapping from :class:`StashKey` to values of the key's type."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[StashKey[Any], object] = {}

    def __setitem__(self, key: StashKey[T], value: T) -> None:
        self._items[key] = value

    def __getitem__(self, key: StashKey[T]) -> T:
        try:
            return cast(T, self._items[key])
        except KeyError:
            raise KeyError(f"nothing stored under {key!r}") from None

    def get(self, key: StashKey[T], default: D) -> T | D:
        """The value under ``key``, or ``default``."""
        return cast(T, self._items[key]) if key in self._items else default

    def setdefault(self, key: StashKey[T], default: T) -> T:
        """The value under ``key``, storing ``default`` there first when there is none."""
        return cast(T, self._items.setdefault(key, default))

    def __delitem__(self, key: StashKey[T]) -> None:
        del self._items[key]

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)
