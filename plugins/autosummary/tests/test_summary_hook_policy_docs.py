"""The table of autosummary's hook policies in docs/plugins.md is the one its hookspecs declare."""

from __future__ import annotations

import re
from pathlib import Path

from agentcore.hookspecs import policy_table
from agentcore_autosummary import hookspecs

DOCS = Path(__file__).resolve().parents[3] / "docs"


def test_the_autosummary_table_matches_the_declarations() -> None:
    text = (DOCS / "plugins.md").read_text("utf-8")
    marker = r"<!-- hook-policies: autosummary -->\n(.*?)<!-- end hook-policies -->"
    found = re.search(marker, text, re.S)
    assert found, "docs/plugins.md has no table of autosummary's hook policies"
    rows = [line.strip() for line in found.group(1).splitlines()[2:] if line.strip()]
    assert rows == policy_table(hookspecs)
