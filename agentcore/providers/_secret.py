"""Secret: a string that never shows itself; :func:`mask_secrets` keeps secrets out of a text."""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
"""What a secret becomes in a message."""

MIN_MASKED_ANYWHERE_CHARS = 8
"""A secret of this many characters or more is masked wherever it appears.

A shorter one (a test key such as ``"k"``, vLLM's ``"EMPTY"``) is masked only
where it stands as a whole token: masked inside ordinary words it would
mangle the message (``"lookup"`` as ``"loo***up"``) and show what the key is.
"""

_TOKEN_CHAR = r"[\w-]"
"""A character that joins its neighbours into one token (letters, digits, ``_``, ``-``)."""


class Secret:
    """A string that never shows itself in a repr or str."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret value itself: only for the header that carries it."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` replaced by ``***``, the longest first.

    A secret of :data:`MIN_MASKED_ANYWHERE_CHARS` characters or more is
    replaced wherever it appears; a shorter one only where no letter, digit,
    ``_`` or ``-`` touches it on either side (``key=k``, ``Bearer k``,
    ``"k"``, but not the ``k`` of ``lookup``). An empty secret is ignored.
    """
    for secret in sorted({secret for secret in secrets if secret}, key=len, reverse=True):
        if len(secret) >= MIN_MASKED_ANYWHERE_CHARS:
            text = text.replace(secret, MASK)
        elif secret in text:
            whole = rf"(?<!{_TOKEN_CHAR}){re.escape(secret)}(?!{_TOKEN_CHAR})"
            text = re.sub(whole, MASK, text)
    return text
