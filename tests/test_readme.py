from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).parent.parent / "README.md"


def test_readme_quickstart_runs_as_written(tmp_path: Path) -> None:
    text = README.read_text()
    code = re.search(r"## Quickstart\n\n```python\n(.*?)```", text, re.S)
    assert code is not None, "README has no Quickstart code block"
    script = tmp_path / "quickstart.py"
    script.write_text(code.group(1))
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "You said: Hello!",
        "You said: Stream this, please.",
        "Ada",
        "2 True",
        "4",
    ]


def test_ci_runs_the_readme_test_command() -> None:
    command = re.search(r"## Running the tests.*?```bash\n(.*?)\n```", README.read_text(), re.S)
    assert command is not None
    ci = (README.parent / ".ci" / "run").read_text()
    assert command.group(1).strip() in ci
