"""The CLI reference (docs/cli.md) names every command and option, and doc examples run."""

from __future__ import annotations

import argparse
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcore.cli import build_parser

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(build_parser()))


@pytest.mark.parametrize(
    "path,parser", COMMANDS, ids=[" ".join(p) or "agentcore" for p, _ in COMMANDS]
)
def test_cli_reference_documents_every_command_and_option(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    text = (DOCS / "cli.md").read_text("utf-8")
    if path:
        assert f"`agentcore {' '.join(path)}" in text
        assert f"{{cli-help}} {' '.join(path)}\n" in text
    for action in parser._actions:
        for option in action.option_strings:
            assert f"`{option}" in text, f"docs/cli.md does not document {option} of {path}"
        if action.choices and not isinstance(action, argparse._SubParsersAction):
            for choice in action.choices:
                assert choice in text


def _runnable_blocks(page: str) -> list[str]:
    text = (DOCS / page).read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    return [block for block in blocks if "asyncio.run(main(" in block]


@pytest.mark.parametrize("page", ["getting-started.md", "testing.md", "plugins.md"])
def test_doc_examples_run(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = _runnable_blocks(page)
    assert blocks
    for block in blocks:
        exec(compile(block, f"docs/{page}", "exec"), {"__name__": "__doc_example__"})


def test_the_from_python_example_runs() -> None:
    text = (DOCS / "cli.md").read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    [block] = [block for block in blocks if "from agentcore.cli import main" in block]
    namespace: dict[str, object] = {}
    exec(compile(block, "docs/cli.md", "exec"), namespace)
    assert namespace["code"] == 0
    out = namespace["out"]
    assert isinstance(out, io.StringIO) and out.getvalue().startswith("[")


# -- the API reference (docs/api.md) covers every public name ------------------------------

_AUTOMODULE = re.compile(r"\.\. automodule:: (\S+)\n((?:   :[^\n]*\n(?:      [^\n]*\n)*)*)")


def _api_sections() -> dict[str, dict[str, set[str] | None]]:
    """Per documented module: its ``members`` (None: all of ``__all__``) and exclusions."""
    text = "".join((DOCS / name).read_text("utf-8") for name in ("api.md", "plugin-api.md"))
    sections: dict[str, dict[str, set[str] | None]] = {}
    for module, options in _AUTOMODULE.findall(text):
        parsed: dict[str, set[str] | None] = {"members": None, "exclude": set()}
        for name, value in re.findall(r":([a-z-]+):([^:]*?)(?=\n   :|\Z)", options, re.S):
            names = {part.strip() for part in value.replace("\n", " ").split(",") if part.strip()}
            if name == "members":
                parsed["members"] = names or None
            elif name == "exclude-members":
                parsed["exclude"] = names
        sections[module] = parsed
    return sections


def _defined_public_names(module_name: str) -> set[str]:
    """Names a module without ``__all__`` defines itself: classes, functions, constants."""
    import ast
    import importlib

    module = importlib.import_module(module_name)
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text("utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            is_typevar = isinstance(value, ast.Call) and getattr(value.func, "id", "") == "TypeVar"
            for target in targets:
                if isinstance(target, ast.Name) and not is_typevar:
                    names.add(target.id)
    return {name for name in names if not name.startswith("_") and name != "logger"}


PUBLIC_PACKAGES = [
    "agentcore",
    "agentcore.providers",
    "agentcore.stores",
    "agentcore.errors",
    "agentcore.testing",
    "agentcore.tokens",
    "agentcore.plugins",
    "agentcore.cli.extensions",
    "agentcore_autosummary",
    "agentcore_otel",
]


@pytest.mark.parametrize("module_name", PUBLIC_PACKAGES)
def test_api_reference_covers_every_public_name(module_name: str) -> None:
    import importlib

    if module_name in ("agentcore_autosummary", "agentcore_otel"):
        pytest.importorskip(module_name)
    sections = _api_sections()
    assert module_name in sections, f"docs/api.md has no automodule for {module_name}"
    section = sections[module_name]
    module = importlib.import_module(module_name)
    public = getattr(module, "__all__", None)
    names = set(public) if public is not None else _defined_public_names(module_name)
    if module_name == "agentcore.errors":
        names = {name for name in vars(module) if name[0].isupper() and name.endswith("Error")}
    documented_at_top = set(importlib.import_module("agentcore").__all__)
    excluded = section["exclude"] or set()
    assert excluded <= documented_at_top, f"{module_name} excludes names agentcore lacks"
    members = section["members"]
    if members is None:
        assert public is not None or module_name == "agentcore.errors", (
            f"{module_name} has no __all__: list its members in docs/api.md"
        )
        return
    missing = names - members - excluded - {"__version__"}
    assert not missing, f"docs/api.md does not document {sorted(missing)} of {module_name}"
