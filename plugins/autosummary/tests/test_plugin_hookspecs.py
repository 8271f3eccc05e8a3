"""The hooks autosummary adds: declared by the plugin, documented, tested, absent without it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from agentcore import AgentBuilder, ConfigError, TurnContext, hookimpl
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryInfo, hookspecs
from agentcore_autosummary import plugin as autosummary_plugin

ROOT = Path(__file__).resolve().parents[3]
HOOK_NAMES = sorted(
    name for name, value in vars(hookspecs).items() if hasattr(value, "agentcore_spec")
)


def test_the_module_lists_its_hooks() -> None:
    assert sorted(hookspecs.HOOK_NAMES) == HOOK_NAMES


def test_every_plugin_hook_is_documented_with_its_exact_signature() -> None:
    text = (ROOT / "docs" / "plugins.md").read_text()
    for name in HOOK_NAMES:
        params = ", ".join(inspect.signature(getattr(hookspecs, name)).parameters)
        assert f"#### {name}({params})" in text, f"docs/plugins.md does not document {name}"


def test_every_plugin_hook_has_a_test() -> None:
    tests = "".join(path.read_text() for path in Path(__file__).parent.glob("test_*.py"))
    missing = [name for name in HOOK_NAMES if f"def test_hook_{name}" not in tests]
    assert not missing, f"hooks without a test_hook_<name> test: {missing}"


def test_the_core_no_longer_declares_them() -> None:
    from agentcore import hookspecs as core_hookspecs

    assert not [name for name in HOOK_NAMES if hasattr(core_hookspecs, name)]


class _Listener:
    @hookimpl
    def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None: ...


def test_the_hooks_exist_where_the_plugin_is_registered() -> None:
    builder = AgentBuilder().provider(MockProvider()).load_plugins(False)
    bundle = builder.plugin(_Listener()).plugin(autosummary_plugin).build()
    assert hasattr(bundle.plugin_manager.hook, "after_summary")
    alone = AgentBuilder().provider(MockProvider()).load_plugins(False).plugin(_Listener())
    with pytest.raises(ConfigError, match="unknown hook 'after_summary'"):
        alone.build()
