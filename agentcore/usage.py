"""Token usage of LLM calls and the running cost of a session."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from attrs import define, field, frozen


def _non_negative(instance: object, attribute: attrs.Attribute[int], value: object) -> None:
    """One validator per field (a usage is made several times per turn)."""
    if not isinstance(value, int):
        raise TypeError(f"Usage.{attribute.name} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"Usage.{attribute.name} must be >= 0, got {value!r}")


@frozen
class Usage:
    """Tokens read and written by one or more LLM calls.

    ``cached_input_tokens`` is the part of ``input_tokens`` the provider
    reported as read from its prompt cache (cache reads; 0 when unknown),
    ``cache_write_tokens`` the part it reported as written to the cache
    (Anthropic's ``cache_creation_input_tokens``; OpenAI reports none, so 0).
    Both are inside ``input_tokens``; providers bill them at their own rates.
    ``reasoning_tokens`` is the part of ``output_tokens`` the model spent
    reasoning before its answer (OpenAI Responses'
    ``output_tokens_details.reasoning_tokens``; 0 when unknown), billed as output.
    """

    input_tokens: int = field(default=0, validator=_non_negative)
    output_tokens: int = field(default=0, validator=_non_negative)
    cached_input_tokens: int = field(default=0, validator=_non_negative)
    cache_write_tokens: int = field(default=0, validator=_non_negative)
    reasoning_tokens: int = field(default=0, validator=_non_negative)

    @classmethod
    def from_input_output(cls, input_tokens: int, output_tokens: int) -> Usage:
        """Usage of ``input_tokens`` read and ``output_tokens`` written."""
        return cls(input_tokens, output_tokens)

    @property
    def cache_read_tokens(self) -> int:
        """The input tokens read from the provider's prompt cache: ``cached_input_tokens``."""
        return self.cached_input_tokens

    @property
    def uncached_input_tokens(self) -> int:
        """The input tokens neither read from nor written to the prompt cache."""
        return max(0, self.input_tokens - self.cached_input_tokens - self.cache_write_tokens)

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        # Sums of validated counts are valid: made without running the validators again
        # (a turn adds usages several times). Every field is a count, so each is summed.
        total = _new(Usage)
        if _KNOWN_FIELDS:
            _set(total, "input_tokens", self.input_tokens + other.input_tokens)
            _set(total, "output_tokens", self.output_tokens + other.output_tokens)
            _set(total, "cached_input_tokens", self.cached_input_tokens + other.cached_input_tokens)
            _set(total, "cache_write_tokens", self.cache_write_tokens + other.cache_write_tokens)
            _set(total, "reasoning_tokens", self.reasoning_tokens + other.reasoning_tokens)
            return total
        for name in _USAGE_FIELDS:  # pragma: no cover - a Usage with other fields
            _set(total, name, getattr(self, name) + getattr(other, name))
        return total


_USAGE_FIELDS = tuple(field.name for field in attrs.fields(Usage))
"""The counts :meth:`Usage.__add__` sums: every field of :class:`Usage`."""
_KNOWN_FIELDS = _USAGE_FIELDS == (
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)
_new = object.__new__
_set = object.__setattr__

NO_USAGE = Usage()
"""A usage of no tokens, shared (usages are frozen): the start of a sum, made once."""


@define
class CostTracker:
    """Accumulates :class:`Usage` per purpose (``"turn"``, and those plugins give their calls)."""

    _by_purpose: dict[str, Usage] = field(factory=dict, alias="by_purpose")

    def add(self, usage: Usage, purpose: str = "turn") -> None:
        """Count ``usage`` under ``purpose``."""
        if not isinstance(usage, Usage):
            raise TypeError(f"CostTracker.add expects a Usage, got {type(usage).__name__}")
        if not purpose:
            raise ValueError("CostTracker.add needs a non-empty purpose")
        self._by_purpose[purpose] = self._by_purpose.get(purpose, NO_USAGE) + usage

    def restore(self, by_purpose: Mapping[str, Usage]) -> None:
        """Replace every count with ``by_purpose`` (a session does so when it reloads)."""
        for purpose, usage in by_purpose.items():
            if not isinstance(usage, Usage):
                raise TypeError(f"cost of {purpose!r} must be a Usage, got {type(usage).__name__}")
        self._by_purpose = dict(by_purpose)

    def total(self, purpose: str | None = None) -> Usage:
        """Usage over every purpose, or over ``purpose`` alone."""
        if purpose is not None:
            return self._by_purpose.get(purpose, Usage())
        return sum(self._by_purpose.values(), Usage())

    def breakdown(self) -> Mapping[str, Usage]:
        """A copy of the usage per purpose."""
        return dict(self._by_purpose)
