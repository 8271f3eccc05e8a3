"""docs/changelog.md keeps the Keep a Changelog shape (https://keepachangelog.com/en/1.1.0/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CHANGELOG = Path(__file__).resolve().parent.parent / "docs" / "changelog.md"

KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")
"""The kinds of change Keep a Changelog names, the only ``###`` headings allowed."""

UNRELEASED = "[Unreleased]"
RELEASE = re.compile(r"\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}")
"""A released version's heading: ``[1.2.3] - 2026-12-04``."""

TASK_NUMBER = re.compile(r"\bissues? \d+|(?<![\w&])#\d+\b", re.IGNORECASE)
"""An internal task or issue number (``issue 25``, ``issues 24 and 25``, ``#214``)."""


def problems(text: str) -> list[str]:
    """What keeps ``text`` from being a changelog of the Keep a Changelog shape."""
    found: list[str] = []
    lines = text.splitlines()
    releases: list[str] = []
    subsection: tuple[int, str] | None = None  # (line number, heading) of the open ###
    entries = 0
    in_section = False

    def close_subsection() -> None:
        if subsection is not None and entries == 0:
            found.append(f"line {subsection[0]}: '### {subsection[1]}' has no entries")

    in_fence = False
    for number, line in enumerate(lines, start=1):
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence:
            entries += line.strip() != ""
            continue
        if line.startswith("## "):
            close_subsection()
            subsection, entries, in_section = None, 0, True
            heading = line[3:].strip()
            releases.append(heading)
            if heading != UNRELEASED and not RELEASE.fullmatch(heading):
                found.append(
                    f"line {number}: '## {heading}' is neither '## {UNRELEASED}' "
                    "nor '## [x.y.z] - YYYY-MM-DD'"
                )
        elif line.startswith("### "):
            close_subsection()
            heading = line[4:].strip()
            subsection, entries = (number, heading), 0
            if not in_section:
                found.append(f"line {number}: '### {heading}' comes before any '##' section")
            if heading not in KINDS:
                found.append(f"line {number}: '### {heading}' is not one of {', '.join(KINDS)}")
        elif line.startswith("#") and re.match(r"#{4,} ", line):
            found.append(f"line {number}: heading deeper than '###': {line!r}")
        elif line.strip():
            entries += 1
        for match in TASK_NUMBER.finditer(line):
            found.append(f"line {number}: internal task number {match.group(0)!r}")
    close_subsection()
    unreleased = releases.count(UNRELEASED)
    if unreleased != 1:
        found.append(f"{unreleased} '## {UNRELEASED}' sections, not exactly one")
    elif releases[0] != UNRELEASED:
        found.append(f"'## {UNRELEASED}' is not the first section")
    return found


def test_changelog_has_the_keep_a_changelog_shape() -> None:
    found = problems(CHANGELOG.read_text("utf-8"))
    assert not found, "docs/changelog.md:\n" + "\n".join(found)


GOOD = """# Changelog

Intro.

## [Unreleased]

### Added

- A thing.

## [0.3.0] - 2026-12-04

### Fixed

- Another thing.
"""


def test_a_well_formed_changelog_passes() -> None:
    assert problems(GOOD) == []


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (GOOD.replace("## [Unreleased]", "## Unreleased: faster turns"), "is neither"),
        (GOOD.replace("## [0.3.0] - 2026-12-04", "## [Unreleased]"), "2 '## [Unreleased]'"),
        (GOOD.replace("## [Unreleased]\n", ""), "0 '## [Unreleased]'"),
        (GOOD.replace("## [0.3.0] - 2026-12-04", "## 0.3.0"), "is neither"),
        (GOOD.replace("### Fixed", "### Kept in the core"), "is not one of"),
        (GOOD.replace("- A thing.", "- A thing (issue 25, item 1)."), "'issue 25'"),
        (GOOD.replace("- A thing.", "- Two things (Issues 24 and 25)."), "'Issues 24'"),
        (GOOD.replace("- A thing.", "- A thing (#42)."), "'#42'"),
        (GOOD.replace("- A thing.\n", ""), "'### Added' has no entries"),
        (GOOD.replace("- Another thing.\n", ""), "'### Fixed' has no entries"),
        (GOOD.replace("### Added", "#### Added"), "deeper than"),
    ],
)
def test_each_departure_from_the_shape_is_named(text: str, problem: str) -> None:
    assert any(problem in found for found in problems(text)), problems(text)
