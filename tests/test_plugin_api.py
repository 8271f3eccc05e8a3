"""The first-party plugins reach the core only through the declared plugin API.

A plugin that needs a name the plugin API does not hold shows a gap in the
API, not a reason to import the core's insides: add the name to
:mod:`agentcore.plugin_api` (or :mod:`agentcore.cli.plugin_api`), documented.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

import agentcore.cli.plugin_api
import agentcore.plugin_api
from agentcore import AgentBuilder, AgentSession, TurnContext
from agentcore.plugin_api import SessionHandle
from agentcore.testing import MockProvider

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_PACKAGES = sorted((ROOT / "plugins").glob("*/agentcore_*/"))
"""Every first-party plugin's package (not its tests): ``plugins/NAME/agentcore_NAME``."""
EXAMPLE = ROOT / "docs" / "examples" / "third_party_plugin.py"
ALLOWED = {"agentcore", "agentcore.plugin_api", "agentcore.cli.plugin_api", "agentcore.testing"}
API_MODULES = [agentcore.plugin_api, agentcore.cli.plugin_api]
API_DOC = ROOT / "docs" / "plugin-api.md"


def core_imports(path: Path) -> list[tuple[int, str]]:
    """Each ``agentcore`` module ``path`` imports, with its line, wherever the import is.

    Module level, under ``if TYPE_CHECKING:`` and inside functions alike.
    """
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found += [(node.lineno, m) for m in modules if m.split(".")[0] == "agentcore"]
    return found


def outside_the_api(paths: list[Path]) -> list[str]:
    """``file:line imports module`` for each core import outside the plugin API."""
    return [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in paths
        for line, module in core_imports(path)
        if module not in ALLOWED
    ]


def plugin_files() -> list[Path]:
    return sorted(p for package in PLUGIN_PACKAGES for p in package.rglob("*.py"))


def test_first_party_plugins_import_only_the_plugin_api() -> None:
    assert {p.name for p in PLUGIN_PACKAGES} >= {"agentcore_autosummary", "agentcore_otel"}
    files = plugin_files()
    assert len(files) > 20
    assert outside_the_api(files) == []


def test_the_example_plugin_imports_only_the_plugin_api() -> None:
    assert outside_the_api([EXAMPLE]) == []


def test_the_check_names_an_import_outside_the_api(tmp_path: Path) -> None:
    module = tmp_path / "plugin.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "from agentcore.plugin_api import TurnContext\n"
        "if TYPE_CHECKING:\n"
        "    from agentcore.session import AgentSession\n"
        "def later():\n"
        "    import agentcore.slots\n"
    )
    found = [(line, m) for line, m in core_imports(module) if m not in ALLOWED]
    assert found == [(4, "agentcore.session"), (6, "agentcore.slots")]


def documented_in_page() -> set[str]:
    """The names the plugin API page describes as ``.. py:data::`` entries."""
    return set(re.findall(r"^\.\. py:data:: (\w+)", API_DOC.read_text(), re.MULTILINE))


@pytest.mark.parametrize("module", API_MODULES, ids=lambda m: m.__name__)
def test_every_name_of_the_plugin_api_resolves_and_is_documented(module: ModuleType) -> None:
    assert module.__doc__
    names = module.__all__
    assert len(names) == len(set(names)), "a name is listed twice in __all__"
    assert sorted(names) == sorted(n for n in vars(module) if not n.startswith("_")), (
        "every public name of the module is in __all__, and only those"
    )
    page = documented_in_page()
    undocumented = []
    for name in names:
        value = getattr(module, name)
        ours = getattr(value, "__module__", "").split(".")[0] == "agentcore"
        if ours and (inspect.isclass(value) or inspect.isroutine(value)):
            if not inspect.getdoc(value):
                undocumented.append(name)
        elif name not in page:  # constants, aliases, markers: described on the page
            undocumented.append(name)
    assert undocumented == []


def test_each_name_has_one_door() -> None:
    """A name every user sees is taken from ``agentcore``; the plugin API adds the others."""
    assert sorted(set(agentcore.plugin_api.__all__) & set(agentcore.__all__)) == []


def plugin_api_names_used(paths: list[Path]) -> set[str]:
    """The names ``paths`` import from ``agentcore.plugin_api``."""
    used: set[str] = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "agentcore.plugin_api":
                used |= {alias.name for alias in node.names}
    return used


def test_each_name_of_the_plugin_api_is_one_a_plugin_needs() -> None:
    """A contract, not a list of exports: every name serves the first-party plugins or the
    example plugin, which is written from the API alone."""
    used = plugin_api_names_used([*plugin_files(), EXAMPLE])
    assert sorted(set(agentcore.plugin_api.__all__) - used) == []


@pytest.mark.parametrize("module", API_MODULES, ids=lambda m: m.__name__)
def test_star_import_of_the_plugin_api_works(module: ModuleType) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {module.__name__} import *", namespace)
    assert set(module.__all__) <= set(namespace)


@pytest.mark.parametrize("module", API_MODULES, ids=lambda m: m.__name__)
def test_the_plugin_api_takes_its_names_from_public_modules(module: ModuleType) -> None:
    assert module.__file__ is not None
    sources = [m for _, m in core_imports(Path(module.__file__))]
    assert len(sources) > 5
    assert [m for m in sources if any(part.startswith("_") for part in m.split("."))] == []


async def test_a_turn_hook_sees_the_session_as_a_session_handle() -> None:
    seen: list[SessionHandle] = []

    class Plugin:
        @agentcore.hookimpl
        def on_turn_start(self, ctx: TurnContext) -> None:
            seen.append(ctx.session)

    bundle = AgentBuilder().provider(MockProvider(["hi"])).plugin(Plugin()).build()
    session = AgentSession(agentcore.Agent("a"), "s1", bundle)
    handle: SessionHandle = session  # mypy checks that AgentSession satisfies the protocol
    await session.submit_turn("hello")
    assert seen == [handle]
    assert seen[0].session_id == "s1"
    assert seen[0].turn_index == 1


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("third_party_plugin", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_example_plugin_keeps_requests_in_budget_and_stores_a_note() -> None:
    example = load_example()
    assert await example.demo() == {"left_out": 1, "note": "they greeted"}


async def test_the_example_plugins_own_hook_vetoes_the_note() -> None:
    example = load_example()
    calls: list[int] = []

    class Vetoer:
        @agentcore.hookimpl(optionalhook=True)
        def before_tail_note(self, left_out: int) -> bool:
            calls.append(left_out)
            return False

    def reply(request: agentcore.LlmRequest) -> str:
        return "ok " * 40

    provider = MockProvider(responder=reply)
    bundle = (
        AgentBuilder()
        .provider(provider)
        .plugin(example.TailKeeper())
        .plugin(Vetoer())
        .setting(example.SETTING, 200)
        .load_plugins(False)
        .build()
    )
    async with AgentSession(agentcore.Agent("a"), "veto", bundle) as session:
        for turn in range(3):
            await session.submit_turn(f"message {turn}: " + "words " * 60)
        assert await session.get_session_data(example.NOTE_KEY) is None
    assert calls and all(count >= 1 for count in calls)
    counter = agentcore.plugin_api.get_token_counter(None)
    for request in provider.calls:
        sent = counter.count_messages(request.messages)
        assert sent <= 200 - agentcore.plugin_api.reply_reservation(None, 200)
    assert all(request.purpose != example.PURPOSE for request in provider.calls)


def test_a_bad_budget_fails_the_build_naming_the_setting() -> None:
    example = load_example()
    builder = AgentBuilder().provider(MockProvider(["x"])).plugin(example.TailKeeper())
    with pytest.raises(agentcore.ConfigError, match="tail_budget"):
        builder.setting(example.SETTING, 10).load_plugins(False).build()
