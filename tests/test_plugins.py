from __future__ import annotations

import asyncio
import contextvars
import inspect
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import attrs
import pytest

from agentcore import (
    AgentBuilder,
    AgentSession,
    ConfigError,
    ContextSlot,
    FocusedConfig,
    PluginSetting,
    SlotConfig,
    TurnContext,
    hookimpl,
    hookspecs,
)
from agentcore.call_hooks import HookedProvider
from agentcore.hook_calls import call_hook
from agentcore.plugins import create_plugin_manager, list_plugins
from agentcore.providers import check_provider_name
from agentcore.testing import MockProvider

MakeSession = Callable[..., AgentSession]
DOCS = Path(__file__).parent.parent / "docs"
HOOK_NAMES = sorted(
    name for name, value in vars(hookspecs).items() if hasattr(value, "agentcore_spec")
)


@pytest.fixture
def installed_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A distribution on sys.path that publishes a plugin in the agentcore group."""
    (tmp_path / "greeter_plugin.py").write_text(
        textwrap.dedent(
            """
            from agentcore import hookimpl

            seen = []

            @hookimpl
            def on_turn_end(ctx):
                seen.append(ctx.turn_index)
            """
        )
    )
    dist = tmp_path / "agentcore_greeter-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: agentcore-greeter\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[agentcore]\ngreeter = greeter_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("AGENTCORE_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    yield "greeter"
    sys.modules.pop("greeter_plugin", None)


def test_every_hook_is_documented_with_its_exact_signature() -> None:
    text = (DOCS / "plugins.md").read_text()
    for name in HOOK_NAMES:
        signature = inspect.signature(getattr(hookspecs, name))
        params = ", ".join(signature.parameters)
        assert f"{name}({params})" in text, f"docs/plugins.md does not document {name}({params})"


def test_every_hook_has_a_test() -> None:
    tests = "".join(path.read_text() for path in Path(__file__).parent.glob("test_*.py"))
    missing = [name for name in HOOK_NAMES if f"def test_hook_{name}" not in tests]
    assert not missing, f"hooks without a test_hook_<name> test: {missing}"


def test_entry_point_plugins_are_discovered(installed_plugin: str) -> None:
    pm = create_plugin_manager()
    infos = {info.name: info for info in list_plugins(pm)}
    assert infos[installed_plugin].hooks == ("on_turn_end",)
    assert infos[installed_plugin].distribution == "agentcore-greeter"
    assert infos[installed_plugin].as_dict()["version"] == "1.0"


def test_autoload_can_be_turned_off(installed_plugin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert create_plugin_manager(load_entrypoints=False).get_plugin(installed_plugin) is None
    monkeypatch.setenv("AGENTCORE_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert create_plugin_manager().get_plugin(installed_plugin) is None
    built = AgentBuilder().provider(MockProvider()).build()
    assert built.plugin_manager.get_plugin(installed_plugin) is None


def test_plugins_can_be_blocked_by_name(
    installed_plugin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCORE_DISABLED_PLUGINS", f"other, {installed_plugin}")
    assert create_plugin_manager().get_plugin(installed_plugin) is None


async def test_installed_plugin_runs_with_no_registration_code(
    installed_plugin: str, agent: Any
) -> None:
    bundle = AgentBuilder().provider(MockProvider(["hi", "again"])).build()
    session = AgentSession(agent, "s", bundle)
    await session.submit_turn("one")
    await session.submit_turn("two")
    assert sys.modules["greeter_plugin"].seen == [0, 1]


def test_every_bundle_has_its_own_plugin_manager() -> None:
    class Plugin:
        @hookimpl
        def on_turn_end(self, ctx: TurnContext) -> None: ...

    with_plugin = (
        AgentBuilder().provider(MockProvider()).plugin(Plugin()).load_plugins(False).build()
    )
    without = AgentBuilder().provider(MockProvider()).load_plugins(False).build()
    assert with_plugin.plugin_manager is not without.plugin_manager
    assert len(with_plugin.plugin_manager.hook.on_turn_end.get_hookimpls()) == 1
    assert without.plugin_manager.hook.on_turn_end.get_hookimpls() == []


def test_a_first_party_setting_without_its_plugin_names_the_install_command() -> None:
    builder = AgentBuilder().provider(MockProvider()).load_plugins(False)
    builder.setting("otel_capture_content", True)
    with pytest.raises(ConfigError, match=r'"agentcore\[otel\]==0\.3\.0"'):
        builder.build()


def test_unknown_setting_fails_the_build() -> None:
    builder = AgentBuilder().provider(MockProvider()).load_plugins(False).setting("colour", "red")
    with pytest.raises(ConfigError, match="no installed plugin provides the setting 'colour'"):
        builder.build()


class _Temperature:
    """A plugin that owns a setting and validates it."""

    @hookimpl
    def register_settings(self) -> Sequence[PluginSetting]:
        def convert(value: Any) -> float:
            if not isinstance(value, (int, float)) or not 0 <= value <= 2:
                raise ValueError(f"temperature must be between 0 and 2, got {value!r}")
            return float(value)

        return [PluginSetting("temperature", convert)]


def test_hook_register_settings() -> None:
    bundle = (
        AgentBuilder()
        .provider(MockProvider())
        .load_plugins(False)
        .plugin(_Temperature())
        .setting("temperature", 1)
        .build()
    )
    assert bundle.config.get("temperature") == 1.0
    bad = AgentBuilder().provider(MockProvider()).load_plugins(False).plugin(_Temperature())
    with pytest.raises(ConfigError, match=r"'temperature'.*between 0 and 2"):
        bad.setting("temperature", 5).build()


def test_a_plugin_setting_is_a_builder_method_of_its_name() -> None:
    """``.temperature(1)`` chains like the core's methods and is ``.setting("temperature", 1)``."""
    builder = AgentBuilder().provider(MockProvider()).load_plugins(False).plugin(_Temperature())
    assert builder.temperature(1).build().config.get("temperature") == 1.0
    with pytest.raises(ConfigError, match=r"'temperature'.*between 0 and 2"):
        builder.temperature(5).build()
    alone = AgentBuilder().provider(MockProvider()).load_plugins(False)
    with pytest.raises(ConfigError, match="no installed plugin provides the setting 'colour'"):
        alone.colour("red").build()
    with pytest.raises(AttributeError, match="_colour"):
        alone._colour  # noqa: B018  # private names are never settings


def test_a_setting_check_sees_the_bundles_plugins() -> None:
    """A setting's ``check`` runs at build with the plugin manager every plugin is in."""

    class Echo:
        @hookimpl
        def register_providers(self, register: Any) -> None:
            register("echo", lambda model: MockProvider(model=model))

    class Chooser:
        @hookimpl
        def register_settings(self) -> Sequence[PluginSetting]:
            def check(value: str, plugin_manager: Any) -> None:
                check_provider_name(value, plugin_manager=plugin_manager)

            return [PluginSetting("judge", str, check=check)]

    def builder() -> AgentBuilder:
        chosen = AgentBuilder().provider(MockProvider()).load_plugins(False)
        return chosen.plugin(Chooser()).setting("judge", "echo:small")

    with pytest.raises(ConfigError, match=r"'judge'.*prefix 'echo'.*known prefixes: anthropic"):
        builder().build()
    assert builder().plugin(Echo()).build().config.get("judge") == "echo:small"


async def test_hook_on_turn_start(make_session: MakeSession) -> None:
    seen: list[tuple[int, list[str], object]] = []

    class Plugin:
        @hookimpl
        async def on_turn_start(self, ctx: TurnContext) -> None:
            seen.append((ctx.turn_index, [m.text for m in ctx.messages], ctx.response))

    session = make_session(plugins=(Plugin(),))
    await session.submit_turn("first")
    await session.submit_turn_stream("second").finalize()
    assert seen == [(0, ["first"], None), (1, ["second"], None)]


async def test_hook_on_turn_end(make_session: MakeSession) -> None:
    seen: list[TurnContext] = []

    class Plugin:
        @hookimpl
        def on_turn_end(self, ctx: TurnContext) -> None:
            seen.append(ctx)

    provider = MockProvider(["reply"])
    session = make_session(provider, plugins=(Plugin(),))
    await session.submit_turn("hello")
    (ctx,) = seen
    assert [m.text for m in ctx.messages] == ["hello", "reply"]
    assert ctx.session is session and ctx.session_id == "s1" and ctx.turn_index == 0
    assert ctx.usage is not None and ctx.usage.total_tokens > 0
    assert ctx.response is not None and ctx.response.text == "reply"
    assert ctx.cost.total() == ctx.usage
    assert cast(HookedProvider, ctx.provider).wrapped is provider and ctx.slot.id == "default"
    assert ctx.store is session.bundle.store and ctx.memory is session.memory
    assert ctx.config is session.bundle.config and ctx.is_stream is False
    # The turn is already stored when the hook fires.
    assert len(ctx.slot.messages) == 2


async def test_hook_post_turn_end(make_session: MakeSession) -> None:
    order: list[str] = []

    class Plugin:
        @hookimpl
        def on_turn_end(self, ctx: TurnContext) -> None:
            order.append("end")

        @hookimpl
        async def post_turn_end(self, ctx: TurnContext) -> None:
            order.append(f"post turn={ctx.turn_index} index={ctx.session.turn_index}")
            await ctx.memory.set("last_turn", ctx.turn_index)

    session = make_session(plugins=(Plugin(),))
    await session.submit_turn("hello")
    # The turn is stored before the end hooks run, so the session already counts it.
    assert order == ["end", "post turn=0 index=1"]
    assert await session.get_session_data("last_turn") == 0


def test_hook_register_providers() -> None:
    from agentcore.llm import LlmProvider

    class Plugin:
        @hookimpl
        def register_providers(
            self, register: Callable[[str, Callable[[str], LlmProvider]], None]
        ) -> None:
            register("mock", lambda model: MockProvider(model=model))

    pm = create_plugin_manager(load_entrypoints=False, plugins=[Plugin()])
    registered: dict[str, Callable[[str], LlmProvider]] = {}
    pm.hook.register_providers(
        register=lambda prefix, factory: registered.setdefault(prefix, factory)
    )
    provider = registered["mock"]("tiny")
    assert isinstance(provider, MockProvider) and provider.model == "tiny"


async def test_hook_before_model_call(make_session: MakeSession) -> None:
    from agentcore import Agent, FocusedConfig, LlmResponse, Message, ToolRegistry, ToolUseBlock

    seen: list[list[str]] = []

    class Compactor:
        """Shrinks the context before the second call of a turn."""

        @hookimpl
        async def before_model_call(self, ctx: TurnContext) -> None:
            seen.append([m.role for m in ctx.messages])
            if len(ctx.messages) > 1 and ctx.slot.config.focused is not None:
                focused = FocusedConfig(summary_override="earlier: greetings", summary_covers=2)
                await ctx.session.write_slot_config(ctx.slot.id, type(ctx.slot.config)(focused))

    registry = ToolRegistry()

    @registry.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    provider = MockProvider(
        [
            "hello",
            LlmResponse(
                Message.assistant("", [ToolUseBlock("c1", "ping")]), stop_reason="tool_use"
            ),
            "pong received",
        ]
    )
    bundle = (
        AgentBuilder()
        .provider(provider)
        .tool_registry(registry)
        .plugin(Compactor())
        .load_plugins(False)
        .build()
    )
    session = AgentSession(Agent("a", system_prompt="sys"), "s", bundle, FocusedConfig())
    await session.submit_turn("hi")
    await session.submit_turn("ping it")
    assert seen == [["user"], ["user"], ["user", "assistant", "tool"]]
    last = provider.calls[-1].messages
    # The third request was rebuilt after the hook: summary (a user-side message, answered),
    # uncovered history, this turn.
    assert [m.text for m in last[:3]] == ["sys", "[上下文摘要] earlier: greetings", "OK."]
    assert [m.role for m in last[1:]] == ["user", "assistant", "user", "assistant", "tool"]


async def test_hook_after_model_call(agent: Any) -> None:
    from agentcore import FocusedConfig, LlmCycle, LlmError, LlmRequest
    from agentcore.calls import ModelCallInfo

    seen: list[tuple[int, ModelCallInfo]] = []

    class Meter:
        @hookimpl
        async def after_model_call(self, ctx: TurnContext, call: ModelCallInfo) -> None:
            seen.append((ctx.turn_index, call))

    class Summarizer:
        """Makes a summary call through ctx.provider, as autosummary does."""

        @hookimpl
        async def post_turn_end(self, ctx: TurnContext) -> None:
            cycle = LlmCycle(ctx.provider, purpose="summary", max_tokens=50)
            await cycle.submit_messages(ctx.messages)

    def reply(request: LlmRequest) -> str | BaseException:
        if request.purpose == "summary":
            return "they said hi"
        if request.messages[-1].text == "fail":
            return LlmError("server down", status_code=503)
        return "hello"

    provider = MockProvider(responder=reply, model="mock-1")
    bundle = (
        AgentBuilder().provider(provider).plugin(Meter()).plugin(Summarizer()).load_plugins(False)
    ).build()
    session = AgentSession(agent, "s", bundle, FocusedConfig())
    await session.submit_turn("hi")
    await session.submit_turn_stream("again").finalize()
    with pytest.raises(LlmError):
        await session.submit_turn("fail")

    assert [(index, call.purpose, call.streamed) for index, call in seen] == [
        (0, "turn", False),
        (0, "summary", False),
        (1, "turn", True),
        (1, "summary", False),
        (2, "turn", False),
    ]
    _, first = seen[0]
    assert first.request is provider.calls[0] and first.provider is provider
    assert first.response is not None and first.response.text == "hello"
    assert first.error is None and first.usage == first.response.usage
    assert first.usage is not None and first.usage.input_tokens > 0
    assert first.model == "mock-1" and first.duration >= 0
    assert abs(first.started_at - time.time()) < 60
    _, summary = seen[1]
    assert summary.request.max_tokens == 50 and summary.response is not None
    _, failed = seen[-1]
    assert failed.response is None and failed.usage is None
    assert isinstance(failed.error, LlmError) and failed.error.status_code == 503


async def test_hook_before_tool_call(make_session: MakeSession) -> None:
    from agentcore import LlmResponse, Message, ToolRegistry, ToolUseBlock
    from agentcore.calls import ToolCallInfo

    events: list[str] = []
    current: contextvars.ContextVar[str] = contextvars.ContextVar("current", default="none")

    class Tracer:
        @hookimpl
        def before_tool_call(self, ctx: TurnContext, call: ToolCallInfo) -> None:
            assert call.result is None and call.duration is None
            events.append(f"before {call.name} {dict(call.arguments)} id={call.call_id}")
            current.set(f"span of {call.call_id}")

    registry = ToolRegistry()

    @registry.tool
    async def add(a: int, b: int) -> int:
        """Add two numbers."""
        events.append(f"tool sees {current.get()}")
        return a + b

    calls = [
        ToolUseBlock("c1", "add", {"a": 1, "b": 2}),
        ToolUseBlock("c2", "add", {"a": 3, "b": 4}),
    ]
    provider = MockProvider(
        [LlmResponse(Message.assistant("", calls), stop_reason="tool_use"), "3 and 7"]
    )
    bundle = attrs.evolve(make_session(provider, plugins=(Tracer(),)).bundle, tools=registry)
    session = AgentSession(make_session().agent, "tools", bundle)
    await session.submit_turn("add them")
    assert sorted(events) == [
        "before add {'a': 1, 'b': 2} id=c1",
        "before add {'a': 3, 'b': 4} id=c2",
        "tool sees span of c1",
        "tool sees span of c2",
    ]


async def test_hook_offer_tools(
    make_session: MakeSession, caplog: pytest.LogCaptureFixture
) -> None:
    from agentcore import LlmResponse, Message, ToolRegistry, ToolUseBlock
    from agentcore.tools import Tool

    seen: list[str] = []

    class Offers:
        @hookimpl
        async def offer_tools(self, ctx: TurnContext) -> list[Tool]:
            async def session_name() -> str:
                """The name of this session."""
                seen.append(f"called in turn {ctx.turn_index}")
                return ctx.session_id

            def clash() -> str:
                """Taken: the bundle has a tool of this name."""
                return "never"

            return [Tool.from_function(session_name), Tool.from_function(clash, name="add")]

    class Broken:
        @hookimpl
        def offer_tools(self, ctx: TurnContext) -> list[Tool]:
            raise RuntimeError("no tools today")

    registry = ToolRegistry()

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    calls = [ToolUseBlock("c1", "session_name", {}), ToolUseBlock("c2", "add", {"a": 1, "b": 2})]
    provider = MockProvider(
        [LlmResponse(Message.assistant("", calls), stop_reason="tool_use"), "done"]
    )
    session = make_session(provider, plugins=(Offers(), Broken()))
    bundle = attrs.evolve(session.bundle, tools=registry)
    session = AgentSession(session.agent, "offered", bundle)
    with caplog.at_level("ERROR"):
        await session.submit_turn("who are you?")
    offered = [spec.name for spec in provider.calls[0].tools]
    assert offered == ["add", "session_name"]  # the bundle's, then the plugin's; no clash
    results = [m.text for m in provider.calls[1].messages if m.role == "tool"]
    assert results == ["offered", "3"]
    assert seen == ["called in turn 0"]
    assert "a tool named 'add' is not a new Tool" in caplog.text
    assert "no tools today" in caplog.text
    assert registry.get("session_name") is None  # the bundle's registry is left as it was


async def test_offered_tools_answer_a_streamed_turn(make_session: MakeSession) -> None:
    from agentcore import LlmResponse, Message, ToolUseBlock
    from agentcore.tools import Tool

    class Offers:
        @hookimpl
        def offer_tools(self, ctx: TurnContext) -> list[Tool]:
            def session_name() -> str:
                """The name of this session."""
                return ctx.session_id

            return [Tool.from_function(session_name)]

    call = ToolUseBlock("c1", "session_name", {})
    provider = MockProvider(
        [LlmResponse(Message.assistant("", [call]), stop_reason="tool_use"), "done"]
    )
    session = make_session(provider, plugins=(Offers(),))
    reply = await session.submit_turn_stream("who are you?").finalize()
    assert reply.text == "done"
    assert [spec.name for spec in provider.calls[0].tools] == ["session_name"]
    results = [m.text for m in provider.calls[1].messages if m.role == "tool"]
    assert results == [session.session_id]


async def test_hook_after_tool_call(make_session: MakeSession) -> None:
    from agentcore import LlmResponse, Message, ToolRegistry, ToolUseBlock
    from agentcore.calls import ToolCallInfo

    finished: dict[str, ToolCallInfo] = {}

    class Meter:
        @hookimpl
        async def after_tool_call(self, ctx: TurnContext, call: ToolCallInfo) -> None:
            finished[call.call_id] = call

    registry = ToolRegistry(timeout=2)  # generous: only `slow` may reach it, even at load 10

    @registry.tool
    def ok() -> str:
        """Succeed."""
        return "fine"

    @registry.tool
    def broken() -> str:
        """Fail."""
        raise ValueError("no luck")

    @registry.tool
    async def slow() -> str:
        """Take too long."""
        await asyncio.sleep(60)
        return "late"

    calls = [ToolUseBlock("a", "ok"), ToolUseBlock("b", "broken"), ToolUseBlock("c", "slow")]
    calls.append(ToolUseBlock("d", "missing"))
    provider = MockProvider(
        [LlmResponse(Message.assistant("", calls), stop_reason="tool_use"), "done"]
    )
    bundle = (
        AgentBuilder()
        .provider(provider)
        .tool_registry(registry)
        .plugin(Meter())
        .load_plugins(False)
        .build()
    )
    session = AgentSession(make_session().agent, "s", bundle)
    await session.submit_turn("go")
    assert set(finished) == {"a", "b", "c", "d"}
    assert finished["a"].result is not None and finished["a"].result.text == "fine"
    assert finished["a"].error is None and finished["a"].duration is not None
    assert finished["b"].result is not None and finished["b"].result.is_error
    assert isinstance(finished["b"].error, ValueError)
    assert isinstance(finished["c"].error, TimeoutError)
    assert finished["c"].duration is not None and finished["c"].duration >= 0.05
    assert finished["d"].result is not None and finished["d"].result.is_error
    assert "unknown tool 'missing'" in finished["d"].result.text and finished["d"].error is None


async def test_hook_on_turn_error(make_session: MakeSession) -> None:
    from agentcore import LlmError

    outcomes: list[str] = []

    class Watcher:
        @hookimpl
        def on_turn_end(self, ctx: TurnContext) -> None:
            outcomes.append(f"end {ctx.turn_index}")

        @hookimpl
        async def on_turn_error(self, ctx: TurnContext, error: BaseException) -> None:
            outcomes.append(f"error {ctx.turn_index} {type(error).__name__}")

    provider = MockProvider(["fine", LlmError("overloaded", status_code=529), "streamed reply"])
    session = make_session(provider, plugins=(Watcher(),))
    await session.submit_turn("one")
    with pytest.raises(LlmError):
        await session.submit_turn("two")
    stream = session.submit_turn_stream("three")
    await anext_event(stream)
    await stream.aclose()  # abandoned before its end: nothing stored
    provider_slow = MockProvider(["slow"], delay=5)
    slow_session = make_session(provider_slow, plugins=(Watcher(),), session_id="slow")
    task = asyncio.ensure_future(slow_session.submit_turn("four"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert outcomes == [
        "end 0",
        "error 1 LlmError",
        "error 1 GeneratorExit",
        "error 0 CancelledError",
    ]
    assert [m.text for m in await session.history()] == ["one", "fine"]


async def anext_event(stream: Any) -> object:
    return await stream.__anext__()


async def test_an_aborting_on_turn_start_still_fires_on_turn_error(
    make_session: MakeSession,
) -> None:
    seen: list[str] = []

    class Opener:
        @hookimpl(tryfirst=True)
        def on_turn_start(self, ctx: TurnContext) -> None:
            ctx.extra["opened"] = True

        @hookimpl
        def on_turn_error(self, ctx: TurnContext, error: BaseException) -> None:
            seen.append(f"closed={ctx.extra.get('opened')} after {error}")

    class Refuser:
        @hookimpl(trylast=True)
        def on_turn_start(self, ctx: TurnContext) -> None:
            raise PermissionError("not today")

    session = make_session(plugins=(Opener(), Refuser()))
    with pytest.raises(PermissionError):
        await session.submit_turn("hello")
    assert seen == ["closed=True after not today"]


async def test_turn_hooks_get_the_start_time_of_the_turn(make_session: MakeSession) -> None:
    starts: list[float] = []

    class Plugin:
        @hookimpl
        def on_turn_start(self, ctx: TurnContext) -> None:
            starts.append(ctx.started_at)

        @hookimpl
        def on_turn_end(self, ctx: TurnContext) -> None:
            starts.append(ctx.started_at)

    before = time.time()
    await make_session(plugins=(Plugin(),)).submit_turn("hello")
    assert len(starts) == 2 and starts[0] == starts[1]
    assert before <= starts[0] <= time.time()


async def test_hook_check_slot_config(agent: Any) -> None:
    seen: list[tuple[int, ...]] = []

    class AtMostOnePin:
        @hookimpl
        def check_slot_config(
            self, session: AgentSession, slot: ContextSlot, config: SlotConfig
        ) -> None:
            assert config.focused is not None
            seen.append(config.focused.pinned)
            if len(config.focused.pinned) > 1:
                raise ConfigError("at most one pinned message")

    bundle = (
        AgentBuilder()
        .provider(MockProvider(["hi"]))
        .load_plugins(False)
        .plugin(AtMostOnePin())
        .build()
    )
    session = AgentSession(agent, "s", bundle, FocusedConfig())
    await session.submit_turn("hello")
    assert await session.pin(0) == (0,)
    with pytest.raises(ConfigError, match="at most one"):
        await session.pin(1)
    assert seen == [(0,), (0, 1)]
    slot = await session.get_slot()
    assert slot.config.focused is not None and slot.config.focused.pinned == (0,)


class _RecallSpecs:
    """Hook specifications of a third-party plugin (the docs/plugins.md example)."""

    @hookspecs.hookspec
    @hookspecs.hook_policy(isolate=True)
    def before_recall(self, ctx: TurnContext, query: dict[str, Any]) -> None:
        """Edit the query before the plugin recalls."""


class _RecallPlugin:
    """Declares ``before_recall`` and fires it before each model call."""

    def __init__(self) -> None:
        self.queries: list[dict[str, Any]] = []

    @hookimpl
    def register_hookspecs(self, pluginmanager: Any) -> None:
        pluginmanager.add_hookspecs(_RecallSpecs)

    @hookimpl
    async def before_model_call(self, ctx: TurnContext) -> None:
        query = {"text": ctx.messages[-1].text}
        await call_hook(ctx.session.bundle.plugin_manager.hook.before_recall, ctx=ctx, query=query)
        self.queries.append(query)


class _Lowercaser:
    """Another plugin implementing the hook the first one declared."""

    @hookimpl(optionalhook=True)
    def before_recall(self, ctx: TurnContext, query: dict[str, Any]) -> None:
        query["text"] = query["text"].lower()


async def test_hook_register_hookspecs(agent: Any) -> None:
    recall = _RecallPlugin()
    # The implementing plugin registers first: the hook is declared after it, still in time.
    bundle = (
        AgentBuilder()
        .provider(MockProvider(["ok"]))
        .load_plugins(False)
        .plugin(_Lowercaser())
        .plugin(recall)
        .build()
    )
    session = AgentSession(agent, "s", bundle)
    await session.submit_turn("WHERE Is The Config?")
    assert recall.queries == [{"text": "where is the config?"}]
    hooks = {info.name: info.hooks for info in list_plugins(bundle.plugin_manager)}
    assert any("before_recall" in names for names in hooks.values())


def test_an_optional_implementation_loads_without_the_declaring_plugin() -> None:
    AgentBuilder().provider(MockProvider()).load_plugins(False).plugin(_Lowercaser()).build()


def test_an_implementation_of_a_hook_nobody_declares_fails_the_build() -> None:
    class Stray:
        @hookimpl
        def before_recall(self, ctx: TurnContext, query: Any) -> None: ...

    with pytest.raises(ConfigError, match=r"unknown hook 'before_recall'.*optionalhook=True"):
        AgentBuilder().provider(MockProvider()).load_plugins(False).plugin(Stray()).build()
