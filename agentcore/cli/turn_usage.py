"""What the server said a chat turn used, kept apart from what it did not say."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcore.hookspecs import hookimpl
from agentcore.usage import Usage

if TYPE_CHECKING:
    from agentcore.calls import ModelCallInfo
    from agentcore.context import TurnContext

UsageFields = dict[str, "int | None"]
"""``input_tokens``, ``output_tokens``, ``cached_input_tokens``, ``total_tokens``."""


def usage_fields(usage: Usage | None) -> UsageFields:
    """``usage`` as the fields of ``--json``; every field None when the server sent none."""
    if usage is None:
        return dict.fromkeys(
            ("input_tokens", "output_tokens", "cached_input_tokens", "total_tokens")
        )
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_input_tokens": usage.cached_input_tokens,
        "total_tokens": usage.total_tokens,
    }


class TurnUsage:
    """A plugin of the chat's bundle: adds up the usage the server reported for turns.

    The session's cost counts a reply without usage as 0 tokens; this keeps
    "not reported" apart, so ``--json`` can print ``null`` rather than a
    made-up 0. Calls plugins make under their own purpose are not counted.
    """

    def __init__(self) -> None:
        self._usage: Usage | None = None

    @hookimpl
    def after_model_call(self, ctx: TurnContext, call: ModelCallInfo) -> None:
        """Add a turn call's reported usage."""
        del ctx
        if call.purpose != "turn" or call.response is None or call.response.usage is None:
            return
        reported = call.response.usage
        self._usage = reported if self._usage is None else self._usage + reported

    def take(self) -> Usage | None:
        """The usage reported since the last call (None: the server reported none)."""
        usage, self._usage = self._usage, None
        return usage
