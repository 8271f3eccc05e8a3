"""Every hook is called one way: through a typed facade, never by a name in a string.

An AST walk over ``agentcore/`` and the first-party plugins' packages finds
the calls that name a hook by string (``call_each(pm, "name")``,
``getattr(pm.hook, "name")``, ``pm.hook.__getattr__("name")``) and the
direct ``pm.hook.NAME(...)`` calls made outside the typed facades.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "agentcore", *sorted((ROOT / "plugins").glob("*/agentcore_*"))]

FACADES = {
    "agentcore/hook_calls.py",  # CoreHooks: the core's hooks
    "agentcore/cli/extensions.py",  # CliHooks: the command line's hooks
    "plugins/autosummary/agentcore_autosummary/hooks.py",  # SummaryHooks: autosummary's
}
"""The modules allowed to call ``pm.hook.NAME(...)`` themselves."""

HISTORIC = {("agentcore/plugins.py", "register_hookspecs.call_historic")}
"""The one historic call, made once as a manager is created."""


def _files() -> list[Path]:
    return [path for folder in SOURCES for path in sorted(folder.rglob("*.py"))]


def _is_hook_relay(node: ast.expr) -> bool:
    """``X.hook``: a plugin manager's hook relay."""
    return isinstance(node, ast.Attribute) and node.attr == "hook"


def _string_named(call: ast.Call) -> str | None:
    """How ``call`` names a hook by string, or None."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if name == "call_each":
        return "call_each(...)"
    if (
        isinstance(func, ast.Name)
        and func.id == "getattr"
        and call.args
        and _is_hook_relay(call.args[0])
        and len(call.args) > 1
        and isinstance(call.args[1], ast.Constant)
    ):
        return f"getattr(pm.hook, {call.args[1].value!r})"
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "__getattr__"
        and _is_hook_relay(func.value)
    ):
        return "pm.hook.__getattr__(...)"
    return None


def _direct_call(call: ast.Call) -> str | None:
    """``NAME`` (or ``NAME.method``) for a call ``X.hook.NAME(...)``, or None."""
    func = call.func
    if isinstance(func, ast.Attribute) and _is_hook_relay(func.value):
        return func.attr
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Attribute)
        and _is_hook_relay(func.value.value)
    ):
        return f"{func.value.attr}.{func.attr}"
    return None


def _calls(path: Path) -> list[ast.Call]:
    return [node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Call)]


def test_the_walk_sees_the_core_and_every_first_party_plugin() -> None:
    folders = {path.relative_to(ROOT).as_posix() for path in SOURCES}
    assert {"agentcore", "plugins/autosummary/agentcore_autosummary"} <= folders
    assert len(_files()) > 100


def test_no_call_site_names_a_hook_by_string() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{call.lineno}: {how}"
        for path in _files()
        for call in _calls(path)
        if (how := _string_named(call)) is not None
    ]
    assert found == []


def test_hooks_are_called_directly_only_by_the_typed_facades() -> None:
    found = []
    for path in _files():
        relative = path.relative_to(ROOT).as_posix()
        for call in _calls(path):
            name = _direct_call(call)
            if name is None or relative in FACADES or (relative, name) in HISTORIC:
                continue
            found.append(f"{relative}:{call.lineno}: pm.hook.{name}(...)")
    assert found == []


def test_the_walk_would_see_each_forbidden_form() -> None:
    source = (
        'call_each(pm, "on_turn_end", isolate=True, ctx=ctx)\n'
        'getattr(pm.hook, "on_turn_end")(ctx=ctx)\n'
        'pm.hook.__getattr__("on_turn_end")(ctx=ctx)\n'
        "bundle.plugin_manager.hook.on_turn_end(ctx=ctx)\n"
    )
    calls = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)]
    named = {how for call in calls if (how := _string_named(call)) is not None}
    assert named == {
        "call_each(...)",
        "getattr(pm.hook, 'on_turn_end')",
        "pm.hook.__getattr__(...)",
    }
    direct = {name for call in calls if (name := _direct_call(call)) is not None}
    assert direct == {"__getattr__", "on_turn_end"}
