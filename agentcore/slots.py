"""Context slots: a conversation's raw history and how much of it a request carries."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs
from attrs import define, field, frozen

from agentcore._slot_token_totals import TokenTotals
from agentcore._window_messages import WindowMessages
from agentcore.errors import ConfigError
from agentcore.messages import Message
from agentcore.pins import pinned_before, pins_converter
from agentcore.stores.base import JsonValue, MemoryStore
from agentcore.tokens import TokenCounter
from agentcore.validators import NON_NEGATIVE_INT, POSITIVE_INT, STR, one_of

SummaryPosition = Literal["after_system", "end"]
"""Where a Focused slot puts the summary: after the system prompt, or last."""

SummaryRole = Literal["system", "user"]
"""As what a Focused slot sends the summary: a system message or a user-side message."""

SUMMARY_ACKNOWLEDGEMENT = "OK."
"""The assistant reply paired with a user-role summary when a user message would follow it."""

DEFAULT_SUMMARY_LABEL = "[上下文摘要]"
"""The label that prefixes the summary message."""


@frozen
class FocusedConfig:
    """How a Focused slot trims its history for the next request.

    The request carries the system prompt, the summary (when
    ``summary_override`` is set) as a message ``"{summary_label}
    {summary_override}"``, and the raw messages from index ``summary_covers``
    on, at most the last ``max_recent_messages`` of them. The summary sits
    right after the system prompt (``"after_system"``) or after every other
    message (``"end"``).

    ``summary_role`` is the summary message's role. ``"user"`` (the
    default) sends it as a user-side context message, so text a user wrote
    and the summarizer copied into the summary is never promoted to system
    instructions; user and assistant turns still alternate: when a user
    message would follow the summary (the first kept message, or the turn's
    own message), the summary is paired with the assistant reply
    ``SUMMARY_ACKNOWLEDGEMENT``. ``"system"`` sends it as a system message,
    as the original design does (some models follow a system summary more
    closely, but whatever a user got into the summary then reads as
    instructions). A slot config stored without the field (before the
    default changed) loads as ``"system"``, which it meant then.

    ``pinned`` lists raw indices always sent verbatim: pinned messages that
    the summary covers or the window leaves out are sent, in order, right
    before the kept messages (after the summary at ``"after_system"``).
    Change them with :meth:`~agentcore.AgentSession.pin` and
    :meth:`~agentcore.AgentSession.unpin`.
    """

    summary_override: str | None = field(default=None, validator=STR.or_none())
    summary_covers: int = field(default=0, validator=NON_NEGATIVE_INT)
    max_recent_messages: int | None = field(default=None, validator=POSITIVE_INT.or_none())
    summary_label: str = field(
        default=DEFAULT_SUMMARY_LABEL, validator=attrs.validators.instance_of(str)
    )
    summary_position: SummaryPosition = field(
        default="after_system", validator=one_of("after_system", "end")
    )
    summary_role: SummaryRole = field(default="user", validator=one_of("user", "system"))
    pinned: tuple[int, ...] = field(default=(), converter=pins_converter)


FULL: Literal["full"] = "full"
"""The Full mode: every raw message is sent."""

SlotMode = Literal["full"] | FocusedConfig
"""A slot's mode: ``"full"`` or a :class:`FocusedConfig`."""


def _mode(instance: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value != FULL and not isinstance(value, FocusedConfig):
        raise ConfigError(f"a slot mode is 'full' or a FocusedConfig, got {value!r}")


@frozen
class SlotConfig:
    """A slot's persisted configuration.

    ``state`` holds JSON data that plugins keep with the slot (for instance
    the turn of the last summary), namespaced by plugin.
    """

    mode: SlotMode = field(default=FULL, validator=_mode)
    state: Mapping[str, JsonValue] = field(factory=dict)

    @property
    def focused(self) -> FocusedConfig | None:
        """The Focused settings, or None in Full mode."""
        return self.mode if isinstance(self.mode, FocusedConfig) else None


def _starts_kept_window(messages: Sequence[Message], start: int) -> int:
    """Move ``start`` past tool results whose tool call lies before it."""
    while start < len(messages) and messages[start].role == "tool":
        start += 1
    return start


def focused_window(messages: Sequence[Message], config: FocusedConfig) -> int:
    """Index of the first raw message a Focused slot sends."""
    return _starts_kept_window(messages, window_start(config, len(messages)))


def window_start(mode: SlotMode | SlotConfig, count: int) -> int:
    """The oldest raw message a slot of ``count`` messages needs to render its next request.

    0 in Full mode (every message is sent); in Focused mode the first
    message after what the summary covers, at most ``max_recent_messages``
    back from the end. A resumed slot loads its messages from here on.
    """
    if isinstance(mode, SlotConfig):
        mode = mode.mode
    if not isinstance(mode, FocusedConfig):
        return 0
    start = min(mode.summary_covers, count)
    if mode.max_recent_messages is not None:
        start = max(start, count - mode.max_recent_messages)
    return start


@functools.lru_cache(maxsize=256)
def system_message(text: str) -> Message:
    """The system message of ``text``, one shared object per text (the last 256 kept).

    Requests carry it for a slot's system prompt and summary, so its token
    count, kept on the message, is made once: code that sizes a request
    (a plugin's budget) should build the system prompt's message with it too.
    """
    return Message.system(text)


def render_context(
    system_prompt: str | None, messages: Sequence[Message], config: SlotConfig
) -> list[Message]:
    """What a request carries for a slot with ``config`` and raw ``messages``."""
    before, start, after = render_parts(system_prompt, messages, config)
    return [*before, *messages[start:], *after]


def render_parts(
    system_prompt: str | None, messages: Sequence[Message], config: SlotConfig
) -> tuple[list[Message], int, list[Message]]:
    """:func:`render_context` in three parts: ``(before, start, after)``.

    The request is ``before``, then raw messages ``start:`` (the window),
    then ``after``: the system prompt, summary and pinned messages lie
    outside the window, so its tokens can be kept as running totals.
    """
    head = [system_message(system_prompt)] if system_prompt else []
    focused = config.focused
    if focused is None:
        return head, 0, []
    start = focused_window(messages, focused)
    pins = pinned_before(messages, focused.pinned, start)
    if focused.summary_override is None:
        return [*head, *pins], start, []
    text = f"{focused.summary_label} {focused.summary_override}"
    if focused.summary_role == "user":
        summary = [_user_message(text)]
        if focused.summary_position == "end":
            return [*head, *pins], start, [*summary, _acknowledgement()]
        first = pins[0] if pins else messages[start] if start < len(messages) else None
        if first is None or first.role == "user":
            summary.append(_acknowledgement())
        return [*head, *summary, *pins], start, []
    summary_message = system_message(text)
    if focused.summary_position == "end":
        return [*head, *pins], start, [summary_message]
    return [*head, summary_message, *pins], start, []


def _kept_when_appended(config: SlotConfig, start: int, count: int) -> bool:
    """Whether :func:`render_parts` (window from ``start`` of ``count``) survives appends.

    Full mode renders no message; a Focused window without ``max_recent_messages``
    that starts at a message already held starts there whatever follows, and so
    do the pins before it and the summary around it.
    """
    focused = config.focused
    return focused is None or (focused.max_recent_messages is None and start < count)


@functools.lru_cache(maxsize=256)
def _user_message(text: str) -> Message:
    """One shared user message per summary text, so its token count is kept."""
    return Message.user(text)


@functools.lru_cache(maxsize=1)
def _acknowledgement() -> Message:
    """The assistant's reply after a user-role summary, so roles keep alternating."""
    return Message.assistant(SUMMARY_ACKNOWLEDGEMENT)


@define
class ContextSlot:
    """One conversation thread of a session: its raw history and its config.

    The raw history is append-only. :meth:`load_messages` returns exactly what
    the next request will carry (before the user's new message).
    ``version`` is the store's config version of the slot this object holds
    (0 before its config was first stored); see :class:`~agentcore.stores.SlotHead`.

    The object holds a window of the history: the messages from index
    :attr:`offset` on (a resumed slot loads only what its mode sends, see
    ``window_start``). Indices are absolute everywhere: ``messages[i]``
    is raw message ``i`` and :meth:`message_count` is the true total.
    Reading a message before the window raises :class:`~agentcore.errors.SessionError`;
    older messages come from the store through
    :meth:`~agentcore.AgentSession.history` or :meth:`ensure_loaded`.
    """

    session_id: str
    id: str
    config: SlotConfig = field(factory=SlotConfig)
    system_prompt: str | None = None
    _messages: list[Message] = field(factory=list, alias="messages")
    _offset: int = field(default=0, alias="offset", validator=NON_NEGATIVE_INT)
    _version: int = field(default=0, alias="version", validator=NON_NEGATIVE_INT)
    _pins_held: dict[int, Message] = field(factory=dict, init=False, repr=False)
    """Pinned messages older than the window, by absolute index."""
    _totals: TokenTotals = field(factory=TokenTotals, init=False, repr=False)
    """Running token totals of the loaded messages (see :meth:`count_context`)."""
    _parts: tuple[tuple[Any, ...], int | None, tuple[list[Message], int, list[Message]]] | None = (
        field(default=None, init=False, repr=False, eq=False)
    )
    """The last :func:`render_parts` of the slot, with what it was made from."""

    @property
    def version(self) -> int:
        """The stored config version this object holds (0: config not stored yet)."""
        return self._version

    @property
    def messages(self) -> Sequence[Message]:
        """The raw history by absolute index, oldest first: a read-only view of the window."""
        return WindowMessages(self._messages, self._offset, self.id, self._pins_held)

    @property
    def offset(self) -> int:
        """Index of the oldest raw message the object holds (0: it holds them all)."""
        return self._offset

    def __len__(self) -> int:
        return self._offset + len(self._messages)

    def message_count(self) -> int:
        """How many raw messages the slot holds, loaded or not."""
        return self._offset + len(self._messages)

    def raw_messages(self, start: int = 0, stop: int | None = None) -> list[Message]:
        """A copy of the raw history from ``start`` to ``stop`` (absolute, loaded indices)."""
        return WindowMessages(self._messages, self._offset, self.id, self._pins_held)[start:stop]

    def _render_parts(self) -> tuple[list[Message], int, list[Message]]:
        """:func:`render_parts` of this slot, made again only when what it reads changed.

        It reads the window held, the config (frozen: a change is a new object),
        the system prompt, the pinned messages held and, unless the render cannot
        change when messages are appended, the message count; a turn asks for it
        more than once (its budget, then its request). Callers never change the
        lists it returns.
        """
        key = (self._offset, self.config, self.system_prompt, len(self._pins_held))
        count = len(self._messages)
        kept = self._parts
        # The same config object compares equal at once; an equal new one renders the same.
        if kept is not None and kept[0] == key and kept[1] in (None, count):
            return kept[2]
        parts = render_parts(self.system_prompt, self.messages, self.config)
        self._parts = (
            key,
            None if _kept_when_appended(self.config, parts[1], len(self)) else count,
            parts,
        )
        return parts

    def load_messages(self) -> list[Message]:
        """The messages the next request will carry, system prompt first (a new list)."""
        before, start, after = self._render_parts()
        if start == self._offset:  # the window is all that is loaded: one copy, not two
            return [*before, *self._messages, *after]
        return [*before, *self.messages[start:], *after]

    def load_messages_with(self, tail: Sequence[Message]) -> tuple[Message, ...]:
        """:meth:`load_messages`, then ``tail``, as one tuple: a request's messages, one copy."""
        before, start, after = self._render_parts()
        if start == self._offset:
            return (*before, *self._messages, *after, *tail)
        return (*before, *self.messages[start:], *after, *tail)

    async def count_context(self, counter: TokenCounter, *, limit: int | None = None) -> int:
        """The tokens :meth:`load_messages` costs as a request, counted by ``counter``.

        The window's tokens come from running totals kept per slot: a call
        counts only the messages appended since the last one (their counts
        usually come with them from the store, see
        :attr:`~agentcore.tokens.TokenCounter.key`), whatever the history's
        length. Long messages are counted off the event loop.

        ``limit``: the caller only needs to know whether the context exceeds
        this many tokens. Messages not counted yet are then counted newest
        first, and counting stops as soon as the total passes ``limit``: a
        result above ``limit`` is then at least that much but may be less
        than the whole context (a long history loaded without its counts is
        not all tokenized to learn that it does not fit). A result at or
        below ``limit`` is always the exact count.
        """
        before, start, after = self._render_parts()
        fixed = await counter.count_messages_async([*before, *after])
        room = None if limit is None else limit - fixed
        return fixed + await self._totals.window_tokens(
            counter, self._messages, self._offset, start, room
        )

    async def ensure_loaded(self, store: MemoryStore, start: int | None = None) -> None:
        """Read from ``store`` the messages from ``start`` up to the window, and the pinned ones.

        ``start`` defaults to what the slot's config needs (``window_start``).
        One range read of the missing messages, plus one per run of pinned
        messages older than that (a Focused slot sends them whatever their
        age); nothing is read when they are already held.
        """
        if start is None:
            start = window_start(self.config, len(self))
        start = max(0, min(start, len(self)))
        if start < self._offset:
            self._messages[:0] = await self._read(store, start, self._offset)
            self._offset = start
        await self._load_pins(store)

    async def _load_pins(self, store: MemoryStore) -> None:
        focused = self.config.focused
        if focused is None:
            return
        missing = [
            index
            for index in focused.pinned
            if index < self._offset and index not in self._pins_held
        ]
        for run in _runs(missing):
            for index, message in zip(
                run, await self._read(store, run.start, run.stop), strict=True
            ):
                self._pins_held[index] = message

    async def _read(self, store: MemoryStore, start: int, stop: int) -> list[Message]:
        messages = await store.load_messages(self.session_id, self.id, start, stop)
        if len(messages) != stop - start:
            from agentcore.errors import CorruptDataError

            raise CorruptDataError(
                f"slot {self.id!r} of session {self.session_id!r}: the store returned "
                f"{len(messages)} messages for indices {start}..{stop}"
            )
        return messages

    def record_stored_config(self, config: SlotConfig, version: int) -> None:
        """Hold ``config`` as the slot's config, stored at config ``version``.

        Core-facing: the session calls it once a store write that stored
        ``config`` has committed (or after it read the config from the
        store), so the object agrees with its store. Plugins change a slot's
        config through :meth:`~agentcore.AgentSession.write_slot_config`,
        which calls this after its write.
        """
        self.config = config
        self._version = version

    def with_appended(self, messages: Sequence[Message]) -> ContextSlot:
        """A copy of this slot holding ``messages`` after its history (stored nowhere).

        The copy holds the same window (from :attr:`offset` on) and pinned messages, so
        a check can look at the slot as the next turn would leave it.
        """
        probe = ContextSlot(
            self.session_id,
            self.id,
            self.config,
            system_prompt=self.system_prompt,
            messages=[*self._messages, *messages],
            offset=self._offset,
            version=self._version,
        )
        probe._pins_held.update(self._pins_held)
        return probe

    def drop_unsent(self) -> int:
        """Let go of the held messages the slot will never send again; return how many.

        Those the summary covers (in Focused mode: before ``summary_covers``, which is
        never inside the window of recent messages): they are never sent again (a
        summary that starts over reads them from the store), so the object's memory is
        bounded by its window and what awaits a summary, not by its age. Pinned ones
        among them stay held. Core-facing: the session calls it after each stored
        config (a summary); :meth:`~agentcore.AgentSession.history` and
        :meth:`ensure_loaded` read older messages from the store.
        """
        focused = self.config.focused
        start = 0 if focused is None else min(focused.summary_covers, len(self))
        cut = start - self._offset
        if cut <= 0:
            return 0
        for index in focused.pinned if focused is not None else ():
            if self._offset <= index < start:
                self._pins_held[index] = self._messages[index - self._offset]
        del self._messages[:cut]
        self._totals.drop(cut, start)
        self._offset = start
        return cut

    def record_appended(self, messages: Sequence[Message]) -> None:
        """Add ``messages``, which the store now holds, after the slot's raw history.

        Core-facing: the session calls it once a store write that appended
        ``messages`` has committed (or after it read them from the store).
        """
        self._messages.extend(messages)


def _runs(indices: Sequence[int]) -> list[range]:
    """Sorted ``indices`` as runs of consecutive numbers."""
    runs: list[range] = []
    for index in indices:
        if runs and runs[-1].stop == index:
            runs[-1] = range(runs[-1].start, index + 1)
        else:
            runs.append(range(index, index + 1))
    return runs
