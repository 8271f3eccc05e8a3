"""Running token totals of a slot's loaded messages, so a context count reads only new ones.

:meth:`ContextSlot.count_context <agentcore.ContextSlot.count_context>` takes the
tokens of the window from a :class:`TokenTotals`: the totals are kept for one
counter key and one window offset, and a count adds only the messages
appended since the last one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attrs import define, field

from agentcore.messages import Message

if TYPE_CHECKING:
    from agentcore.tokens import TokenCounter


@define
class TokenTotals:
    """Running token totals of a slot's loaded messages, for one counter key and offset."""

    _sums: list[int] = field(factory=lambda: [0])
    """Running token totals of the loaded messages: ``_sums[i]`` is the sum of the first i."""
    _key: tuple[str, int] | None = None
    """The counter key and the window offset the totals were made for."""

    async def window_tokens(
        self,
        counter: TokenCounter,
        messages: Sequence[Message],
        offset: int,
        start: int,
        limit: int | None,
    ) -> int:
        """Tokens of loaded raw messages ``start:``, from the running totals.

        ``messages`` are the loaded messages, the first of them raw message
        ``offset``. With ``limit``, the messages past the running totals are
        counted newest first and the count stops once it passes ``limit`` (see
        :meth:`ContextSlot.count_context <agentcore.ContextSlot.count_context>`).
        """
        key = (counter.key, offset)
        if self._key != key:
            self._key, self._sums = key, [0]
        sums = self._sums
        count = offset + len(messages)
        totalled = offset + len(sums) - 1  # the first message without a running total
        counted: list[int] = []  # the counts read newest first, below, newest first
        if limit is not None and totalled < count:
            total = sums[-1] - sums[start - offset] if start < totalled else 0
            for index in range(count - 1, max(start, totalled) - 1, -1):
                tokens = await counter.count_message_async(messages[index - offset])
                counted.append(tokens)
                total += tokens
                if total > limit:
                    return total
        # Each message past the running totals is added to them: those just counted
        # from the counts read above (the newest ones), the others counted now.
        last = sums[-1]
        unread = count - totalled - len(counted)  # the oldest ones, not read above
        for message in messages[len(sums) - 1 : len(sums) - 1 + unread]:
            last += await counter.count_message_async(message)
            sums.append(last)
        for tokens in reversed(counted):
            last += tokens
            sums.append(last)
        return last - sums[start - offset]

    def drop(self, cut: int, offset: int) -> None:
        """Forget the first ``cut`` loaded messages: the window now starts at ``offset``."""
        if self._key is not None and len(self._sums) > cut:  # keep the running totals
            base = self._sums[cut]
            self._sums = [total - base for total in self._sums[cut:]]
            self._key = (self._key[0], offset)
        else:
            self._key, self._sums = None, [0]
