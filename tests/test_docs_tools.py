"""docs/tools.md's runnable example runs as written and prints what the page says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "tools.md"


def test_the_tools_example_runs_and_prints_what_the_page_shows(tmp_path: Path) -> None:
    section = DOC.read_text("utf-8").split("## A runnable example", 1)[1]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    shown = re.findall(r"```text\n(.*?)```", section, re.S)[0]
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown
