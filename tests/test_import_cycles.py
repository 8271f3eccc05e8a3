"""The packages' modules import each other without cycles of any kind.

Every import counts: at module level, under ``if TYPE_CHECKING:``, and inside
functions and classes. A type a module names is a dependency of that module even
when it is not imported at run time, and an import inside a function says the
module's behaviour needs the other one: a circle of either means no layer can be
read (or type-checked) without the one above it, and a function-level import is
how such a circle hides. The layers stay a graph that can be read bottom up.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "agentcore": ROOT / "agentcore",
    "agentcore_autosummary": ROOT / "plugins" / "autosummary" / "agentcore_autosummary",
    "agentcore_otel": ROOT / "plugins" / "otel" / "agentcore_otel",
}


def _modules(package: str, folder: Path) -> dict[str, Path]:
    found = {}
    for path in folder.rglob("*.py"):
        parts = path.relative_to(folder.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(node: ast.stmt, package: str, known: dict[str, Path]) -> set[str]:
    """The modules of ``package`` that the statement ``node`` imports, nested ones included."""
    targets: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.ImportFrom) and sub.level == 0 and sub.module:
            if not sub.module.startswith(package):
                continue
            for alias in sub.names:
                child = f"{sub.module}.{alias.name}"
                targets.add(child if child in known else sub.module)
        elif isinstance(sub, ast.Import):
            targets.update(a.name for a in sub.names if a.name.startswith(package))
    return targets


def _graph(package: str, folder: Path) -> dict[str, set[str]]:
    known = _modules(package, folder)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        deps: set[str] = set()
        for node in ast.parse(path.read_text()).body:
            deps |= _imports(node, package, known)
        graph[name] = {d for d in deps if d in known and d != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph``, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_modules_import_each_other_without_cycles(package: str) -> None:
    graph = _graph(package, PACKAGES[package])
    assert len(graph) > 3
    cycle = _cycle(graph)
    assert cycle is None, "an import cycle: " + " -> ".join(cycle or [])


def test_the_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_type_only_and_function_level_imports_count(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import B\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.a import A\n"
        "def later():\n"
        "    from pkg.c import C\n"
    )
    (package / "c.py").write_text("class C:\n    def m(self):\n        import pkg.d\n")
    (package / "d.py").write_text("def f():\n    from pkg.b import later\n")
    graph = _graph("pkg", package)
    assert graph["pkg.b"] == {"pkg.a", "pkg.c"}  # the TYPE_CHECKING import and later()'s
    assert graph["pkg.c"] == {"pkg.d"}  # inside a method
    assert _cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]
    (package / "b.py").write_text("def later():\n    from pkg.c import C\n")
    assert _cycle(_graph("pkg", package)) == ["pkg.b", "pkg.c", "pkg.d", "pkg.b"]


@pytest.mark.parametrize("module", ["agentcore.hookspecs", "agentcore.hook_calls"])
def test_the_core_hook_layer_imports_nothing_of_the_command_line(module: str) -> None:
    graph = _graph("agentcore", PACKAGES["agentcore"])
    assert not {name for name in graph[module] if name.startswith("agentcore.cli")}
