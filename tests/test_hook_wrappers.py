"""A ``wrapper=True`` implementation runs on every core hook; a call lacking an argument fails.

The hooks are read from the plugin manager, so a hook added to
``agentcore.hookspecs`` is covered without touching this file: the test
fails until an operation below fires it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Generator
from typing import Any

import pluggy
import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    LlmResponse,
    Message,
    ToolRegistry,
    ToolUseBlock,
    TurnContext,
    hookimpl,
)
from agentcore.cli import build_parser
from agentcore.cli.extensions import ChatSetup, CliHooks
from agentcore.errors import ConfigError
from agentcore.hook_calls import call_hook
from agentcore.hookspecs import hook_policy, hookspec
from agentcore.plugins import create_plugin_manager
from agentcore.providers import get_provider
from agentcore.testing import MockProvider, wrapper_plugin


def _hooks(pm: pluggy.PluginManager) -> dict[str, pluggy.HookCaller]:
    """Every hook ``pm`` has a spec for, by name."""
    callers: dict[str, pluggy.HookCaller] = vars(pm.hook)
    return {name: caller for name, caller in callers.items() if caller.spec is not None}


def _core_hooks() -> dict[str, pluggy.HookCaller]:
    return _hooks(create_plugin_manager(load_entrypoints=False))


def test_a_wrapper_of_a_historic_hook_is_refused_as_pluggy_refuses_it() -> None:
    historic = [name for name, caller in _core_hooks().items() if caller.is_historic()]
    assert "register_hookspecs" in historic
    with pytest.raises(pluggy.PluginValidationError, match="historic incompatible"):
        create_plugin_manager(load_entrypoints=False, plugins=[wrapper_plugin(historic, [])])


async def test_a_wrapper_runs_on_every_hook_of_the_core() -> None:
    names = sorted(name for name, caller in _core_hooks().items() if not caller.is_historic())
    fired: list[str] = []
    registry = ToolRegistry()

    @registry.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    tool_call = LlmResponse(
        Message.assistant("", [ToolUseBlock("c1", "add", {"a": 1, "b": 2})]),
        stop_reason="tool_use",
    )
    script: list[Any] = [tool_call, "3", "streamed", ValueError("the provider broke")]
    bundle = (
        AgentBuilder()
        .provider(MockProvider(script))
        .tool_registry(registry)
        .load_plugins(False)
        .plugin(wrapper_plugin(names, fired))
        .build()
    )
    assert "register_settings" in fired  # build() asks every plugin for its settings
    session = AgentSession(Agent("a"), "s", bundle, FocusedConfig())

    assert (await session.submit_turn("add 1 and 2")).text == "3"
    stream = session.submit_turn_stream("stream it")
    assert "".join([event.text async for event in stream]) == "streamed"
    with pytest.raises(ValueError, match="the provider broke"):
        await session.submit_turn("fail")
    assert await session.pin(0) == (0,)
    assert await session.unpin(0) == ()
    get_provider("openai:gpt-4o-mini", plugin_manager=bundle.plugin_manager, api_key="k")
    parser = build_parser(bundle.plugin_manager)  # register_commands, register_chat_options
    args = parser.parse_args(["chat"])
    CliHooks(bundle.plugin_manager).register_chat_commands(
        chat=ChatSetup(args=args, builder=AgentBuilder(), model=None)
    )

    assert sorted(set(fired)) == names


class _Specs:
    @hookspec
    @hook_policy(isolate=True)
    def on_thing(self, ctx: TurnContext, thing: str) -> None:
        """A hook for this test."""


async def test_a_call_lacking_an_argument_an_implementation_needs_raises_hook_call_error() -> None:
    seen: list[object] = []

    class Impl:
        @hookimpl
        async def on_thing(self, ctx: TurnContext, thing: str) -> None:
            seen.append(thing)

    class Watcher:
        @hookimpl(wrapper=True)
        def on_thing(self) -> Generator[None, object, object]:
            try:
                return (yield)
            except pluggy.HookCallError as exc:
                seen.append(exc)
                raise

    pm = create_plugin_manager(load_entrypoints=False)
    pm.add_hookspecs(_Specs)
    pm.register(Impl())
    pm.register(Watcher())
    # Isolated hook or not, the caller's mistake reaches the caller, through the wrappers.
    with pytest.raises(pluggy.HookCallError, match="hook call must provide argument 'thing'"):
        await call_hook(pm.hook.on_thing, ctx=None)
    assert len(seen) == 1 and isinstance(seen[0], pluggy.HookCallError)
    # pluggy's own synchronous call fails the same way.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pluggy also warns that the spec's argument is missing
        with pytest.raises(pluggy.HookCallError, match="hook call must provide argument 'thing'"):
            pm.hook.on_thing(ctx=None)
    assert await call_hook(pm.hook.on_thing, ctx=None, thing="given") == []
    assert seen[-1] == "given"


async def test_a_synchronous_hook_is_not_called_through_the_awaiting_loop() -> None:
    pm = create_plugin_manager(load_entrypoints=False)
    with pytest.raises(TypeError, match="'register_settings' is synchronous"):
        await call_hook(pm.hook.register_settings)


def test_each_registration_is_credited_to_its_plugin_under_a_wrapper() -> None:
    """One pluggy call, wrappers included, still names the plugin of each registration."""

    class Echo:
        def __init__(self, factory: Callable[[str], MockProvider]) -> None:
            self.factory = factory

        @hookimpl
        def register_providers(self, register: Callable[[str, Any], None]) -> None:
            register("echo", self.factory)

    class Around:
        @hookimpl(wrapper=True)
        def register_providers(self) -> Generator[None, object, object]:
            return (yield)

    pm = create_plugin_manager(load_entrypoints=False)
    pm.register(Echo(lambda model: MockProvider(model=model)), name="first-echo")
    pm.register(Echo(lambda model: MockProvider(model=model)), name="second-echo")
    pm.register(Around())
    # pluggy calls the plugin registered last first; each is named, not the wrapper.
    with pytest.raises(
        ConfigError, match=r"'echo' is registered by 'second-echo' and 'first-echo'"
    ):
        get_provider("echo:m", plugin_manager=pm)
