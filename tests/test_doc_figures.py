"""What the docs quote of the command line's output is what the commands print now.

Every ```text block of README.md and docs/*.md that shows ``$ agentcore COMMAND`` (or,
without a command, lines of ``agentcore demo``'s meter) is either run here and
compared line for line, or listed in :data:`ILLUSTRATIVE` as the output of a real
model. A line ``...`` in a quote stands for lines left out. The worked example of
docs/autosummary.md quotes figures of several demo runs in its prose; those are
compared too (:data:`WORKED_EXAMPLE`). Everything runs offline: the demo's replies
come from ``MockProvider``. The compactor's example table (docs/compactor.md) is
checked where its scripts run, in plugins/autosummary/adapter_tests/test_examples.py.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
import re
import shlex
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

pytest.importorskip("agentcore_autosummary", reason="the quoted outputs are of autosummary's demo")

from agentcore.cli import main
from agentcore_autosummary.cli import demo_command

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

CHECKED = ("demo", "plugins", "models default")
"""The commands whose quoted output is regenerated and compared."""

ILLUSTRATIVE = ("chat", "sessions compact")
"""The commands whose quoted output is a real model's, shown as an illustration."""

DEMO_LINE = re.compile(r"^turn +\d+  context ")
"""A line of the demo's meter: a quote holding one is the demo's output."""

HOME = "/home/me"
"""The home folder the docs show in paths."""


@dataclass
class Quote:
    """Commands quoted in one text block of a doc, each with the lines shown after it."""

    doc: str
    line: int
    commands: list[tuple[list[str], list[str]]]
    anchored: bool = True
    """False for lines shown without their command: they may sit anywhere in its output."""


def _text_blocks(path: Path) -> Iterator[tuple[int, list[str]]]:
    text = path.read_text("utf-8")
    for match in re.finditer(r"^( *)```text\n(.*?)^\1```", text, re.M | re.S):
        line = text.count("\n", 0, match.start()) + 1
        yield line, textwrap.dedent(match.group(2)).splitlines()


def _quotes() -> list[Quote]:
    quotes = []
    for path in DOCS:
        doc = str(path.relative_to(ROOT))
        for line, lines in _text_blocks(path):
            commands: list[tuple[list[str], list[str]]] = []
            for text in lines:
                if text.startswith("$ agentcore "):
                    commands.append((shlex.split(text)[2:], []))
                elif commands:
                    commands[-1][1].append(text)
            if commands:
                quotes.append(Quote(doc, line, commands))
            elif any(DEMO_LINE.match(text) for text in lines):
                quotes.append(Quote(doc, line, [(["demo"], lines)], anchored=False))
    return quotes


QUOTES = _quotes()


def _command_name(argv: list[str]) -> str:
    for name in (*CHECKED, *ILLUSTRATIVE):
        if argv[: len(name.split())] == name.split():
            return name
    return " ".join(argv)


def _run(argv: list[str]) -> list[str]:
    """The lines ``agentcore ARGV`` prints, stdout and stderr as a terminal shows them."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(argv)
    assert code == 0, f"agentcore {shlex.join(argv)} exited with {code}:\n{out.getvalue()}"
    return out.getvalue().splitlines()


def _excerpt_mismatch(shown: list[str], printed: list[str], anchored: bool) -> str | None:
    """Where ``shown`` (with ``...`` for left-out lines) departs from ``printed``."""
    runs: list[list[str]] = [[]]
    for text in shown:
        if text.strip() == "...":
            runs.append([])
        else:
            runs[-1].append(text)
    start = 0
    for index, run in enumerate(runs):
        if not run:
            continue
        first, last = index == 0, index == len(runs) - 1
        candidates = [start] if anchored and first else range(start, len(printed))
        best, best_at = -1, start
        for candidate in candidates:
            same = 0
            while (
                same < len(run)
                and candidate + same < len(printed)
                and printed[candidate + same] == run[same]
            ):
                same += 1
            if same > best:
                best, best_at = same, candidate
            if same == len(run):
                break
        if best < len(run):
            where = best_at + best
            now = printed[where] if best > 0 and where < len(printed) else None
            if now is not None:
                return f"the quote shows {run[best]!r} where the command prints {now!r}"
            place = "at the start of the output" if anchored and first else "in order"
            return f"the command prints no line {run[best]!r} {place}"
        start = best_at + len(run)
        if anchored and last and start != len(printed):
            return f"the output goes on after {run[-1]!r} (end the quote with '...')"
    return None


@pytest.mark.parametrize("quote", QUOTES, ids=lambda quote: f"{quote.doc}:{quote.line}")
def test_quoted_output_is_what_the_command_prints(
    quote: Quote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("AGENTCORE_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    for argv, shown in quote.commands:
        name = _command_name(argv)
        if name in ILLUSTRATIVE:
            continue
        assert name in CHECKED, (
            f"{quote.doc}:{quote.line} quotes the output of 'agentcore {shlex.join(argv)}': "
            f"add the command to CHECKED (and run it here) or to ILLUSTRATIVE"
        )
        if name == "models default" and sys.platform != "linux":
            pytest.skip("the quoted path is the Linux data folder")
        printed = [text.replace(str(home), HOME) for text in _run(argv)]
        if name == "plugins":
            problem = _plugins_mismatch(shown, printed)
        else:
            problem = _excerpt_mismatch(shown, printed, quote.anchored)
        if problem is not None:
            diff = "\n".join(
                difflib.unified_diff(
                    shown,
                    printed,
                    f"{quote.doc}:{quote.line} (quoted)",
                    f"agentcore {shlex.join(argv)} (printed now)",
                    lineterm="",
                )
            )
            pytest.fail(
                f"{quote.doc}:{quote.line}: the quoted output of "
                f"'agentcore {shlex.join(argv)}' is stale: {problem}\n{diff}",
                pytrace=False,
            )


def _plugins_mismatch(shown: list[str], printed: list[str]) -> str | None:
    """The plugins the doc lists must be listed as shown, agentcore's built-in ones all of
    them; other installed plugins may be listed too."""
    quoted = {entry["name"]: entry for entry in json.loads("\n".join(shown))}
    listed = {entry["name"]: entry for entry in json.loads("\n".join(printed))}
    for name, entry in quoted.items():
        if listed.get(name) != entry:
            return f"the plugin {name!r} is listed as {listed.get(name)!r}"
    for name in listed:
        if name.startswith("agentcore.") and name not in quoted:
            return f"the built-in plugin {name!r} is printed but not quoted"
    return None


def test_the_quotes_of_the_demo_are_found() -> None:
    found = {(quote.doc, argv[0]) for quote in QUOTES for argv, _ in quote.commands}
    for doc in ("docs/getting-started.md", "docs/cli.md", "docs/autosummary.md"):
        assert (doc, "demo") in found, f"no quote of 'agentcore demo' found in {doc}"
    assert ("docs/cli.md", "plugins") in found


# -- the worked example's prose -------------------------------------------------------


@dataclass(frozen=True)
class DemoRun:
    """The figures of one ``agentcore demo`` run."""

    meters: dict[int, int]
    """The context size after each turn."""
    summaries: list[tuple[int, int, int, int]]
    """Each summary: (turn, messages covered, its tokens, the context after it)."""
    raw: int
    summary_tokens: int


_NUMBER = re.compile(r"[\d,]+")
_SUMMARY = re.compile(
    r"^  -> summary written: covers messages 0\.\.(\d+) \(([\d,]+) tokens\); "
    r"context now ([\d,]+) tokens$"
)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


@cache
def _demo(*argv: str, retention_check: str | None = None) -> DemoRun:
    defaults = dict(demo_command.DEMO_SUMMARY_DEFAULTS)
    if retention_check is not None:
        defaults["retention_check"] = retention_check
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(demo_command, "DEMO_SUMMARY_DEFAULTS", defaults)
        lines = _run(["demo", *argv])
    meters: dict[int, int] = {}
    summaries = []
    for text in lines:
        if DEMO_LINE.match(text):
            turn, tokens = _NUMBER.findall(text)[:2]
            meters[int(turn)] = _number(tokens)
        elif matched := _SUMMARY.match(text):
            last, tokens, after = (_number(group) for group in matched.groups())
            summaries.append((max(meters), last + 1, tokens, after))
    raw = re.search(r"the raw history keeps all (\d+) messages", "\n".join(lines))
    used = re.search(r"Tokens used \(counted, not billed\): summary ([\d,]+);", "\n".join(lines))
    assert raw and used, "\n".join(lines)
    return DemoRun(meters, summaries, int(raw.group(1)), _number(used.group(1)))


WORDS = (
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
    *("ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen"),
)
ORDINALS = ("zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh")


def _word(count: int) -> str:
    return WORDS[count] if count < len(WORDS) else f"{count:,}"


def _hundreds(count: int) -> str:
    return f"{round(count, -2):,}"


def _first_figures() -> Mapping[str, object]:
    run = _demo()
    (t1, covers1, tokens1, after1), (t2, covers2, _, _) = run.summaries[:2]
    gaps = [later - earlier for earlier, later in pairwise(s[0] for s in run.summaries)]
    # the first summary from which each comes 3 turns (the debounce) after the one before
    every_third = next(i for i in range(1, len(gaps) + 1) if all(g == 3 for g in gaps[i - 1 :]))
    full, inline = _demo("--strategy", "full"), run
    assert len(full.summaries) == len(run.summaries), "the prose says 'the same number'"
    return {
        "quiet_turns": t1 - 1,
        "first_meter": run.meters[1],
        "quiet_meter": run.meters[t1 - 1],
        "t1": t1,
        "t1_meter": run.meters[t1],
        "t1_raw": 2 * t1,
        "t1_last": 2 * t1 - 1,
        "kept1": " and ".join(str(n) for n in range(covers1, 2 * t1)),
        "covered1": covers1 - 1,
        "covers1": covers1,
        "tokens1": tokens1,
        "after1": after1,
        "t2": t2,
        "covers2_last": covers2 - 1,
        "kept2": " and ".join(str(n) for n in range(covers2, 2 * t2)),
        "covers2": covers2,
        "count": _word(len(run.summaries)),
        "peak": f"{max(run.meters.values()):,}",
        "raw": run.raw,
        "every_third": ORDINALS[every_third + 1],
        "off_count": _word(len(_demo(retention_check="off").summaries)),
        "cumulative_t1": _demo("--trigger", "cumulative").summaries[0][0],
        "full_count": _word(len(full.summaries)),
        "full_tokens": _hundreds(full.summary_tokens),
        "inline_tokens": _hundreds(inline.summary_tokens),
    }


WORKED_EXAMPLE = [
    "Turns 1 to {quiet_turns} each add a user message and a reply of about 100 tokens; "
    "the context grows from {first_meter} to {quiet_meter} tokens.",
    "Turn {t1} brings the context to {t1_meter} tokens",
    "The raw history holds {t1_raw} messages (indexes 0 to {t1_last}).",
    "The newest messages that fit in 187 tokens are {kept1}, so the plugin summarizes "
    "messages 0 to {covered1} and sets `summary_covers = {covers1}`",
    "turn {t1} context {t1_meter} / 1,500 tokens",
    "The next request carries the system prompt, the summary ({tokens1} tokens:",
    "and messages {kept1}: {after1} tokens instead of {t1_meter}.",
    "At turn {t2} it passes 750 tokens once more",
    "the plugin summarizes messages {covers1} to {covers2_last} alone",
    "keeps {kept2} verbatim, and sets `summary_covers = {covers2}`.",
    "in 45 turns the demo writes {count} summaries and the context never passes {peak} "
    "tokens, while the raw history keeps all {raw} messages.",
    "from the {every_third} summary on one comes every third turn",
    'with `retention_check="off"` the demo writes {off_count},',
    "With `agentcore demo --trigger cumulative`, the first summary comes at turn {cumulative_t1}:",
    "the same number of summaries ({full_count})",
    "the summary calls use about {full_tokens} tokens over the 45 turns, against about "
    "{inline_tokens} with the segments strategy",
]
"""Sentences of docs/autosummary.md's "A worked example", figures as placeholders."""


def _section(path: Path, heading: str) -> str:
    text = path.read_text("utf-8")
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"{path.relative_to(ROOT)} has no section '## {heading}'"
    return " ".join(match.group(1).split())


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{\w+\}", template)
    return re.compile(r"([\w,.]+?)".join(re.escape(part) for part in parts))


@pytest.mark.parametrize("template", WORKED_EXAMPLE, ids=lambda t: t[:40])
def test_the_worked_example_quotes_the_demo(template: str) -> None:
    prose = _section(ROOT / "docs" / "autosummary.md", "A worked example")
    expected = template.format(**_figures())
    if expected in prose:
        return
    found = _pattern(template).search(prose)
    said = repr(found.group(0)) if found else "nothing of that shape"
    pytest.fail(
        f"docs/autosummary.md, 'A worked example': the demo gives {expected!r}; "
        f"the doc says {said}",
        pytrace=False,
    )


_figures: Callable[[], Mapping[str, object]] = cache(_first_figures)


PRINTED = ["head", "", "turn 1", "turn 2", "turn 3", "  -> summary", "turn 4", "tail"]


@pytest.mark.parametrize(
    ("shown", "anchored", "problem"),
    [
        (["head", "", "turn 1", "...", "turn 3", "  -> summary", "...", "tail"], True, None),
        (["turn 3", "  -> summary"], False, None),
        (["head", "", "turn 1", "..."], True, None),
        (["head", "...", "turn 4"], True, "the output goes on after 'turn 4'"),
        (["", "turn 1", "..."], True, "the command prints no line '' at the start"),
        (["turn 2", "  -> summary"], False, "shows '  -> summary' where the command prints"),
        (["turn 3", "turn 1"], False, "shows 'turn 1' where the command prints '  -> summary'"),
        (["turn 9"], False, "the command prints no line 'turn 9' in order"),
    ],
)
def test_a_quote_is_compared_line_for_line_with_gaps(
    shown: list[str], anchored: bool, problem: str | None
) -> None:
    found = _excerpt_mismatch(shown, PRINTED, anchored)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found, found
