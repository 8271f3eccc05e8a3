"""SummaryConfig: when and how the plugin summarizes a conversation."""

from __future__ import annotations

import math
from typing import Any, Literal

import attrs
from attrs import field, frozen

from agentcore import ConfigError, LlmProvider, Message
from agentcore.plugin_api import (
    BOOL,
    NON_EMPTY_STR,
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    POSITIVE_NUMBER,
    RATIO,
    STR,
    Rule,
    SummaryPosition,
    SummaryRole,
    field_name,
    get_token_counter,
    one_of,
)
from agentcore_autosummary.applying.fencing import FENCE_TOKENS
from agentcore_autosummary.keeping.state import STATE_KEY_PREFIX
from agentcore_autosummary.requesting.prompt import (
    DEFAULT_SUMMARY_PROMPT,
    MESSAGES_PLACEHOLDER,
    STRUCTURED_SUMMARY_PROMPT,
    build_prompt,
)

Trigger = Literal["context", "cumulative"]
Strategy = Literal["incremental", "full", "segments", "server"]
Mode = Literal["inline", "background"]
SummaryStyle = Literal["prose", "structured"]
RetentionCheck = Literal["quote", "append", "log", "off"]

QUOTE_SHARE = 0.5
"""With ``retention_check="quote"``, the share of the summary's cap its quotes may add beyond
it (:attr:`SummaryConfig.quote_tokens`)."""
RequestShape = Literal["auto", "prefix", "transcript"]
Recall = Literal["off", "tool", "auto", "both"]
SegmentsMerge = Literal["summarizer", "sentences"]

CORRECTION_KEY = "autosummary.token_correction"
"""Session-data key of the token correction the plugin learns from usage."""

SERVED_WINDOW_KEY = "autosummary.served_window"
"""Session-data key of the windows the server showed it serves, per model (see windows.py)."""

SESSION_COUNTER_KEY = "autosummary.last_summary_turn"
"""Session-data key of the turn of the session's last applied summary (the seed's counter)."""

DEFAULT_MAX_CONTEXT_TOKENS = 32_000
"""The window assumed when ``max_context_tokens`` is None and no window can be discovered."""

MIN_SUMMARY_INPUT_TOKENS = 128
"""Conversation tokens a summary request must have room for, at the least."""


_PROMPT = STR.where(
    lambda value: MESSAGES_PLACEHOLDER in value,
    f"a str containing {MESSAGES_PLACEHOLDER}, where the conversation is inserted",
)


def _memory_key(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    NON_EMPTY_STR(instance, attribute, value)
    own = (CORRECTION_KEY, SESSION_COUNTER_KEY, SERVED_WINDOW_KEY)
    if value in own or value.startswith(STATE_KEY_PREFIX):
        name = field_name(instance, attribute)
        raise ConfigError(
            f"{name} {value!r} is a key the plugin keeps its own state under "
            f"({', '.join(repr(key) for key in own)} and {STATE_KEY_PREFIX!r}<slot id>): "
            "choose another key"
        )


_SECONDS_OR_NONE = POSITIVE_NUMBER.or_none()
_WAIT = Rule(
    "a finite number of seconds >= 0, or None",
    lambda value: (
        value is None
        or (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value >= 0
        )
    ),
)
_TIMEOUT = Rule(
    "'auto', a positive finite number of seconds or None",
    lambda value: value == "auto" or _SECONDS_OR_NONE.accepts(value),
)


def _is_provider_or_name(value: Any) -> bool:
    if value is None or isinstance(value, LlmProvider):
        return True
    prefix, colon, model = value.partition(":") if isinstance(value, str) else ("", "", "")
    return bool(colon and prefix.strip() and model.strip())


_PROVIDER = Rule(
    "an LlmProvider, a 'prefix:model' name such as 'openai:gpt-4o-mini', or None",
    _is_provider_or_name,
)


@frozen
class SummaryConfig:
    """When and how the autosummary plugin summarizes a conversation.

    A summary is due when the conversation reaches ``max_context_tokens *
    trigger_token_ratio`` tokens and at least ``debounce_turns`` turns have
    passed since the last attempt.

    :param trigger_token_ratio: Fraction of ``max_context_tokens`` that triggers a summary
        (0.8: with the default segments strategy, on the quality bench's tuning
        conversations and a real 1.5B summarizer, it kept at least the facts of the former
        defaults, the incremental strategy at 0.4, with 5 and 7 summaries instead of 13 and
        24 and 42% fewer dollars billed with prompt caching; see ``docs/benchmarks.md``,
        "Using more of the window").
    :param max_context_tokens: The model's context window, in tokens. None: discovered
        from the model on the first turn (see
        ``agentcore.providers.windows.discover_context_window``), else
        ``DEFAULT_MAX_CONTEXT_TOKENS`` with a warning; until then the checks below
        use ``DEFAULT_MAX_CONTEXT_TOKENS``.
    :param summary_prompt: The prompt; ``{messages}`` is replaced by the conversation,
        fenced as data; ``{previous}``, when the prompt holds it, by the previous summary,
        fenced apart from the messages (see ``agentcore_autosummary.requesting.prompt``).
    :param debounce_turns: Minimum turns between two summary attempts.
    :param summary_model: Model for summary calls (None: the agent's model, else the
        provider's default).
    :param max_tool_result_chars: Characters of each tool result kept in the summary input:
        a longer one goes as its excerpt (head, tail and the lines holding values;
        ``agentcore_autosummary.requesting.tool_excerpts.tool_result_excerpt``).
    :param trigger: ``"context"``: the tokens the conversation occupies (the last call's
        reported input + output, else the counted context); ``"cumulative"``: every token
        the session's turns have used so far (the original rule).
    :param strategy: What the summarizer reads. ``"incremental"``: the previous summary
        plus the messages it does not cover yet; ``"full"``: the whole history,
        front-truncated at 30,000 characters (the original rule); ``"segments"`` (the
        default): the messages the summary does not cover yet alone, the summary kept as
        parts in order, the oldest merged when they outgrow :attr:`summary_room` (see
        ``agentcore_autosummary.calling.segments``). Either way the summary then covers
        everything before the recent tail, which stays verbatim. ``"server"``: the
        provider's server compacts the conversation itself when a request passes the
        trigger (the OpenAI Responses provider, ``openai-responses:``), and its encrypted
        item stands for the summary; on any other provider, as ``"incremental"`` (see
        ``agentcore_autosummary.calling.server``).
    :param mode: ``"inline"``: summarize before the turn returns; ``"background"``:
        summarize after it, without adding latency.
    :param max_summary_tokens: Cap on the summary's length: a summary request's
        ``max_tokens`` is what the window leaves after its input, never more, and a
        longer summary is cut to it (None: an eighth of the window, between 8 and
        1,024 tokens; see :attr:`summary_tokens`).
    :param memory_key: Session-data key of the summary snapshot. It may not be one of
        the plugin's own keys: ``autosummary.token_correction`` and ``autosummary/<slot id>``.
    :param keep_recent_tokens: Tokens of recent messages kept verbatim after a summary
        (None: an eighth of ``max_context_tokens``, at most half the watermark).
    :param timeout: Seconds a summary call may take before it counts as failed.
        ``"auto"``: 60 s plus 0.3 s per token of the reply asked for (``max_tokens``)
        and 0.1 s per input token, so a local model on a CPU has time to answer
        (``agentcore_autosummary.calling.summarizer.call_timeout``); None: no limit.
    :param summary_provider: The provider summary calls go to instead of the turns'
        provider: an :class:`~agentcore.LlmProvider`, or a ``"prefix:model"`` name
        resolved with :func:`agentcore.providers.get_provider` at the first summary
        (None: the turns' provider). ``summary_model``, when set, is asked of it.
    :param trigger_messages: A summary is also due when this many raw messages are not
        covered by the summary yet (None: no trigger by count). Either mark triggers.
    :param keep_recent_messages: At most this many recent messages stay verbatim after a
        summary (None: no cap by count); the tail also fits ``keep_recent_tokens``.
    :param summary_style: ``"prose"``: the ``summary_prompt``; ``"structured"``: the
        ``STRUCTURED_SUMMARY_PROMPT``, with sections for
        goals, decisions, facts and identifiers (kept verbatim) and open tasks. A structured
        style replaces the default prompt; it cannot be combined with a custom one.
    :param retention_check: After each summary, look for identifiers (names, versions,
        sizes, dates, paths, URLs, ids; see ``agentcore_autosummary.text.identifiers``) of its
        input that it left out:
        ``"quote"`` appends the sentences that state them, verbatim, under a
        ``Quoted from the conversation:`` line (what the user and the assistant wrote,
        newest first while they fit in the summary's cap with it and half the cap more,
        never a value changed later; see ``agentcore_autosummary.judging.quoting``),
        ``"append"`` adds them as an ``Also mentioned:`` line, ``"log"`` logs a warning
        listing them, ``"off"`` does not look.
    :param max_summary_calls_per_turn: Summary calls one summary may make. A backlog
        larger than one call is summarized in chunks made concurrently (at most 4 at
        once) and merged by one more call; what does not fit in this many calls is
        left for the next summary (the background task goes on with it right away in
        ``"background"`` mode).
    :param window_guard: True: every request is sized to ``max_context_tokens`` and a
        turn that would not fit is summarized first, else degraded (its oldest messages
        left out of that request). False: ``max_context_tokens`` is only the watermark of
        the trigger, as in the original design (:meth:`seed`).
    :param summary_role: The role the summary is sent with, written into the slot's
        ``FocusedConfig.summary_role`` when a summary is applied (None: the slot's own,
        ``"user"`` for a new slot). ``"system"`` promotes whatever user text the summary
        copied to system instructions; see ``docs/autosummary.md``, "The summary's role".
    :param summary_position: Where the summary goes, written into the slot's
        ``FocusedConfig.summary_position`` likewise (None: the slot's own).
    :param request_shape: How a summary is asked for. ``"prefix"``: the conversation's
        last turn request as it was sent (system prompt, tools, messages, the reply),
        then the summary instruction as a final user message, so a provider that cached
        that prefix bills it as cache reads; ``"transcript"``: one user message, the
        fixed instruction first, then the conversation as text; ``"auto"``: ``"prefix"``
        when the summarizer is the turns' own provider and model, else ``"transcript"``.
        A prefix that does not fit the window, or with no turn request sent yet in this
        live session, falls back to the transcript (see ``docs/autosummary.md``). Under
        ``strategy="segments"`` or ``"full"`` every summary request is a transcript.
    :param segments_ratio: Under ``strategy="segments"``, the share of the window the
        summary's parts may take before the two oldest are merged (None:
        :attr:`summary_room`, the room of any summary). See :attr:`segments_room`.
    :param segments_merge: How the parts keep to their room. ``"sentences"``: no call,
        the oldest become their sentences that state a fact, newest first, each fact
        once (``agentcore_autosummary.judging.condensing``); ``"summarizer"``: one more
        summary call merges the two oldest parts' written text.
    :param gate: True: a summary is judged before it is applied, and one that stopped at
        its cap, repeats the previous summary, echoes the transcript or loses its
        identifiers is refused and asked for again another way (see
        ``docs/autosummary.md``, "The gate"). False: every summary the summarizer
        returns is applied, as in the original design (:meth:`seed`); it is still
        checked to shrink the context.
    :param recall: Whether the model can reach what a summary left out, in the stored
        history (the store must search: ``agentcore.stores.search``). ``"tool"``: once
        messages are summarized, the model is offered ``recall_history(query, limit)``;
        ``"auto"``: before a turn, the summarized messages that best match the user's
        new message open that message in its request, marked and within the window (the
        default: on the quality bench it answers questions a summary alone loses);
        ``"both"``; ``"off"``. A store that does not search recalls nothing. See
        ``docs/autosummary.md``, "Recall".
    :param recall_tokens: Tokens one recall may add, recalled part or tool result (None: a
        sixteenth of the window, at least 64).
    :param recall_limit: Messages automatic recall adds at most.
    :param keep_images: Images of the summarized messages the request keeps carrying:
        after a summary, the newest this many images of the history (those of the
        verbatim tail first) stay, their messages pinned by the plugin while they fit;
        every other image, file and audio a summary covers is named in its record.
        0: no image is kept, and automatic recall sends none. See
        ``docs/autosummary.md``, "Images and files across a summary".
    :param background_wait: Seconds a turn waits for a summary still running in the
        background when its request needs that summary's room (``mode="background"``, or
        the rest of a backlog), never more than half of what is left of its
        ``turn_timeout``; past it the request goes out without it, inside the window
        (its oldest uncovered messages left out). 0: never wait; None: up to half of what
        is left of the deadline. See ``docs/autosummary.md``, "Inline or background".
    """

    trigger_token_ratio: float = field(default=0.8, validator=RATIO)
    max_context_tokens: int | None = field(default=None, validator=POSITIVE_INT.or_none())
    summary_prompt: str = field(default=DEFAULT_SUMMARY_PROMPT, validator=_PROMPT)
    debounce_turns: int = field(default=3, validator=NON_NEGATIVE_INT)
    summary_model: str | None = field(default=None, validator=NON_EMPTY_STR.or_none())
    max_tool_result_chars: int = field(default=500, validator=NON_NEGATIVE_INT)
    trigger: Trigger = field(default="context", validator=one_of("context", "cumulative"))
    strategy: Strategy = field(
        default="segments", validator=one_of("incremental", "full", "segments", "server")
    )
    mode: Mode = field(default="inline", validator=one_of("inline", "background"))
    max_summary_tokens: int | None = field(default=None, validator=POSITIVE_INT.or_none())
    memory_key: str = field(default="conversation_summary", validator=_memory_key)
    keep_recent_tokens: int | None = field(default=None, validator=NON_NEGATIVE_INT.or_none())
    timeout: float | Literal["auto"] | None = field(default="auto", validator=_TIMEOUT)
    summary_provider: LlmProvider | str | None = field(default=None, validator=_PROVIDER, eq=False)
    trigger_messages: int | None = field(default=None, validator=POSITIVE_INT.or_none())
    keep_recent_messages: int | None = field(default=None, validator=NON_NEGATIVE_INT.or_none())
    summary_style: SummaryStyle = field(default="prose", validator=one_of("prose", "structured"))
    retention_check: RetentionCheck = field(
        default="quote", validator=one_of("quote", "append", "log", "off")
    )
    max_summary_calls_per_turn: int = field(default=4, validator=POSITIVE_INT)
    window_guard: bool = field(default=True, validator=BOOL)
    summary_role: SummaryRole | None = field(default=None, validator=one_of("user", "system", None))
    summary_position: SummaryPosition | None = field(
        default=None, validator=one_of("after_system", "end", None)
    )
    request_shape: RequestShape = field(
        default="auto", validator=one_of("auto", "prefix", "transcript")
    )
    gate: bool = field(default=True, validator=BOOL)
    segments_ratio: float | None = field(default=None, validator=RATIO.or_none())
    segments_merge: SegmentsMerge = field(
        default="sentences", validator=one_of("summarizer", "sentences")
    )
    recall: Recall = field(default="auto", validator=one_of("off", "tool", "auto", "both"))
    recall_tokens: int | None = field(default=None, validator=POSITIVE_INT.or_none())
    recall_limit: int = field(default=3, validator=POSITIVE_INT)
    keep_images: int = field(default=2, validator=NON_NEGATIVE_INT)
    background_wait: float | None = field(default=30.0, validator=_WAIT)

    def __attrs_post_init__(self) -> None:
        if self.summary_style == "structured":
            if self.summary_prompt not in (DEFAULT_SUMMARY_PROMPT, STRUCTURED_SUMMARY_PROMPT):
                raise ConfigError(
                    "summary_style='structured' brings its own prompt: give either a custom "
                    "summary_prompt or summary_style='structured', not both"
                )
            object.__setattr__(self, "summary_prompt", STRUCTURED_SUMMARY_PROMPT)
        if (
            self.trigger_messages is not None
            and self.keep_recent_messages is not None
            and self.keep_recent_messages >= self.trigger_messages
        ):
            raise ConfigError(
                f"keep_recent_messages ({self.keep_recent_messages}) must be below "
                f"trigger_messages ({self.trigger_messages}), or every summary would "
                "re-trigger at once"
            )
        self._check_explicit_sizes()

    @property
    def recall_room(self) -> int:
        """Tokens one recall may add: ``recall_tokens``, else a sixteenth of the window."""
        if self.recall_tokens is not None:
            return self.recall_tokens
        return max(64, self.window // 16)

    def _check_explicit_sizes(self) -> None:
        """Refuse token sizes the user set that contradict each other or the window.

        A size left to its default is derived from the window and always fits
        it; a window too small for any summary request is not an error (the
        attempts fail and each turn is degraded instead, see
        docs/autosummary.md), so only explicit settings are checked here.
        """
        if not self.window_guard:
            return  # the window is only the watermark: requests are not sized to it
        if self.keep_recent_tokens is not None and self.recent_budget >= self.trigger_tokens:
            raise ConfigError(
                f"keep_recent_tokens ({self.recent_budget}) must be below the trigger "
                f"({self.trigger_tokens} tokens: max_context_tokens {self.window} x "
                f"trigger_token_ratio {self.trigger_token_ratio}), or every summary would "
                "re-trigger at once"
            )
        if self.max_summary_tokens is None or self.max_context_tokens is None:
            return
        prompt = get_token_counter().count_messages(
            [Message.user(build_prompt(self.summary_prompt, ""))]
        )
        needed = prompt + self.summary_tokens + MIN_SUMMARY_INPUT_TOKENS + self.summary_reserve
        if needed > self.window:
            raise ConfigError(
                f"max_context_tokens ({self.window}) leaves no room for a summary "
                f"request: the summary_prompt ({prompt} tokens), the previous summary "
                f"(max_summary_tokens, {self.summary_tokens}), {MIN_SUMMARY_INPUT_TOKENS} "
                f"tokens of conversation and {self.summary_reserve} tokens for the reply need "
                f"{needed}: lower max_summary_tokens, leave it unset (then it follows the "
                "window) or raise max_context_tokens"
            )
        if self.recent_budget + self.summary_context_tokens >= self.window:
            quotes = f" with its quotes ({self.quote_tokens} more)" if self.quote_tokens else ""
            raise ConfigError(
                f"keep_recent_tokens ({self.recent_budget}) + max_summary_tokens "
                f"({self.summary_tokens}){quotes} and its fence ({FENCE_TOKENS}) "
                f"must be below max_context_tokens "
                f"({self.window}), or a summarized context could not fit the window"
            )

    @classmethod
    def seed(cls, **overrides: Any) -> SummaryConfig:
        """The original design's behaviour, whole (``docs/autosummary.md``, "The seed's mode").

        A summary is due when ``turn_index - last_summary_turn >= debounce_turns``
        (``last_summary_turn`` starts at 0 and moves only when a summary is
        applied, so a failure is tried again on the next turn) and every token
        the session's turns used reaches ``max_context_tokens *
        trigger_token_ratio`` (0.75 of 32,000); the summarizer reads the whole
        history, cut to its newest 30,000 characters, with the Chinese default
        prompt (in English for a conversation that is not mostly Chinese or
        Japanese) and ``max_tokens`` 1,024; nothing is kept verbatim beside the
        summary, which is sent as a system message ``[上下文摘要] {summary}`` at
        the end of the context (fenced as data, see ``docs/autosummary.md``,
        "The summary as data"); every summary is applied, repeated or not
        (``gate=False``), and nothing is recalled (``recall="off"``).
        ``max_context_tokens`` is only the watermark: requests are neither sized
        to it nor refused by it, so the original test values (20, 100) work.
        ``overrides`` change any field.
        """
        settings: dict[str, Any] = {
            "trigger_token_ratio": 0.75,
            "max_context_tokens": DEFAULT_MAX_CONTEXT_TOKENS,
            "trigger": "cumulative",
            "strategy": "full",
            "keep_recent_tokens": 0,
            "max_summary_tokens": 1024,
            "timeout": None,
            "window_guard": False,
            "summary_role": "system",
            "summary_position": "end",
            "request_shape": "transcript",
            "gate": False,
            "recall": "off",
        }
        settings.update(overrides)
        return cls.coerce(settings)

    @property
    def summary_tokens(self) -> int:
        """The cap on a summary's length: ``max_summary_tokens``, else derived from the window.

        Derived: an eighth of the window, at least 8 and at most 1,024 tokens
        (1,024 from a window of 8,192 tokens up).
        """
        if self.max_summary_tokens is not None:
            return self.max_summary_tokens
        return max(8, min(1024, self.window // 8))

    @property
    def quote_tokens(self) -> int:
        """Tokens the quotes of ``retention_check="quote"`` may take beyond the cap.

        Half of :attr:`summary_tokens` (``QUOTE_SHARE``; 0 with another check): the
        quotes fill what the summary left of its cap, and this much more.
        """
        if self.retention_check != "quote":
            return 0
        return int(self.summary_tokens * QUOTE_SHARE)

    @property
    def summary_room(self) -> int:
        """The most tokens a summary's text holds: its cap and :attr:`quote_tokens`."""
        return self.summary_tokens + self.quote_tokens

    @property
    def segments_room(self) -> int:
        """Tokens the parts of a ``"segments"`` summary hold before the two oldest are merged.

        ``segments_ratio`` of the window when set (never less than
        :attr:`summary_room`), else :attr:`summary_room`.
        """
        if self.segments_ratio is None:
            return self.summary_room
        return max(self.summary_room, int(self.window * self.segments_ratio))

    @property
    def summary_context_tokens(self) -> int:
        """The most tokens a summary takes in the context: :attr:`summary_room` and its fence.

        The fence (``<summary>`` ... ``</summary>``, see
        ``agentcore_autosummary.applying.fencing``) adds ``FENCE_TOKENS``.
        """
        return self.summary_room + FENCE_TOKENS

    @property
    def window(self) -> int:
        """``max_context_tokens``, or ``DEFAULT_MAX_CONTEXT_TOKENS`` while it is None."""
        if self.max_context_tokens is None:
            return DEFAULT_MAX_CONTEXT_TOKENS
        return self.max_context_tokens

    @property
    def trigger_tokens(self) -> int:
        """The watermark in tokens: ``max_context_tokens * trigger_token_ratio``."""
        return int(self.window * self.trigger_token_ratio)

    @property
    def recent_budget(self) -> int:
        """Tokens of recent messages kept verbatim after a summary.

        ``keep_recent_tokens``, else an eighth of ``max_context_tokens``, but at
        most half the watermark (so a summary never re-triggers at once).
        """
        if self.keep_recent_tokens is not None:
            return self.keep_recent_tokens
        return min(self.window // 8, self.trigger_tokens // 2)

    @property
    def summary_reserve(self) -> int:
        """Room kept for a summary's reply when its input is planned.

        ``summary_tokens``, but at most a quarter of ``max_context_tokens``;
        the request's ``max_tokens`` is whatever the window leaves after the
        input, up to ``max_summary_tokens``.
        """
        return min(self.summary_tokens, self.window // 4)

    @classmethod
    def coerce(cls, value: Any) -> SummaryConfig:
        """``value`` as a SummaryConfig: one already, or a dict of its fields.

        A dict goes through exactly the checks of the class: values are not
        converted (``"1000"`` is not an int), and unknown keys are refused.
        """
        if isinstance(value, SummaryConfig):
            return value
        if not isinstance(value, dict):
            raise TypeError(f"summary_config takes a SummaryConfig or a dict, got {value!r}")
        names = {attribute.name for attribute in attrs.fields(SummaryConfig)}
        unknown = sorted(str(key) for key in value if key not in names)
        if unknown:
            raise ConfigError(
                f"unknown summary_config keys: {', '.join(unknown)} "
                f"(known: {', '.join(sorted(names))})"
            )
        return SummaryConfig(**value)
