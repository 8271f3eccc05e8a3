"""SummaryConfig: when and how the plugin summarizes a conversation."""

from __future__ import annotations

from typing import Any, Literal

import attrs
import cattrs
from attrs import field, frozen

from agentcore_autosummary.prompt import DEFAULT_SUMMARY_PROMPT, MESSAGES_PLACEHOLDER

Trigger = Literal["context", "cumulative"]
Strategy = Literal["incremental", "full"]
Mode = Literal["inline", "background"]


def _ratio(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ValueError(f"{attribute.name} must be a number in (0, 1], got {value!r}")


def _int_at_least(minimum: int) -> Any:
    def check(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"{attribute.name} must be an int >= {minimum}, got {value!r}")

    return check


def _optional_int_at_least(minimum: int) -> Any:
    check = _int_at_least(minimum)

    def optional(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None:
            check(instance, attribute, value)

    return optional


def _prompt(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or MESSAGES_PLACEHOLDER not in value:
        raise ValueError(
            f"summary_prompt must be a str containing {MESSAGES_PLACEHOLDER}, "
            "where the conversation is inserted"
        )


def _one_of(*choices: str) -> Any:
    def check(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value not in choices:
            raise ValueError(f"{attribute.name} must be one of {choices}, got {value!r}")

    return check


def _optional_name(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{attribute.name} must be a non-empty str or None, got {value!r}")


def _non_empty(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{attribute.name} must be a non-empty str, got {value!r}")


def _positive_or_none(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0
    ):
        raise ValueError(f"{attribute.name} must be a positive number or None, got {value!r}")


@frozen
class SummaryConfig:
    """When and how the autosummary plugin summarizes a conversation.

    A summary is due when the conversation reaches ``max_context_tokens *
    trigger_token_ratio`` tokens and at least ``debounce_turns`` turns have
    passed since the last attempt.

    :param trigger_token_ratio: Fraction of ``max_context_tokens`` that triggers a summary.
    :param max_context_tokens: The model's context window, in tokens.
    :param summary_prompt: The prompt; ``{messages}`` is replaced by the conversation,
        fenced as data.
    :param debounce_turns: Minimum turns between two summary attempts.
    :param summary_model: Model for summary calls (None: the agent's model, else the
        provider's default).
    :param max_tool_result_chars: Characters of each tool result kept in the summary input.
    :param trigger: ``"context"``: the tokens the conversation occupies (the last call's
        reported input + output, else the counted context); ``"cumulative"``: every token
        the session's turns have used so far (the original rule).
    :param strategy: What the summarizer reads. ``"incremental"``: the previous summary
        plus the messages it does not cover yet; ``"full"``: the whole history,
        front-truncated at 30,000 characters (the original rule). Either way the
        summary then covers everything before the recent tail, which stays verbatim.
    :param mode: ``"inline"``: summarize before the turn returns; ``"background"``:
        summarize after it, without adding latency.
    :param max_summary_tokens: Cap on the summary's length (the call's ``max_tokens``).
    :param memory_key: Session-data key of the summary snapshot.
    :param keep_recent_tokens: Tokens of recent messages kept verbatim after a summary
        (None: a quarter of ``max_context_tokens``).
    :param timeout: Seconds a summary call may take before it counts as failed.
    """

    trigger_token_ratio: float = field(default=0.75, validator=_ratio)
    max_context_tokens: int = field(default=32_000, validator=_int_at_least(1))
    summary_prompt: str = field(default=DEFAULT_SUMMARY_PROMPT, validator=_prompt)
    debounce_turns: int = field(default=3, validator=_int_at_least(0))
    summary_model: str | None = field(default=None, validator=_optional_name)
    max_tool_result_chars: int = field(default=500, validator=_int_at_least(0))
    trigger: Trigger = field(default="context", validator=_one_of("context", "cumulative"))
    strategy: Strategy = field(default="incremental", validator=_one_of("incremental", "full"))
    mode: Mode = field(default="inline", validator=_one_of("inline", "background"))
    max_summary_tokens: int = field(default=1024, validator=_int_at_least(1))
    memory_key: str = field(default="conversation_summary", validator=_non_empty)
    keep_recent_tokens: int | None = field(default=None, validator=_optional_int_at_least(0))
    timeout: float | None = field(default=120.0, validator=_positive_or_none)

    def __attrs_post_init__(self) -> None:
        if self.recent_budget >= self.trigger_tokens:
            raise ValueError(
                f"keep_recent_tokens ({self.recent_budget}) must be below the trigger "
                f"({self.trigger_tokens} tokens), or every summary would re-trigger at once"
            )

    @property
    def trigger_tokens(self) -> int:
        """The watermark in tokens: ``max_context_tokens * trigger_token_ratio``."""
        return int(self.max_context_tokens * self.trigger_token_ratio)

    @property
    def recent_budget(self) -> int:
        """Tokens of recent messages kept verbatim after a summary."""
        if self.keep_recent_tokens is not None:
            return self.keep_recent_tokens
        return self.max_context_tokens // 4

    @classmethod
    def coerce(cls, value: Any) -> SummaryConfig:
        """``value`` as a SummaryConfig: one already, or a dict of its fields."""
        if isinstance(value, SummaryConfig):
            return value
        if not isinstance(value, dict):
            raise TypeError(f"summary_config takes a SummaryConfig or a dict, got {value!r}")
        try:
            return _converter.structure(value, SummaryConfig)
        except cattrs.BaseValidationError as exc:
            details = cattrs.transform_error(exc, format_exception=_describe)
            raise ValueError("; ".join(details)) from exc


_converter = cattrs.Converter(forbid_extra_keys=True)


def _describe(exc: BaseException, type_: Any) -> str:
    return str(exc) or type(exc).__name__
