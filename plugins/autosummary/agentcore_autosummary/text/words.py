r"""Words: runs of letters, digits or underscores (``\w+``), and where a word is used.

Chinese and Japanese text has no spaces between its words: a text that starts
with one of the :data:`CJK` characters is found as it is written, never as a
whole word.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

CJK = "\u3400-\u9fff"
"""The CJK unified ideographs (with extension A), as a character class's range."""

_CJK_CHARACTER = re.compile(f"[{CJK}]")
_WORD = re.compile(r"\w+")
_ASCII_NON_WORD = str.maketrans(
    {chr(code): " " for code in range(128) if not (chr(code).isalnum() or chr(code) == "_")}
)


def starts_cjk(text: str) -> bool:
    """Whether ``text`` starts with a :data:`CJK` character."""
    return _CJK_CHARACTER.match(text) is not None


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a :data:`CJK` character."""
    return not text.isascii() and _CJK_CHARACTER.search(text) is not None


def words(text: str) -> list[str]:
    """The words of ``text``, in order, as written."""
    return _WORD.findall(text)


def folded_words(text: str) -> list[str]:
    r"""The words of ``text``, case-folded, in order.

    The runs ``\w+`` finds; in ASCII text, found by turning every other
    character into a space and splitting (a few times faster than the pattern).
    """
    folded = text.casefold()
    if folded.isascii():
        return folded.translate(_ASCII_NON_WORD).split()
    return _WORD.findall(folded)


def folded(text: str) -> str:
    """``text`` case-folded, one space between its parts, none at its ends: for comparing."""
    return " ".join(text.split()).casefold()


def one_space(text: str) -> str:
    r"""``re.sub(r"\s+", " ", text)``: each run of whitespace made one space, edges included.

    ``str.split`` cuts at the characters ``\s`` matches (``str.isspace``), and
    joining its words is many times faster than the substitution on a long text
    (a transcript of a few thousand words).
    """
    parts = text.split()
    joined = " ".join(parts)
    if not parts:
        return " " if text else ""
    if text[0].isspace():
        joined = " " + joined
    if text[-1].isspace():
        joined += " "
    return joined


def word_ends(word: str, text: str) -> Iterator[int]:
    r"""Where each use of ``word`` in ``text`` ends, first to last, none overlapping.

    A word that starts with a :data:`CJK` character is found as it is written;
    any other is found in any case and as a whole word, as the pattern
    ``(?<!\w)word(?!\w)`` with ``re.IGNORECASE`` finds it. In ASCII text
    (the case of an ASCII word is then its lower case alone) that is a plain
    search of the lowered text, several times faster than the pattern.
    """
    if starts_cjk(word):
        yield from (match.end() for match in re.finditer(re.escape(word), text))
    elif word and word.isascii() and text.isascii():
        needle, lowered = word.lower(), text.lower()
        at = lowered.find(needle)
        while at >= 0:
            end = at + len(needle)
            if not (_is_word_character(lowered, at - 1) or _is_word_character(lowered, end)):
                yield end
                at = lowered.find(needle, end)
            else:
                at = lowered.find(needle, at + 1)
    else:
        pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)
        yield from (match.end() for match in pattern.finditer(text))


def _is_word_character(text: str, at: int) -> bool:
    """Whether ``text[at]`` is a letter, a digit or ``_`` (False out of bounds)."""
    if at < 0 or at >= len(text):
        return False
    character = text[at]
    return character.isalnum() or character == "_"


_CJK_OR_KANA = re.compile(f"[{CJK}\u3040-\u30ff]")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


def is_mostly_cjk(text: str) -> bool:
    """Whether ``text`` is mostly Chinese or Japanese: more such characters than Latin words.

    A Chinese word is one or two characters, so a text written in Chinese with names and
    identifiers in Latin letters counts as Chinese, and an English text quoting a few
    Chinese words does not. A text with neither counts as not.
    """
    if text.isascii():
        return False
    return len(_CJK_OR_KANA.findall(text)) > len(_LATIN_WORD.findall(text))
