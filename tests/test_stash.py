"""Plugins keep per-session and per-bundle state in a typed stash."""

from __future__ import annotations

import ast
import gc
import weakref
from pathlib import Path

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ContextWindowExceededError,
    LlmResponse,
    Message,
    ModelCallInfo,
    ToolRegistry,
    ToolUseBlock,
    TurnContext,
    hookimpl,
)
from agentcore.budget import OVERFLOW_KEY
from agentcore.stash import Stash, StashKey
from agentcore.testing import MockProvider

COUNT = StashKey[int]("count")
NAMES = StashKey[list[str]]("names")


def test_keys_are_their_own_and_typed() -> None:
    stash = Stash()
    other = StashKey[int]("count")  # same label, another key
    stash[COUNT] = 1
    assert stash[COUNT] == 1 and other not in stash
    assert stash.get(other, None) is None
    assert stash.setdefault(NAMES, []) == [] and stash.setdefault(NAMES, ["x"]) == []
    assert len(stash) == 2
    del stash[COUNT]
    with pytest.raises(KeyError, match="nothing stored under StashKey\\('count'\\)"):
        stash[COUNT]


def test_each_session_and_bundle_has_its_own_stash_that_lives_as_long_as_it() -> None:
    bundle = AgentBuilder().provider(MockProvider()).load_plugins(False).build()
    first, second = AgentSession(Agent("a"), "s1", bundle), AgentSession(Agent("a"), "s2", bundle)
    first.stash[COUNT] = 1
    assert COUNT not in second.stash
    bundle.stash[COUNT] = 7
    assert bundle.stash[COUNT] == 7 and first.stash[COUNT] == 1

    class Held:
        pass

    held = Held()
    probe = weakref.ref(held)
    key = StashKey[Held]()
    first.stash[key] = held
    del held, first
    gc.collect()
    assert probe() is None  # the state went with its session


# -- a third-party plugin's state, through the public API ------------------------------

CALLS = StashKey[int]("calls this turn")
TURNS = StashKey[list[int]]("model calls per turn")


class CallCounter:
    """Counts model calls per turn (ctx.stash) and keeps the counts per session (session.stash)."""

    @hookimpl
    def on_turn_start(self, ctx: TurnContext) -> None:
        assert CALLS not in ctx.stash  # each turn starts with an empty stash
        ctx.stash[CALLS] = 0

    @hookimpl
    def after_model_call(self, ctx: TurnContext, call: ModelCallInfo) -> None:
        ctx.stash[CALLS] += 1

    @hookimpl
    def on_turn_end(self, ctx: TurnContext) -> None:
        ctx.session.stash.setdefault(TURNS, []).append(ctx.stash[CALLS])


async def test_a_plugin_keeps_turn_state_in_ctx_stash_and_session_state_in_session_stash() -> None:
    registry = ToolRegistry()

    @registry.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    use_tool = LlmResponse(
        Message.assistant("", [ToolUseBlock("c1", "echo", {"text": "x"})]), stop_reason="tool_use"
    )
    provider = MockProvider([use_tool, "done", "plain", "streamed", "other session"])
    bundle = (
        AgentBuilder()
        .provider(provider)
        .tool_registry(registry)
        .plugin(CallCounter())
        .load_plugins(False)
        .build()
    )
    first = AgentSession(Agent("a"), "first", bundle)
    await first.submit_turn("use the tool")  # two model calls: the tool round, the answer
    await first.submit_turn("no tool")
    await first.submit_turn_stream("streamed").finalize()
    second = AgentSession(Agent("a"), "second", bundle)
    await second.submit_turn("hello")
    assert first.stash[TURNS] == [2, 1, 1]
    assert second.stash[TURNS] == [1]
    assert TURNS not in bundle.stash


async def test_the_retry_after_a_refusal_for_length_sees_the_error_under_overflow_key() -> None:
    seen: list[ContextWindowExceededError | None] = []

    class Watcher:
        @hookimpl
        def before_model_call(self, ctx: TurnContext) -> None:
            seen.append(ctx.stash.get(OVERFLOW_KEY, None))

    overflow = ContextWindowExceededError("too long", prompt_tokens=3000, limit_tokens=2048)
    provider = MockProvider([overflow, "fits now", overflow, "streamed", "plain"])
    bundle = AgentBuilder().provider(provider).plugin(Watcher()).load_plugins(False).build()
    session = AgentSession(Agent("a"), "s", bundle)
    assert (await session.submit_turn("first")).text == "fits now"
    await session.submit_turn_stream("second").finalize()
    await session.submit_turn("third")
    assert seen == [None, overflow, None, overflow, None]


# -- no module-level registries of per-object state ----------------------------------------

ROOT = Path(__file__).resolve().parents[1]
WEAK_MAPS = {"WeakKeyDictionary", "WeakValueDictionary", "WeakSet"}
ALLOWED: dict[str, str] = {}
"""``"path:line"`` of a module- or class-level weak map that must stay, with the reason."""


def _packages() -> list[Path]:
    return [ROOT / "agentcore", *sorted(ROOT.glob("plugins/*/agentcore_*"))]


def _weak_maps(tree: ast.Module) -> list[int]:
    """Lines of module- or class-level statements that name a weak map."""
    found: list[int] = []
    bodies: list[list[ast.stmt]] = [tree.body]
    while bodies:
        for statement in bodies.pop():
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue  # a function's locals live as long as its call
            if isinstance(statement, ast.ClassDef):
                bodies.append(statement.body)
                continue
            if isinstance(statement, (ast.If, ast.Try)):
                bodies.extend(
                    [statement.body, statement.orelse, *(h.body for h in _handlers(statement))]
                )
                continue
            names = {
                node.id if isinstance(node, ast.Name) else node.attr
                for node in ast.walk(statement)
                if isinstance(node, (ast.Name, ast.Attribute))
            }
            if names & WEAK_MAPS and not isinstance(statement, (ast.Import, ast.ImportFrom)):
                found.append(statement.lineno)
    return found


def _handlers(statement: ast.If | ast.Try) -> list[ast.ExceptHandler]:
    return statement.handlers if isinstance(statement, ast.Try) else []


def test_no_module_level_weak_maps_hold_plugin_state() -> None:
    packages = _packages()
    assert len(packages) >= 3  # agentcore, agentcore_autosummary, agentcore_otel
    found = []
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for line in _weak_maps(tree):
                where = f"{path.relative_to(ROOT)}:{line}"
                if where not in ALLOWED:
                    found.append(where)
    assert found == [], (
        "per-object state belongs in the object's stash (agentcore.stash), not in a "
        f"module-level weak map: {found}"
    )


def test_the_weak_map_check_finds_one() -> None:
    source = "import weakref\n_by_session: dict = weakref.WeakKeyDictionary()\n"
    assert _weak_maps(ast.parse(source)) == [2]
    inside = "def f():\n    cache = weakref.WeakValueDictionary()\n"
    assert _weak_maps(ast.parse(inside)) == []
