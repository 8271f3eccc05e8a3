"""How much more a server counts than agentcore, learned from the usage it reports.

A request's local count (:func:`counted_request`: its messages plus its tool
definitions) is corrected into the tokens of the model that receives it by a
:class:`TokenCorrection`, learned from the prompt tokens servers report, so a
budget decision errs on the side of a smaller request.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import field, frozen

from agentcore import ConfigError, Message, ToolSpec
from agentcore.plugin_api import POSITIVE_NUMBER, TokenCounter

CORRECTION_MARGIN = 0.02
"""Added on top of the highest ratio seen, so budgets stay on the high side."""

MIN_OBSERVED_TOKENS = 64
"""Requests counted smaller than this teach nothing: fixed overheads dominate them."""

MAX_CORRECTION = 4.0
"""The highest factor a correction takes, whatever a server reports."""


def counted_request(
    counter: TokenCounter, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()
) -> int:
    """The local count of a request: its messages plus its tool definitions."""
    return counter.count_messages(messages) + counter.count_tools(tools)


async def counted_request_async(
    counter: TokenCounter, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()
) -> int:
    """:func:`counted_request` without blocking the event loop on large texts."""
    return await counter.count_messages_async(messages) + counter.count_tools(tools)


def _ratios(value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise TypeError(f"ratios must be a mapping of model name to ratio, got {value!r}")
    ratios: dict[str, float] = {}
    for model, ratio in value.items():
        if not isinstance(model, str) or not POSITIVE_NUMBER.accepts(ratio):
            raise ConfigError(
                f"invalid token ratio {model!r}: {ratio!r} (a ratio is {POSITIVE_NUMBER.expected})"
            )
        ratios[model] = float(ratio)
    return ratios


@frozen
class TokenCorrection:
    """How much more a server counts than agentcore, per model.

    ``ratios`` maps a model name (``""`` for the provider's default model) to
    the highest ``server / local`` ratio of prompt tokens observed for it.
    :meth:`factor` adds :data:`CORRECTION_MARGIN` and never goes below 1, so
    a budget decision errs on the side of a smaller request; it is at most
    :data:`MAX_CORRECTION`.
    """

    ratios: dict[str, float] = field(factory=dict, converter=_ratios)

    def factor(self, model: str | None) -> float:
        """The factor local counts for ``model`` are multiplied by."""
        ratio = self.ratios.get(model or "")
        if ratio is None:
            return 1.0
        return min(MAX_CORRECTION, max(1.0, ratio * (1 + CORRECTION_MARGIN)))

    def apply(self, model: str | None, tokens: int) -> int:
        """``tokens`` counted locally, in the server's tokens (rounded up)."""
        return math.ceil(tokens * self.factor(model))

    def unapply(self, model: str | None, tokens: int) -> int:
        """How many local tokens fit in ``tokens`` of the server's (rounded down)."""
        return math.floor(tokens / self.factor(model))

    def observe(self, model: str | None, local: int, server: int) -> TokenCorrection:
        """The correction after a server counted ``server`` tokens for ``local`` ones.

        Returns ``self`` when nothing changes: a request counted below
        :data:`MIN_OBSERVED_TOKENS`, or a ratio no higher than the one kept
        (or than 1: a server that counts no more than agentcore needs no correction).
        """
        if local < MIN_OBSERVED_TOKENS or server <= 0:
            return self
        key = model or ""
        ratio = server / local
        if ratio <= max(self.ratios.get(key, 1.0), 1.0):
            return self
        return TokenCorrection({**self.ratios, key: ratio})

    def to_json(self) -> dict[str, Any]:
        """The correction as JSON-ready data."""
        return {"ratios": dict(self.ratios)}

    @classmethod
    def from_json(cls, data: Any) -> TokenCorrection:
        """The correction stored as ``data`` (None: no correction).

        Raises ValueError or TypeError for data that is not a stored correction.
        """
        if data is None:
            return cls()
        if not isinstance(data, Mapping) or set(data) != {"ratios"}:
            raise ValueError(f"not a stored token correction: {data!r}")
        return cls(data["ratios"])
