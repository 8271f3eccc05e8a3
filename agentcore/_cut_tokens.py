"""Cutting a text to a token budget by leaving out its middle, for :meth:`TokenCounter.cut_middle`.

The head and the tail are kept and a marker says how many tokens were left
out. With a tiktoken encoding the cut falls on token boundaries (and never
inside a character); otherwise it is found from the share of characters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tiktoken import Encoding

_MAX_TOKEN_CHARS = 64  # generous: characters one token may span


def cut_middle(
    text: str, max_tokens: int, count_text: Callable[[str], int], encoding: Encoding | None
) -> str:
    """``text`` cut to at most ``max_tokens`` tokens as ``count_text`` counts them.

    ``encoding`` is the tiktoken encoding ``count_text`` counts with, or None
    when it counts otherwise (a user's function, the estimate). See
    :meth:`TokenCounter.cut_middle <agentcore.tokens.TokenCounter.cut_middle>`.
    """
    total = count_text(text)
    if total <= max_tokens:
        return text
    room = max_tokens
    # Only the ends of a long text are encoded: no token is longer than this.
    reach = max_tokens * _MAX_TOKEN_CHARS
    ends = (text[:reach], text[-reach:]) if len(text) > 2 * reach else (text, text)
    for _ in range(12):
        keep = max(0, room - 16)
        if encoding is not None:
            start = encoding.encode_ordinary(ends[0])[: keep // 2 + keep % 2]
            end_tokens = encoding.encode_ordinary(ends[1])
            # A token boundary may fall inside a character: the bytes of a token
            # prefix (suffix) can end (start) with part of one, and only there.
            # Dropping that part keeps every character whole, never a U+FFFD.
            head = encoding.decode_bytes(start).decode("utf-8", errors="ignore")
            tail = encoding.decode_bytes(
                end_tokens[len(end_tokens) - keep // 2 :] if keep else []
            ).decode("utf-8", errors="ignore")
        else:
            chars = int(len(text) * keep / max(total, 1))
            head, tail = text[: chars // 2 + chars % 2], text[len(text) - chars // 2 :]
            if not chars:
                tail = ""
        left_out = max(total - count_text(head) - count_text(tail), 1)
        cut = f"{head}\n[… {left_out} tokens left out …]\n{tail}"
        over = count_text(cut) - max_tokens
        if over <= 0:
            return cut
        room -= max(over, 1)
    return f"[… {total} tokens left out …]"
