"""Deadlines of store calls, and the pauses between tries of a lock."""

from __future__ import annotations

import time
from collections.abc import Iterator

from attrs import frozen

from agentcore.errors import StoreError
from agentcore.validators import is_number

LOCK_TRY_SECONDS = 0.2
"""How long one try waits for a locked session before the store gives its connection back."""

MAX_PAUSE_SECONDS = 1.0
"""The longest pause between two tries of a lock."""


def check_timeout(value: object, what: str) -> float | None:
    """``value`` as seconds (None: no limit); anything but a finite number > 0 is refused."""
    if value is None:
        return None
    if is_number(value) and value > 0:
        return float(value)
    raise StoreError(f"{what} must be a finite number of seconds > 0 or None, got {value!r}")


@frozen
class Deadline:
    """The monotonic time a call must end by (``at``), or None for no limit."""

    at: float | None

    @classmethod
    def after(cls, seconds: float | None) -> Deadline:
        """The deadline ``seconds`` from now (None: none)."""
        return cls(None if seconds is None else time.monotonic() + seconds)

    def remaining(self) -> float | None:
        """Seconds left (0 once past), or None without a deadline."""
        return None if self.at is None else max(0.0, self.at - time.monotonic())

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return self.at is not None and time.monotonic() >= self.at

    def cap(self, seconds: float | None) -> float | None:
        """The smaller of ``seconds`` and what is left (None: neither limits)."""
        left = self.remaining()
        if left is None:
            return seconds
        return left if seconds is None else min(left, seconds)


def pauses() -> Iterator[float]:
    """The pauses between tries of a lock: 50 ms, doubling, at most :data:`MAX_PAUSE_SECONDS`."""
    pause = 0.05
    while True:
        yield pause
        pause = min(pause * 2, MAX_PAUSE_SECONDS)
