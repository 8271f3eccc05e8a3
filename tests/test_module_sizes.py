"""No module of the packages is over 500 lines: a reader can hold one in mind.

A module that grows past the bound is split by job (see the private ``_*``
modules beside the public ones), never trimmed by packing lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    ROOT / "agentcore",
    ROOT / "plugins" / "autosummary" / "agentcore_autosummary",
    ROOT / "plugins" / "otel" / "agentcore_otel",
)
MAX_LINES = 500


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in package.rglob("*.py"))


def test_the_packages_have_modules_to_measure() -> None:
    assert len(_modules()) > 100


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_a_module_is_at_most_500_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines: split it by job"
