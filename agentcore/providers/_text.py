r"""Text from a provider made valid: surrogate pairs joined, lone surrogates replaced.

JSON may spell a character outside the Basic Multilingual Plane as two
``\uXXXX`` escapes (a UTF-16 surrogate pair). A model server that streams
text may cut such a pair between two chunks, and a faulty one may send half
a pair alone. Python decodes either into a string holding lone surrogates,
which cannot be encoded as UTF-8 and so cannot be stored or printed.
:func:`valid_text` joins pairs and replaces what is left alone with U+FFFD;
:class:`TextJoiner` does the same across the pieces of a stream, holding a
trailing high surrogate back until the next piece shows whether its low
half follows.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
"""What a lone surrogate becomes."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def valid_json(value: Any) -> Any:
    """``value`` (decoded JSON) with :func:`valid_text` applied to every string and key."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_text(str(key)): valid_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [valid_json(item) for item in value]
    return value


def _is_high_surrogate(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


class TextJoiner:
    """Makes the pieces of one streamed text valid, joining pairs split between pieces."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """The valid text ``piece`` completes; a trailing high surrogate is held back."""
        text = self._held + piece
        self._held = ""
        if text and _is_high_surrogate(text[-1]):
            self._held = text[-1]
            text = text[:-1]
        return valid_text(text)

    def flush(self) -> str:
        """The text is over: what is still held, replaced (``""`` when nothing is)."""
        held, self._held = self._held, ""
        return REPLACEMENT if held else ""
