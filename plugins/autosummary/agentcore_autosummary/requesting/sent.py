"""The conversation's request as it was last sent, per slot: the prefix a summary can reuse.

Providers bill a prompt prefix they have cached at a fraction of the input
price. A summary request that starts with exactly what the last turn request
sent (system prompt, tools, messages) and then the model's reply to it is
billed mostly as cache reads; :mod:`agentcore_autosummary.requesting.prefix_requests`
builds it from what this module records in ``after_model_call``.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from agentcore import Message, ModelCallInfo, ToolSpec, TurnContext
from agentcore.plugin_api import SessionHandle, StashKey


@frozen
class SentRequest:
    """One turn request as it went out, and the reply that came back.

    ``request_messages`` are the request's messages, each as the conversation
    stores it (a message a hook sent as a copy for that request alone, see
    :data:`SENT_AS`, is recorded as the original), and ``reply`` the reply's
    message; :attr:`messages` is both (the start of the next turn request).
    ``tools`` are its tool definitions in the order sent, ``model`` and
    ``cache_key`` as the request carried them. The request's own tuples are
    kept, not copied: a turn records one, a summary reads it.
    """

    request_messages: tuple[Message, ...]
    reply: Message
    tools: tuple[ToolSpec, ...]
    model: str | None
    cache_key: str | None

    @property
    def messages(self) -> tuple[Message, ...]:
        """The request's messages followed by the reply's message (a new tuple)."""
        return (*self.request_messages, self.reply)


SENT_AS = StashKey[dict[int, tuple[Message, Message]]]("autosummary messages sent as copies")
"""In a turn's stash: by ``id`` of a copy sent in that turn's requests alone (automatic
recall's user message), the copy and the message the turn stores. The record of a
request holds the stored one, so a summary that repeats the request from the cache
reads the conversation as stored, and the cached prefix holds up to that message."""

LAST_SENT = StashKey[dict[str, SentRequest]]("autosummary last sent request")
"""Per slot id: the last turn request of a live session that got a reply (``session.stash``)."""


def record_sent(ctx: TurnContext, call: ModelCallInfo) -> None:
    """Remember ``call`` as the last request of ``ctx.slot``, if it was a turn's and got a reply.

    Calls of other purposes (a summary's) and calls that failed leave the
    record as it was: the provider cached what it served last.
    """
    if call.purpose != "turn" or call.response is None:
        return
    request = call.request
    messages = tuple(request.messages)
    copies = ctx.stash.get(SENT_AS, None)
    if copies:
        messages = tuple(_stored(message, copies) for message in messages)
    sent = SentRequest(
        request_messages=messages,
        reply=call.response.message,
        tools=tuple(request.tools),
        model=request.model,
        cache_key=request.cache_key,
    )
    ctx.session.stash.setdefault(LAST_SENT, {})[ctx.slot.id] = sent


def _stored(message: Message, copies: dict[int, tuple[Message, Message]]) -> Message:
    """``message``, or the stored message it is a copy of."""
    copy, original = copies.get(id(message), (None, message))
    return original if copy is message else message


def last_sent(session: SessionHandle, slot_id: str) -> SentRequest | None:
    """The last turn request of ``slot_id`` that got a reply in this live session, or None."""
    return session.stash.get(LAST_SENT, {}).get(slot_id)


def position_of(messages: Sequence[Message], wanted: Sequence[Message]) -> int | None:
    """The index just past ``wanted`` inside ``messages``, in order, or None if one is missing.

    ``wanted`` need not be contiguous (pinned messages are left out of a
    summary's input but stay in the request).
    """
    index = 0
    for message in wanted:
        # The same object is equal to itself: most are, and the check spares a field compare.
        while index < len(messages) and (
            messages[index] is not message and messages[index] != message
        ):
            index += 1
        if index == len(messages):
            return None
        index += 1
    return index
