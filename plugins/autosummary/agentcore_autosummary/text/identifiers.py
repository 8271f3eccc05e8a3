r"""What a reader would call the value of a fact: the identifiers of a text.

:func:`find_identifiers` looks for these kinds, in this order; each match is
removed from the text before the next kind is looked for, so a date is not
also read as a number, nor a path as a name:

- **links and addresses**: URLs (``http://``, ``https://``), e-mail
  addresses, UUIDs;
- **paths**: absolute (``/srv/app``), relative (``./src/main.py``,
  ``src/tokenizer/lexer.py``, ``~/notes``), Windows (``C:\Users\me``), a
  pytest node id (``tests/test_x.py::test_y``), a branch-like
  ``fix/unicode-escape-214``;
- **dates and times**: ``2026-03-14``, ``March 14``, ``14 March 2026``,
  ``Mar 14th``, ``6月17日``, ``2026年3月14日``, ``9:30``, ``9:30 am``,
  ``3 pm``, ``9点30分``;
- **amounts and sizes**: money (``$40``, ``€12.50``, ``40,000 dollars``,
  ``15万元``), percentages (``84%``), numbers with a unit (``512 MB``, ``1280Mi``,
  ``30 s``, ``900 seconds``, ``45 minutes``, ``8台``, ``30秒``) or with a
  counted noun (``2,500 rows``, ``5,000 requests``);
- **versions**: ``v1.2.3``, ``1.2.3``, a name with its version
  (``PostgreSQL 16``, ``Python 3.12``), a dotted number (``3.11``);
- **codes**: ticket-like ids (``JIRA-1432``, ``ORD-58213``), hyphenated names
  with a digit (``stg-harbor-03``), capitals with digits (``SPRING15``), a
  commit (``a3f9c2e``: 7 to 40 hexadecimal digits), a word ending in 2 or more
  digits (``srv01``), ``#214``;
- **names**: CamelCase and mixed-case words (``PostgreSQL``, ``UnicodeDecodeError``),
  snake_case (``test_unicode_escape``), runs of capitalized words (``Dana
  Whitfield``; a word that starts a sentence counts only in a run, or when it
  also appears inside a sentence), quoted names (``"Harbor"``, ```lex```,
  ``「华信物流」``), and in Chinese the short name a statement gives
  (``客户是华信物流，`` gives ``华信物流``);
- **other numbers** of 3 or more digits (``4096``, ``12,500``).

The boundaries of every kind are ASCII ones, so a Latin identifier inside
Chinese text (``数据库用MongoDB，``) is found.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentcore_autosummary.text.words import one_space

_L = r"(?<![A-Za-z0-9_])"
"""Not after an ASCII letter, digit or underscore."""
_R = r"(?![A-Za-z0-9_])"
"""Not before an ASCII letter, digit or underscore."""
_LN = r"(?<![A-Za-z0-9_.,])"
"""Not after an ASCII letter, digit, underscore, point or comma: the start of a number."""
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_ORDINAL = r"(?:st|nd|rd|th)?"
_UNITS = (
    "bytes|byte|KiB|MiB|GiB|TiB|KB|MB|GB|TB|PB|kB|Kb|Mb|Gb|B|ms|µs|us|ns|sec|secs|second|"
    "seconds|s|min|mins|minute|minutes|h|hr|hrs|hour|hours|day|days|week|weeks|month|months|"
    "year|years|px|pt|rem|kg|mg|km|cm|mm|GHz|MHz|Hz|kHz|kW|mA|°C|°F|"
    "dollars|dollar|euros|euro|pounds|yen|USD|EUR|GBP|CNY|RMB|JPY|rpm|rps|qps|fps|cores|core|"
    "threads|CPUs|CPU|GPUs|GPU|tokens|Ki|Mi|Gi|Ti|Pi|k|K|M"
)
_CJK_UNITS = (
    "万元|亿元|千元|元|万|亿|台|个|人|秒|分钟|小时|天|周|月|年|"
    "次|条|行|页|块|件|份|倍|岁|米|公里|兆"
)
_STOP_TEXT = (
    "a an the i i'm i've i'll i'd it its this that these those there here then than "
    "and or but so if when while as at by for from in into of on onto to with without "
    "we you he she they me my our your his her their them us yes no not ok okay hi "
    "hello thanks thank please also now next first last after before all any each "
    "every some what which who whom whose why how where is are was were be been being "
    "do does did done can could should would will shall may might must let lets use "
    "set keep make see note noted understood updated recorded got sure great "
    "good fine right well just only still even new old other another both either "
    "neither one two three four five six seven eight nine ten user assistant system "
    "tool result error summary"
)
_STOP_CAPITALS = frozenset(_STOP_TEXT.split())
"""Capitalized words that are never a name on their own."""
_BAD_CJK_ENDS = ("的", "了", "吗", "呢", "吧", "啊", "着", "过")

_URL = re.compile(r"https?://[^\s<>\"'`，。；）]+")
_EMAIL = re.compile(r"(?<![A-Za-z0-9_.+-])[A-Za-z0-9_.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_UUID = re.compile(rf"{_L}[0-9a-fA-F]{{8}}-(?:[0-9a-fA-F]{{4}}-){{3}}[0-9a-fA-F]{{12}}{_R}")
_SEGMENT = r"[A-Za-z0-9_.@+-]+"
_PATH = re.compile(
    r"(?<![\w/.~:])(?:~|\.{1,2})?(?:/" + _SEGMENT + r"){2,}/?"  # /srv/app, ./src/x.py
    r"|(?<![\w/.~:-])" + _SEGMENT + r"(?:/" + _SEGMENT + r")+(?:::\w+)*"  # src/a.py, a/b
    r"|" + _L + r"[A-Za-z]:\\(?:[\w. -]*\\)*[\w.-]*[\w.]"  # C:\Users\me
)
_DATE = re.compile(
    rf"{_L}\d{{4}}-\d{{2}}-\d{{2}}(?:[T ]\d{{1,2}}:\d{{2}}(?::\d{{2}})?)?{_R}"
    rf"|{_L}\d{{1,2}}/\d{{1,2}}/\d{{2,4}}{_R}"
    rf"|{_L}(?:{_MONTHS})\.? \d{{1,2}}{_ORDINAL}(?:,? \d{{4}})?{_R}"
    rf"|{_L}\d{{1,2}}{_ORDINAL} (?:of )?(?:{_MONTHS})(?:,? \d{{4}})?{_R}"
    r"|(?:\d{4}年)?\d{1,2}月\d{1,2}[日号]"
    r"|\d{4}年\d{1,2}月"
)
_TIME = re.compile(
    rf"{_L}\d{{1,2}}:\d{{2}}(?::\d{{2}})?(?: ?[ap]\.?m\.?{_R})?"
    rf"|{_L}\d{{1,2}} ?[ap]\.?m\.?{_R}"
    r"|\d{1,2}点(?:\d{1,2}分|半)?"
)
_AMOUNT = re.compile(
    rf"[$€£¥]\s?(?:{_NUM})(?: ?(?:k|K|M|million|billion|bn){_R})?"
    rf"|{_LN}(?:{_NUM})\s?%"
    rf"|{_LN}(?:{_NUM})\s?(?:{_CJK_UNITS})"
    rf"|{_LN}(?:{_NUM}) ?(?:{_UNITS}){_R}(?:/(?:s|sec|min|h|day|key|user|month))?"
    rf"|{_LN}(?:\d{{1,3}}(?:,\d{{3}})+|\d+) (?:[a-z]{{3,}}s){_R}"
)
_VERSION = re.compile(
    rf"{_L}v\d+(?:\.\d+)*(?:-[A-Za-z0-9.]+)?{_R}"
    rf"|{_L}[A-Z][A-Za-z0-9]*(?:\.js)? \d+(?:\.\d+)*{_R}"  # PostgreSQL 16, Python 3.12
    rf"|{_L}\d+(?:\.\d+){{2,}}(?:-[A-Za-z0-9.]+)?{_R}"
    rf"|{_L}\d+\.\d+{_R}"
)
_CODE = re.compile(
    rf"{_L}[A-Z][A-Z0-9]*-\d+{_R}"  # JIRA-1432
    rf"|{_L}(?=[A-Za-z0-9_.-]*\d)[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*-[A-Za-z0-9]+"
    rf"(?:[-_.][A-Za-z0-9]+)*{_R}"
    rf"|{_L}(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{{4,}}{_R}"  # SPRING15
    rf"|{_L}(?=[a-f0-9]*\d)(?=[a-f0-9]*[a-f])[a-f0-9]{{7,40}}{_R}"  # a commit: a3f9c2e
    rf"|{_L}[A-Za-z][a-z]+\d{{2,}}{_R}"  # srv01, build42
    rf"|(?<![\w#])#\d+{_R}"
)
_QUOTED = re.compile(
    r"(?<![\w])\"([^\"\n\x00]{1,60})\"(?![\w])|`([^`\n\x00]{1,60})`|“([^”\n\x00]{1,60})”"
    r"|「([^」\n\x00]{1,60})」|《([^》\n\x00]{1,60})》|『([^』\n\x00]{1,60})』"
    r"|(?<![\w])'([^'\n\x00]{2,60})'(?![\w])"
)
_NAME = re.compile(
    rf"{_L}(?:[A-Za-z][A-Za-z0-9]*_\w*[A-Za-z0-9]|_+[A-Za-z0-9]\w*)"  # snake_case
    rf"|{_L}[a-z]+[A-Z][A-Za-z0-9]*{_R}"  # camelCase
    rf"|{_L}[A-Z][A-Za-z0-9]*(?:[-'][A-Z]?[a-z]+)?(?: [A-Z][A-Za-z0-9]*(?:[-'][A-Z]?[a-z]+)?)*{_R}"
)
_CJK_NAME = re.compile(
    r"(?<!只|就|还|但|不|也|而|总|都|可|于|要|或|正|像|算|即|真|倒)"
    r"(?:是|为|叫|由|改成|改为|换成|：|:)\s*([\u4e00-\u9fff]{2,6})(?=[，。；、,.;!?！？)）]|$)"
)
_NUMBER = re.compile(rf"{_LN}(?:{_NUM}){_R}")
_STARTS = tuple('.!?。！？:;\n(-*#>"“「')
"""What a sentence starts after (with spaces between)."""
_LABEL = re.compile(
    r"\*\*[^*\n]{1,80}\*\*(?=\s*:)|\*\*[^*\n]{1,80}:\*\*|^\s*#{1,6} [^\n]*", re.MULTILINE
)
"""A Markdown heading or a bold label (``**Decisions**:``): structure, not a value."""
_CUT_MARK = re.compile(r"\[… \d+ tokens left out …\]")
"""The marker of a text cut in the middle (``TokenCounter.cut_middle``): not a value."""
_GAP = "\x00"
"""What a match is replaced with: no word, no space, no punctuation the next kinds look for."""
_UNLED: dict[re.Pattern[str], re.Pattern[str]] = {}
"""Each pattern :func:`_led` made, with the one it was made from (tests compare them)."""


def _led(lead: str, pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` behind ``lead``: a lookaround that holds wherever a match of it starts.

    The same matches, found several times faster: at a position where ``lead``
    fails, the engine moves on after one character test instead of trying each
    alternative and its lookbehind (most positions of a text start no identifier).
    """
    led = re.compile(f"{lead}(?:{pattern.pattern})", pattern.flags)
    _UNLED[led] = pattern
    return led


# Every alternative of each kind starts as its lead says (see each pattern above).
_EMAIL = _led(r"(?<![A-Za-z0-9_.+-])(?=[A-Za-z0-9_.+-]+@)", _EMAIL)
_UUID = _led(r"(?=[0-9a-fA-F]{8}-)", _UUID)
_PATH = _led(r"(?<![A-Za-z0-9_])(?=[~./]|[A-Za-z0-9_.@+-]+/|[A-Za-z]:\\)", _PATH)
_DATE = _led(r"(?=[\dJFMASOND])", _DATE)
_TIME = _led(r"(?=\d)", _TIME)
_AMOUNT = _led(r"(?=[$€£¥\d])", _AMOUNT)
_VERSION = _led(r"(?<![A-Za-z0-9_])(?=v\d|\d|[A-Z])", _VERSION)
_CODE = _led(r"(?<![A-Za-z0-9_])(?=[A-Za-z0-9_.-]*\d|#)", _CODE)
_QUOTED = _led(r"(?=[\"`“「《『'])", _QUOTED)
_NAME = _led(r"(?<![A-Za-z0-9_])(?=[A-Za-z_])", _NAME)
_CJK_NAME = _led(r"(?=[是为叫由改换：:])", _CJK_NAME)
_NUMBER = _led(r"(?=\d)", _NUMBER)

_POSSESSIVE = re.compile(r"['’]s$")
_TRAILING = ".,;:!?)]}'\"。，；：！？）"


def _clean(found: str) -> str:
    return found.strip().rstrip(_TRAILING).strip()


def _is_path(found: str) -> bool:
    """Whether a ``/``-separated match is a path, not words (``and/or``, ``TCP/IP``)."""
    if found.startswith(("/", "~", ".")) or "\\" in found or found.count("/") >= 2:
        return True
    return any(c.isdigit() or c in "._-" for c in found)


def _names(rest: str) -> list[str]:
    """Capitalized runs, CamelCase and snake_case words of ``rest``."""
    inner: set[str] = set()
    candidates: list[tuple[str, bool]] = []
    for match in _NAME.finditer(rest):
        words = match.group().split(" ")
        before = rest[max(0, match.start() - 8) : match.start()].rstrip(" \t")
        at_start = (match.start() < 8 and not before) or before.endswith(_STARTS)
        while words and words[0].casefold() in _STOP_CAPITALS:
            words.pop(0)
            at_start = False
        while words and words[-1].casefold() in _STOP_CAPITALS:
            words.pop()
        if not words:
            continue
        found = _POSSESSIVE.sub("", " ".join(words))
        single = len(words) == 1
        plain = found[:1].isupper() and found[1:].islower() and found.replace("-", "").isalpha()
        if single and plain and at_start:
            candidates.append((found, True))
            continue
        if max(len(word) for word in words) < 2 or (single and plain and len(found) < 3):
            continue
        inner.add(found)
        candidates.append((found, False))
    # A capitalized word that starts a sentence is a name when it is also used inside one.
    return [found for found, at_start in candidates if not at_start or found in inner]


def find_identifiers(text: str) -> list[str]:
    """The identifiers of ``text`` (see the module), without repeats, by kind in the module's order.

    Never raises on any string.
    """
    return list(_identifiers(text))


@lru_cache(maxsize=32)
def _identifiers(text: str) -> tuple[str, ...]:
    """:func:`find_identifiers`, kept for texts read again (a previous summary is read twice)."""
    seen: dict[str, None] = {}
    rest = _CUT_MARK.sub(_GAP, text) if "[…" in text else text
    digits = _DIGIT.search(rest) is not None

    def take(pattern: re.Pattern[str], *, group: bool = False) -> None:
        nonlocal rest
        if not _may_match(pattern, rest, digits):
            return
        parts: list[str] = []
        end = 0
        for match in pattern.finditer(rest):
            parts += (rest[end : match.start()], _GAP)
            end = match.end()
            value = next((g for g in match.groups() if g), "") if group else match.group()
            found = _clean(value)
            if pattern is _VERSION and found.split(" ")[0].casefold() in _STOP_CAPITALS:
                found = found.split(" ")[-1]  # "In 2024": the number alone
                if "." not in found and len(found) < 3:
                    continue
            if found and (pattern is not _PATH or _is_path(found)):
                seen.setdefault(found, None)
        if parts:  # what pattern.sub(_GAP, rest) gives, from the same matches
            parts.append(rest[end:])
            rest = "".join(parts)

    for pattern in (_URL, _EMAIL, _UUID, _PATH, _DATE, _TIME, _AMOUNT, _VERSION):
        take(pattern)
    take(_QUOTED, group=True)
    take(_CODE)
    if _may_match(_LABEL, rest, digits):
        rest = _LABEL.sub(_GAP, rest)
    for found in _names(rest):
        seen.setdefault(found, None)
    rest = _NAME.sub(_GAP, rest)
    if _may_match(_CJK_NAME, rest, digits):
        for match in _CJK_NAME.finditer(rest):
            found = match.group(1)
            if not found.endswith(_BAD_CJK_ENDS):
                seen.setdefault(found, None)
    if _may_match(_NUMBER, rest, digits):
        for match in _NUMBER.finditer(rest):
            found = match.group()
            if sum(c.isdigit() for c in found) >= 3:
                seen.setdefault(found, None)
    return tuple(seen)


def value_kind(identifier: str) -> str:
    """What kind of value ``identifier`` is, as one value may replace another.

    ``"when"`` (a date or a time), ``"where"`` (a link, an address, a path),
    ``"quantity"`` (it starts with a digit or a currency sign: an amount, a size, a
    number) or ``"name"`` (anything else: a name, a version, a code).
    """
    if _DATE.fullmatch(identifier) or _TIME.fullmatch(identifier):
        return "when"
    if any(kind.fullmatch(identifier) for kind in (_URL, _EMAIL, _UUID, _PATH)):
        return "where"
    if identifier[:1].isdigit() or identifier[:1] in "$€£¥":
        return "quantity"
    return "name"


_DIGIT = re.compile(r"\d")
_NEEDS_DIGIT = frozenset((_DATE, _TIME, _AMOUNT, _VERSION, _CODE, _NUMBER))
"""Kinds each of whose alternatives holds a digit (``\\d``): a text without one has none."""
_NEEDS: dict[re.Pattern[str], tuple[str, ...]] = {
    _URL: ("http",),
    _EMAIL: ("@",),
    _UUID: ("-",),
    _PATH: ("/", ":\\"),
    _QUOTED: ('"', "`", "“", "「", "《", "『", "'"),
    _LABEL: ("**", "#"),
    _CJK_NAME: ("是", "为", "叫", "由", "改", "换", "：", ":"),
}
"""Per kind, the texts one of which every match holds (the kind is not looked for without)."""


def _may_match(pattern: re.Pattern[str], text: str, digits: bool) -> bool:
    """Whether ``text`` holds what every match of ``pattern`` holds (``digits``: it has one).

    False means no match: the kind is neither looked for nor removed.
    """
    if pattern in _NEEDS_DIGIT and not digits:
        return False
    needs = _NEEDS.get(pattern)
    return needs is None or any(part in text for part in needs)


_SEPARATOR = re.compile(r",(?<=\d,)(?=\d{3})")
"""A thousands separator: a comma between a digit and three more. The comma comes first, so
the engine looks for commas alone (``(?<=\\d),(?=\\d{3})`` finds the same, slower)."""
_NUMBER_OF = re.compile(r"\d+(?:\.\d+)?")
_MONTH_DAY = re.compile(
    rf"^(?:({_MONTHS})\.? (\d{{1,2}}){_ORDINAL}|(\d{{1,2}}){_ORDINAL} (?:of )?({_MONTHS}))"
)


def _normal(text: str) -> str:
    """``text`` case-folded, without thousands separators, one space between words."""
    return one_space(_SEPARATOR.sub("", text)).casefold()


@lru_cache(maxsize=4)
def _normal_text(text: str) -> str:
    """:func:`_normal` of a text many identifiers are looked up in (a transcript), kept."""
    return _normal(text)


@lru_cache(maxsize=4)
def _without_separators(text: str) -> str:
    """``text`` without thousands separators, kept for the next identifier."""
    return _SEPARATOR.sub("", text)


def _variants(identifier: str) -> list[str]:
    """The spellings of ``identifier`` that say the same (``April 14`` and ``14 April``)."""
    plain = _normal(identifier)
    spelled = [plain, plain.replace(" ", "")]
    date = _MONTH_DAY.match(identifier)
    if date is not None:
        month = (date.group(1) or date.group(4)).casefold()
        day = date.group(2) or date.group(3)
        spelled += [f"{month} {day}", f"{day} {month}", f"{month[:3]} {day}", f"{day} {month[:3]}"]
    return spelled


def holds(text: str, identifier: str) -> bool:
    """Whether ``text`` holds ``identifier``.

    Verbatim, or in another spelling of the same value: case aside, a number
    without its thousands separators, ``25MB`` for ``25 MB``, ``14 April``
    for ``April 14``; an amount or size also when its number stands alone
    in ``text`` (``5,000 requests`` is held by ``5000 req/min``).
    """
    if identifier in text:
        return True
    normal = _normal_text(text)
    if any(variant and variant in normal for variant in _variants(identifier)):
        return True
    if _AMOUNT.fullmatch(identifier) is None:
        return False
    plain = _SEPARATOR.sub("", identifier)
    number = _NUMBER_OF.search(plain)
    if number is None:  # pragma: no cover - every amount holds a number
        return False
    value = number.group()
    unit = plain[number.end() :].strip()[:1]
    # A short number alone is too common: its unit must follow, in any spelling.
    short = sum(c.isdigit() for c in value) < 3 and unit
    after = rf"\s?{re.escape(unit)}" if short else ""
    alone = re.compile(rf"(?<![\d.,]){re.escape(value)}(?![\d]|\.\d){after}", re.IGNORECASE)
    return alone.search(_without_separators(text)) is not None
