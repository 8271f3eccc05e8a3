"""The table of hook policies in docs/plugins.md is the one the hookspecs declare."""

from __future__ import annotations

import re
from pathlib import Path

from agentcore import hookspecs
from agentcore.hookspecs import policy_table

DOCS = Path(__file__).resolve().parents[1] / "docs"


def documented_table(name: str) -> list[str]:
    """The rows of the ``hook-policies: NAME`` table of docs/plugins.md."""
    text = (DOCS / "plugins.md").read_text("utf-8")
    found = re.search(
        rf"<!-- hook-policies: {name} -->\n(.*?)<!-- end hook-policies -->", text, re.S
    )
    assert found, f"docs/plugins.md has no table marked <!-- hook-policies: {name} -->"
    return [line.strip() for line in found.group(1).splitlines()[2:] if line.strip()]


def test_the_core_table_matches_the_declarations() -> None:
    assert documented_table("core") == policy_table(hookspecs)


def test_every_core_hook_declares_its_policy() -> None:
    specs = [name for name, value in vars(hookspecs).items() if hasattr(value, "agentcore_spec")]
    undeclared = [
        name for name in specs if not hasattr(getattr(hookspecs, name), "agentcore_policy")
    ]
    assert undeclared == []
