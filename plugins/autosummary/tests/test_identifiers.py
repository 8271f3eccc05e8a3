"""What the identifier extractor finds: the values a reader would call a fact's.

The sentences are the quality bench's (``bench/quality/conversations.py``) and
the summaries a 1.5B model wrote of them (``bench/results/quality.json``).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentcore_autosummary import find_identifiers
from agentcore_autosummary.text import identifiers as I
from agentcore_autosummary.text.identifiers import _UNLED, holds
from agentcore_autosummary.text.words import one_space, word_ends


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Kick-off notes for Harbor, the new customer portal. The project lead is Dana "
            "Whitfield; she signs off on scope changes. The launch date is April 14, so "
            "please plan backwards from that.",
            ["April 14", "Harbor", "Dana Whitfield"],
        ),
        (
            "Infrastructure decisions: the database will be MySQL 8, because the ops team "
            "knows it well. The staging cluster is stg-harbor-03.",
            ["MySQL 8", "stg-harbor-03"],
        ),
        (
            "For the public API, the rate limit is 5,000 requests per minute per key. The "
            "budget approved by finance is 40,000 dollars for the quarter.",
            ["5,000 requests", "40,000 dollars", "API"],
        ),
        (
            "Security review outcome: the auth provider will be Keycloak, self-hosted. Also "
            "the upload limit for attachments is 25 MB per file.",
            ["25 MB", "Keycloak"],
        ),
        (
            "Performance notes: set the cache TTL to 900 seconds for catalogue pages. The code "
            "freeze is April 28.",
            ["April 28", "900 seconds", "TTL"],
        ),
        (
            "Change of plan from the ops review: the database is now PostgreSQL 16 instead, "
            "since we need row-level security.",
            ["PostgreSQL 16"],
        ),
        (
            "The failing test is tests/test_lexer.py::test_unicode_escape. The error is a "
            "UnicodeDecodeError raised while lexing an escaped string.",
            ["tests/test_lexer.py::test_unicode_escape", "UnicodeDecodeError"],
        ),
        (
            "The last good commit is a3f9c2e (lexer: handle escaped quotes); 9b1d0f4 started "
            "reading chunks as bytes.",
            ["a3f9c2e", "9b1d0f4"],
        ),
        (
            "Our Python version in CI is 3.11. I created the branch fix/unicode-escape-214 for "
            "the fix. The CI timeout is 30 minutes.",
            ["fix/unicode-escape-214", "30 minutes", "3.11", "Python", "CI"],
        ),
        (
            "The total coverage is 81%; the lexer is at 84% on its own and the parser at 78%.",
            ["81%", "84%", "78%"],
        ),
        (
            "Hi, my name is Priya Raman. My order number is ORD-58213 and I have ticket "
            "SUP-44817. I paid 129.99 for it; the warranty ends on 2027-01-31.",
            ["2027-01-31", "129.99", "ORD-58213", "SUP-44817", "Priya Raman"],
        ),
        (
            "If you call me, the phone number ends in 4471. Can I use the discount code "
            "SPRING15 on a second jug?",
            ["SPRING15", "4471"],
        ),
        (
            "We meet on March 14 at 9:30 am; it costs $40, needs 512 MB and 30 s, and the "
            "import wrote 2,500 rows with v1.2.3 of the FooBar tool.",
            ["March 14", "9:30 am", "$40", "512 MB", "30 s", "2,500 rows", "v1.2.3", "FooBar"],
        ),
        (
            "Raise the memory limit of the quotes container to 1280Mi; it requests 2Gi.",
            ["1280Mi", "2Gi"],
        ),
        (
            "Deploy https://example.com/app/v2?env=prod. to /srv/app/config.yaml, "
            "ticket JIRA-1432, build 123e4567-e89b-12d3-a456-426614174000, "
            'mail ops@example.org, edit ./src/main.py and ~/notes/todo.md, name it "Harbor".',
            [
                "https://example.com/app/v2?env=prod",
                "ops@example.org",
                "123e4567-e89b-12d3-a456-426614174000",
                "/srv/app/config.yaml",
                "./src/main.py",
                "~/notes/todo.md",
                "Harbor",
                "JIRA-1432",
            ],
        ),
        ("我们开始物流看板项目。客户是华信物流，项目负责人是王磊。", ["华信物流", "王磊"]),
        ("技术方案：数据库先用MongoDB，测试环境是test-cn-02。", ["test-cn-02", "MongoDB"]),
        ("上线日期是6月3日，预算是12万元。", ["6月3日", "12万元"]),
        ("部署需要8台服务器，接口超时设为30秒，每天9点30分同步。", ["9点30分", "8台", "30秒"]),
        # Ordinary words are not values: a capital that only starts a sentence, and/or,
        # small bare numbers, words with hyphens, Markdown labels.
        ("Alice will check. Keyboard navigation and end-to-end tests and/or 42 at 10.", []),
        ("**Decisions**: none yet.\n## Open tasks\n- none", []),
        ("风险要写清楚影响和应对办法，而不只是列出名字。", []),
    ],
)
def test_the_values_of_real_sentences_are_found(text: str, expected: list[str]) -> None:
    assert find_identifiers(text) == expected


def test_a_name_that_starts_one_sentence_and_is_used_inside_another_is_found() -> None:
    assert find_identifiers("Keycloak is self-hosted. We chose Keycloak.") == ["Keycloak"]


@pytest.mark.parametrize(
    ("summary", "identifier"),
    [
        ("The rate limit is 5000 requests per minute.", "5,000 requests"),
        ("Rate limit: 5,000 req/min.", "5,000 requests"),
        ("Launch on 14 April.", "April 14"),
        ("The TTL is 900s.", "900 seconds"),
        ("Uploads up to 25MB.", "25 MB"),
        ("auth: keycloak", "Keycloak"),
    ],
)
def test_a_summary_holds_a_value_in_another_spelling(summary: str, identifier: str) -> None:
    assert holds(summary, identifier)


@pytest.mark.parametrize(
    ("summary", "identifier"),
    [
        ("The rate limit is 2,500 requests per minute.", "5,000 requests"),
        ("Uploads up to 2.5 MB.", "25 MB"),
        ("The TTL is 9 seconds, 25 tries.", "25 MB"),
        ("Launch on April 15.", "April 14"),
    ],
)
def test_another_value_is_not_held(summary: str, identifier: str) -> None:
    assert not holds(summary, identifier)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_is_read_without_error(text: str) -> None:
    found = find_identifiers(text)
    assert len(found) == len(set(found))
    for identifier in found:
        assert identifier and identifier == identifier.strip()
        assert identifier in text and holds(text, identifier)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Dana",
                "Whitfield",
                "5,000",
                "MB",
                "v1.2",
                "/srv",
                "a-1",
                "**x**:",
                "是",
                "王磊",
                "，",
                ". ",
                " ",
                "\n",
                "April",
                "14",
                "@",
                "https://",
                "`",
                '"',
                "_",
                "3.12",
            ]
        ),
        max_size=60,
    )
)
def test_text_made_of_identifier_pieces_is_read_without_error(pieces: list[str]) -> None:
    text = "".join(pieces)
    for identifier in find_identifiers(text):
        assert identifier in text


_PIECES = [
    "Dana",
    "Whitfield",
    "dana",
    "PostgreSQL",
    "16",
    "Python 3.12",
    "v1.2.3-rc1",
    "3.11",
    "5,000",
    "12,500.5",
    "MB",
    " MB",
    "25MB",
    "$",
    "€12.50",
    "40%",
    "%",
    " requests",
    "万元",
    "900 seconds",
    "/srv/app",
    "./src/x.py",
    "~/notes",
    "src/a.py::test_b",
    "and/or",
    "C:\\Users\\me",
    "fix/unicode-escape-214",
    "2026-03-14",
    "March 14",
    "14th of March",
    "Mar",
    "Dec 3",
    "Sep",
    "Oct 1st",
    "Nov",
    "Jul 4",
    "Feb",
    "Aug 9",
    "6月17日",
    "2026年3月",
    "9:30",
    " am",
    "3 pm",
    "9点30分",
    "JIRA-1432",
    "stg-harbor-03",
    "SPRING15",
    "a3f9c2e",
    "srv01",
    "#214",
    "#",
    "a@b.co",
    "@",
    "user_name",
    "camelCase",
    "_x",
    "https://e.com/x",
    "123e4567-e89b-12d3-a456-426614174000",
    "`lex`",
    '"Harbor"',
    "'ab'",
    "“x”",
    "「华信物流」",
    "《书》",
    "是",
    "为",
    "华信物流",
    "改为",
    "：",
    ":",
    "，",
    "。",
    ". ",
    ", ",
    " ",
    "\n",
    "-",
    "_",
    ".",
    "/",
    "\\",
    "'",
    "’s",
    "4096",
    "0",
    "**x**:",
    "# h\n",
    "[… 12 tokens left out …]",
    "x",
    "A",
    "Z9",
    "é",
    "1",
    "v",
    "J",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40), st.text(max_size=60))
def test_each_led_pattern_finds_what_its_plain_pattern_finds(pieces: list[str], noise: str) -> None:
    # The identifier patterns carry a lead (a lookaround every match meets at its start)
    # that only makes them faster: their matches must be those of the plain patterns.
    for text in ("".join(pieces), noise, "".join(pieces) + noise):
        for led, plain in _UNLED.items():
            assert [m.span() for m in led.finditer(text)] == [
                m.span() for m in plain.finditer(text)
            ], (led.pattern[:40], text)
            assert led.sub("\x00", text) == plain.sub("\x00", text)


def test_each_led_pattern_finds_what_its_plain_pattern_finds_in_every_piece() -> None:
    texts = [" ".join(_PIECES), "".join(_PIECES)]
    texts += [f"{before}{piece}{after}" for piece in _PIECES for before, after in _AROUND]
    for text in texts:
        for led, plain in _UNLED.items():
            assert [m.span() for m in led.finditer(text)] == [
                m.span() for m in plain.finditer(text)
            ], (led.pattern[:40], text)


_AROUND = [("", ""), (" ", " "), ("(", "."), ("x", "y"), ("1", "2"), ("\n", "\n"), ("-", "/")]


def _reference_identifiers(text: str) -> list[str]:
    """find_identifiers as written before its shortcuts: each plain pattern, then its sub."""
    plain = dict(_UNLED)

    def unled(pattern: re.Pattern[str]) -> re.Pattern[str]:
        return plain.get(pattern, pattern)

    seen: dict[str, None] = {}
    rest = I._CUT_MARK.sub(I._GAP, text)

    def take(pattern: re.Pattern[str], *, group: bool = False) -> None:
        nonlocal rest
        for match in unled(pattern).finditer(rest):
            value = next((g for g in match.groups() if g), "") if group else match.group()
            found = I._clean(value)
            if pattern is I._VERSION and found.split(" ")[0].casefold() in I._STOP_CAPITALS:
                found = found.split(" ")[-1]
                if "." not in found and len(found) < 3:
                    continue
            if found and (pattern is not I._PATH or I._is_path(found)):
                seen.setdefault(found, None)
        rest = unled(pattern).sub(I._GAP, rest)

    for pattern in (I._URL, I._EMAIL, I._UUID, I._PATH, I._DATE, I._TIME, I._AMOUNT):
        take(pattern)
    take(I._VERSION)
    take(I._QUOTED, group=True)
    take(I._CODE)
    rest = I._LABEL.sub(I._GAP, rest)
    for found in I._names(rest):
        seen.setdefault(found, None)
    rest = unled(I._NAME).sub(I._GAP, rest)
    for match in unled(I._CJK_NAME).finditer(rest):
        if not match.group(1).endswith(I._BAD_CJK_ENDS):
            seen.setdefault(match.group(1), None)
    for match in unled(I._NUMBER).finditer(rest):
        if sum(c.isdigit() for c in match.group()) >= 3:
            seen.setdefault(match.group(), None)
    return list(seen)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40), st.text(max_size=60))
def test_identifiers_are_those_the_plain_patterns_find(pieces: list[str], noise: str) -> None:
    for text in ("".join(pieces), " ".join(pieces), noise, "".join(pieces) + noise):
        assert find_identifiers(text) == _reference_identifiers(text)


def test_identifiers_of_every_piece_are_those_the_plain_patterns_find() -> None:
    texts = [" ".join(_PIECES), "".join(_PIECES)]
    texts += [f"{before}{piece}{after}" for piece in _PIECES for before, after in _AROUND]
    for text in texts:
        assert find_identifiers(text) == _reference_identifiers(text), text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789,. a\n", max_size=80))
def test_thousands_separators_are_the_commas_the_plain_pattern_finds(text: str) -> None:
    plain = re.compile(r"(?<=\d),(?=\d{3})")
    assert [m.span() for m in I._SEPARATOR.finditer(text)] == [
        m.span() for m in plain.finditer(text)
    ]


_SPACED = st.text(
    st.one_of(
        st.sampled_from(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2000\u2028\u3000 ,1a"), st.characters()
    ),
    max_size=40,
)


@given(_SPACED)
@example(" \t\n")
@example("")
def test_whitespace_runs_become_one_space_as_the_regular_expression_makes_them(text: str) -> None:
    # The fast spelling of re.sub(r"\s+", " ", text) that identifiers are looked up in.
    assert one_space(text) == re.sub(r"\s+", " ", text)
    assert I._normal(text) == re.sub(r"\s+", " ", I._SEPARATOR.sub("", text)).casefold()


_WORD_TEXT = st.text(
    st.one_of(st.sampled_from("aAkKsS_1- .,ſKİı发布"), st.characters()), max_size=30
)


@given(st.sampled_from(["a", "ak", "Status", "a-a", "s_1", "发布", "kſ"]) | _WORD_TEXT, _WORD_TEXT)
@example("a-a", "a-a-a a-A")
@example("status", "Status: STATUS_2 status.")
@example("ks", "KS ſ ks")
@example("发布", "发布日期 发布")
@example("", "ab c")
def test_a_word_is_found_where_its_pattern_finds_it(word: str, text: str) -> None:
    # The plain search in ASCII text must end where the whole-word pattern's matches end.
    if re.match(r"[\u4e00-\u9fff]", word):
        expected = [m.end() for m in re.finditer(re.escape(word), text)]
    else:
        pattern = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)
        expected = [m.end() for m in pattern.finditer(text)]
    assert list(word_ends(word, text)) == expected
