"""Hook policies: every core hook declares one, and docs/plugins.md shows the declared ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentcore import ContextWindowExceededError, hookspecs
from agentcore.cli import hookspecs as cli_hookspecs
from agentcore.hookspecs import HookPolicy, hook_policy, policy_of, policy_table

DOCS = Path(__file__).resolve().parents[1] / "docs"


def documented_table(name: str) -> list[str]:
    """The rows of the ``hook-policies: NAME`` table of docs/plugins.md."""
    text = (DOCS / "plugins.md").read_text("utf-8")
    found = re.search(
        rf"<!-- hook-policies: {name} -->\n(.*?)<!-- end hook-policies -->", text, re.S
    )
    assert found, f"docs/plugins.md has no table marked <!-- hook-policies: {name} -->"
    return [line.strip() for line in found.group(1).splitlines()[2:] if line.strip()]


def test_the_core_table_matches_the_declarations() -> None:
    assert documented_table("core") == policy_table(hookspecs)


def test_the_command_line_table_matches_its_declarations() -> None:
    assert documented_table("cli") == policy_table(cli_hookspecs)


def test_every_core_hook_declares_its_policy() -> None:
    specs = [name for name, value in vars(hookspecs).items() if hasattr(value, "agentcore_spec")]
    undeclared = [
        name for name in specs if not hasattr(getattr(hookspecs, name), "agentcore_policy")
    ]
    assert undeclared == []


def test_the_policy_is_stored_on_the_spec_function() -> None:
    assert policy_of(hookspecs.before_model_call) == HookPolicy(
        isolate=True, propagate=(ContextWindowExceededError,)
    )
    assert policy_of(hookspecs.register_providers).sync
    assert "register_providers" in hookspecs.SYNC_HOOKS
    assert "on_turn_end" not in hookspecs.SYNC_HOOKS


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sync": True, "isolate": True}, "a synchronous hook is called by pluggy"),
        ({"propagate": (ValueError, "oops")}, "propagate must be a tuple of exception types"),
        ({"propagate": [ValueError]}, "propagate must be a tuple of exception types"),
    ],
)
def test_a_policy_that_cannot_hold_is_refused(options: dict[str, object], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        hook_policy(**options)  # type: ignore[arg-type]
