"""Cutting a long text for a request keeps every character whole, in every script."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentcore.tokens import TokenCounter

COUNTER = TokenCounter("gpt-4o")
MARKER = "tokens left out …]"

# Chinese, Japanese, Korean, Cyrillic, Arabic, accented Latin, emoji (some joined with ZWJ).
PIECES = st.sampled_from(
    [
        "数据库迁移已完成",
        "東京タワー",
        "안녕하세요",
        "Привет мир",
        "مرحبا بالعالم",
        "café naïve",
        "😀",
        "👩‍💻",
        "🇳🇴",
        "🧑🏽‍🚀",
        " plain words ",
        "\n",
    ]
)


def _check_cut(text: str, max_tokens: int) -> None:
    cut = COUNTER.cut_middle(text, max_tokens)
    assert "\ufffd" not in cut
    assert COUNTER.count_text(cut) <= max(max_tokens, COUNTER.count_text(cut.split("\n")[-1]))
    if cut == text:
        return
    head, _, rest = cut.partition("\n[… ")
    assert text.startswith(head)
    if MARKER in rest:
        tail = rest.split(MARKER + "\n", 1)[1] if MARKER + "\n" in rest else ""
        assert text.endswith(tail)


@settings(max_examples=150)
@given(st.lists(PIECES, min_size=20, max_size=200), st.integers(min_value=20, max_value=120))
def test_a_cut_of_mixed_scripts_and_emoji_holds_no_broken_character(
    pieces: list[str], max_tokens: int
) -> None:
    _check_cut("".join(pieces), max_tokens)


def test_the_cuts_that_broke_characters_before() -> None:
    broken = 0
    for size in range(30, 75):
        text = ("部署使用端口八四四三，" + "🧑🏽‍🚀" * 3) * size
        cut = COUNTER.cut_middle(text, 40)
        broken += "\ufffd" in cut
        assert cut != text
    assert broken == 0
