"""The README's commands and code run as written, and say the same on a second run."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from agentcore import __version__

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def _block(heading: str, language: str = "bash", index: int = 0) -> str:
    section = re.search(rf"## {heading}\n(.*?)(?=\n## |\Z)", README.read_text("utf-8"), re.S)
    assert section is not None, f"README has no '{heading}' section"
    blocks = re.findall(rf"```{language}\n(.*?)```", section.group(1), re.S)
    assert len(blocks) > index, f"README's '{heading}' has no {language} block {index}"
    return str(blocks[index])


def test_readme_quickstart_runs_as_written_and_again(tmp_path: Path) -> None:
    script = tmp_path / "quickstart.py"
    script.write_text(_block("Quickstart", "python"))
    outputs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout.splitlines())
    assert (
        outputs[0]
        == outputs[1]
        == [
            "You said: Hello!",
            "You said: Stream this, please.",
            "Ada",
            "2 True",
            "4",
        ]
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["quickstart.py"]  # nothing left


def test_ci_runs_the_readme_test_command() -> None:
    command = _block("Running the tests").strip()
    assert command == _block("Try it", index=1).strip()
    ci = (ROOT / ".ci" / "run").read_text()
    # Each step of .ci/run runs under the run's deadline: `step NAME COMMAND`.
    call = rf'^AGENTCORE_TEST_ALL_PYTHONS=1 step "[^"]+" {re.escape(command)}$'
    assert re.search(call, ci, re.MULTILINE), "CI runs the README's test command"
    assert "set -euo pipefail" in ci


def _shim_venv(folder: Path) -> Path:
    """A ``.venv`` whose ``activate`` puts an ``agentcore`` running this Python on the PATH."""
    bin_dir = folder / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    agentcore = bin_dir / "agentcore"
    agentcore.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agentcore "$@"\n')
    agentcore.chmod(0o755)
    (bin_dir / "activate").write_text(f'PATH="{bin_dir}:$PATH"\nexport PATH\n')
    return bin_dir


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_commands_after_the_demo_work_as_written(tmp_path: Path) -> None:
    # The README installs autosummary beside agentcore: its demo command comes from it.
    pytest.importorskip("agentcore_autosummary")
    _shim_venv(tmp_path)
    block = _block("Try it", index=2)
    env = {**os.environ, "AGENTCORE_HOME": str(tmp_path / "home")}
    for _ in range(2):  # and again, as a reader trying it twice would
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode in (0, 141), done.stderr  # 141: head closed the pipe early
        assert "error" not in done.stderr.lower(), done.stderr
        assert "SESSION" in done.stdout and "demo" in done.stdout
        assert "session       demo" in done.stdout


def _fake_tox_venv(repo: Path, log: Path, status: int = 0) -> None:
    """A ``.tox-venv`` whose python answers like tox would and records the run."""
    bin_dir = repo / ".tox-venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    envs = "\\n".join(
        [f"py3{v}-{kind}" for v in (10, 11, 12, 13) for kind in ("core", "autosummary")]
        + ["lint", "type", "docs", "wheelhouse"]
    )
    python.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = -c ]; then exit 0; fi\n'
        f'if [ "$3" = list ]; then printf "{envs}\\n"; exit 0; fi\n'
        f'echo "$@" >> "{log}"\n'
        f"exit {status}\n"
    )
    python.chmod(python.stat().st_mode | stat.S_IXUSR)


def _run_test_script(
    tmp_path: Path, pythons: list[str], extra_env: dict[str, str], shims: tuple[str, ...] = ()
) -> tuple[subprocess.CompletedProcess[str], str]:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "test", repo / "scripts" / "test")
    log = tmp_path / "tox.log"
    _fake_tox_venv(repo, log, status=int(extra_env.pop("STATUS", "0")))
    path = tmp_path / "path"
    path.mkdir()
    for tool in ("dirname",):
        os.symlink(shutil.which(tool) or f"/usr/bin/{tool}", path / tool)
    for version in pythons:
        os.symlink(sys.executable, path / f"python{version}")
    for version in shims:  # like a pyenv shim whose version is not selected
        shim = path / f"python{version}"
        shim.write_text(
            f"#!/bin/sh\necho 'pyenv: python{version}: command not found' >&2\nexit 127\n"
        )
        shim.chmod(0o755)
    done = subprocess.run(
        [shutil.which("bash") or "/bin/bash", "scripts/test"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={"PATH": str(path), "HOME": str(tmp_path), **extra_env},
        timeout=60,
    )
    return done, (log.read_text() if log.exists() else "")


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_test_command_runs_what_it_can_and_names_what_it_skipped(tmp_path: Path) -> None:
    done, tox_calls = _run_test_script(tmp_path, ["3.11"], {}, shims=("3.12",))
    assert done.returncode == 0, done.stderr
    assert tox_calls.split() == [
        "-m",
        "tox",
        "run-parallel",
        "--parallel-no-spinner",
        "-e",
        "py311-core,py311-autosummary,lint,type,docs,wheelhouse",
    ]
    skipped = [line for line in done.stderr.splitlines() if "SKIPPED" in line]
    assert len(skipped) == 2  # before and after the run, where it is seen
    for env in ("py310-core", "py312-autosummary", "py313-core"):
        assert env in skipped[0]
    assert "python3.10 python3.12 python3.13 not found or not runnable" in skipped[0]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_ci_mode_insists_on_every_python(tmp_path: Path) -> None:
    done, tox_calls = _run_test_script(tmp_path, ["3.11"], {"AGENTCORE_TEST_ALL_PYTHONS": "1"})
    assert done.returncode == 1
    assert "python3.10 python3.12 python3.13 not found" in done.stderr
    assert tox_calls == ""


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_failing_tox_run_fails_the_command(tmp_path: Path) -> None:
    versions = ["3.10", "3.11", "3.12", "3.13"]
    done, tox_calls = _run_test_script(
        tmp_path, versions, {"AGENTCORE_TEST_ALL_PYTHONS": "1", "STATUS": "5"}
    )
    assert done.returncode == 5  # e.g. pytest's "no tests collected", passed on by tox
    assert "py313-autosummary" in tox_calls
    assert "SKIPPED" not in done.stderr


UNPINNED = re.compile(r"""pip install[^\n`]*?["' ]agentcore(\[[a-z,]+\])?(?!==)["' \n`]""")


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "docs").glob("*.md"))),
        *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "plugins").glob("*/README.md"))),
        *(str(p.relative_to(ROOT)) for p in sorted((ROOT / "agentcore" / "cli").glob("*.py"))),
        "agentcore/settings.py",
        "tox.ini",
    ],
)
def test_no_unpinned_install_command(path: str) -> None:
    text = (ROOT / path).read_text("utf-8")
    found = [match.group(0) for match in UNPINNED.finditer(text)]
    assert not found, f"{path} tells pip to install agentcore without ==VERSION: {found}"
    pins = set(re.findall(r"agentcore(?:\[[a-z,]+\])?==([0-9][0-9a-z.]*)", text))
    assert pins <= {__version__}, f"{path} pins another version than {__version__}: {pins}"
