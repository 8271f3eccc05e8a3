"""When to retry a failed provider call and how long to wait first."""

from __future__ import annotations

import email.utils
import math
import random
from collections.abc import Mapping
from datetime import datetime, timezone

from attrs import field, frozen

from agentcore.errors import ConfigError
from agentcore.validators import NON_NEGATIVE_INT, Rule, is_number

MAX_RETRY_AFTER = 60.0
"""The longest ``Retry-After`` delay (seconds) honoured; a longer one is not retried."""


_SECONDS = Rule("a number >= 0", lambda value: is_number(value) and value >= 0)


@frozen
class RetryPolicy:
    """Exponential backoff with jitter, bounded by ``max_retries``.

    The n-th retry (counting from 0) waits a random time between half and all
    of ``min(backoff_max, backoff_base * 2**n)`` seconds, unless the server
    asked for a delay with ``Retry-After``: that delay is used as is when it
    is at most :data:`MAX_RETRY_AFTER`, and a longer one ends the retries.
    """

    max_retries: int = field(default=2, validator=NON_NEGATIVE_INT)
    backoff_base: float = field(default=0.5, validator=_SECONDS)
    backoff_max: float = field(default=8.0, validator=_SECONDS)

    def __attrs_post_init__(self) -> None:
        if self.backoff_max < self.backoff_base:
            raise ConfigError(
                f"backoff_max ({self.backoff_max}) must not be below "
                f"backoff_base ({self.backoff_base})"
            )

    def delay(self, retry: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait before retry number ``retry`` (0-based), or None to give up."""
        if retry >= self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= MAX_RETRY_AFTER else None
        ceiling = min(self.backoff_max, self.backoff_base * 2.0**retry)
        return ceiling * random.uniform(0.5, 1.0)


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The delay in seconds a response asks for, or None.

    Reads ``retry-after-ms`` (milliseconds, sent by OpenAI) and then
    ``Retry-After``, which holds either seconds or an HTTP date. A date in
    the past means no delay; an unreadable value is ignored.
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    current = now if now is not None else datetime.now(timezone.utc)
    return max(0.0, (when - current).total_seconds())


def _number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return value
