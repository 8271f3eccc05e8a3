"""pluggy's calling semantics on the hooks agentcore awaits: wrappers, order, firstresult."""

from __future__ import annotations

import asyncio
import logging
import sys
import textwrap
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pluggy
import pytest

from agentcore import AgentBuilder, AgentSession, ConfigError, TurnContext, hookimpl
from agentcore.hook_calls import call_hook
from agentcore.testing import MockProvider

MakeSession = Callable[..., AgentSession]


async def test_a_new_style_wrapper_runs_around_async_implementations(
    make_session: MakeSession,
) -> None:
    order: list[str] = []

    class Timer:
        @hookimpl(wrapper=True)
        def on_turn_end(self, ctx: TurnContext) -> Generator[None, list[str], list[str]]:
            order.append("wrapper: before")
            results = yield
            order.append(f"wrapper: after, results={results}")
            return results

    class Slow:
        @hookimpl
        async def on_turn_end(self, ctx: TurnContext) -> str:
            order.append("impl: start")
            await asyncio.sleep(0.01)
            order.append("impl: end")
            return "slow done"

    session = make_session(plugins=(Timer(), Slow()))
    await session.submit_turn("hello")
    assert order == [
        "wrapper: before",
        "impl: start",
        "impl: end",
        "wrapper: after, results=['slow done']",
    ]


async def test_a_wrapper_sees_the_exception_of_a_hook_that_aborts_the_turn(
    make_session: MakeSession,
) -> None:
    seen: list[str] = []

    class Guard:
        @hookimpl
        async def on_turn_start(self, ctx: TurnContext) -> None:
            raise ValueError("message refused")

    class Watcher:
        @hookimpl(wrapper=True)
        def on_turn_start(self, ctx: TurnContext) -> Generator[None, object, object]:
            try:
                return (yield)
            except ValueError as exc:
                seen.append(f"saw {exc}")
                raise

    session = make_session(plugins=(Guard(), Watcher()))
    with pytest.raises(ValueError, match="message refused"):
        await session.submit_turn("hello")
    assert seen == ["saw message refused"]
    assert await session.history() == []


async def test_a_wrapper_may_handle_the_exception_as_pluggy_allows(
    make_session: MakeSession,
) -> None:
    class Guard:
        @hookimpl
        def on_turn_start(self, ctx: TurnContext) -> None:
            raise ValueError("flaky check")

    class Forgiving:
        @hookimpl(wrapper=True)
        def on_turn_start(self, ctx: TurnContext) -> Generator[None, object, object]:
            try:
                return (yield)
            except ValueError:
                return []

    session = make_session(plugins=(Guard(), Forgiving()))
    assert (await session.submit_turn("hello")).text == "ok"


async def test_an_old_style_hookwrapper_gets_the_outcome(make_session: MakeSession) -> None:
    seen: list[object] = []

    class Old:
        @hookimpl(hookwrapper=True)
        def post_turn_end(self, ctx: TurnContext) -> Generator[None, pluggy.Result[Any], None]:
            seen.append("before")
            outcome = yield
            seen.append(outcome.get_result())

    class Impl:
        @hookimpl
        async def post_turn_end(self, ctx: TurnContext) -> int:
            await asyncio.sleep(0)
            seen.append("impl")
            return ctx.turn_index

    session = make_session(plugins=(Old(), Impl()))
    await session.submit_turn("hello")
    assert seen == ["before", "impl", [0]]


async def test_a_failing_implementation_of_an_isolated_hook_is_logged_and_wrappers_still_run(
    make_session: MakeSession, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[object] = []

    class Broken:
        @hookimpl
        async def on_turn_end(self, ctx: TurnContext) -> None:
            raise RuntimeError("boom")

    class Fine:
        @hookimpl
        def on_turn_end(self, ctx: TurnContext) -> str:
            return "fine"

    class Wrapper:
        @hookimpl(wrapper=True)
        def on_turn_end(self, ctx: TurnContext) -> Generator[None, list[str], list[str]]:
            results = yield
            seen.append(results)
            return results

    session = make_session(plugins=(Broken(), Fine(), Wrapper()))
    with caplog.at_level(logging.ERROR, logger="agentcore.plugins"):
        assert (await session.submit_turn("hello")).text == "ok"
    assert seen == [["fine"]]
    assert "failed in on_turn_end (session=s1, turn=0)" in caplog.text
    assert "RuntimeError: boom" in caplog.text


async def test_a_wrapper_that_raises_on_an_isolated_hook_is_logged(
    make_session: MakeSession, caplog: pytest.LogCaptureFixture
) -> None:
    class Bad:
        @hookimpl(wrapper=True)
        def on_turn_end(self, ctx: TurnContext) -> Generator[None, object, object]:
            yield
            raise RuntimeError("teardown failed")

    session = make_session(plugins=(Bad(),))
    with caplog.at_level(logging.ERROR, logger="agentcore.plugins"):
        await session.submit_turn("hello")
    assert "RuntimeError: teardown failed" in caplog.text
    assert session.turn_index == 1


async def test_tryfirst_and_trylast_order_every_awaited_hook(make_session: MakeSession) -> None:
    order: list[str] = []

    class Last:
        @hookimpl(trylast=True)
        async def before_model_call(self, ctx: TurnContext) -> None:
            order.append("last")

    class Middle:
        @hookimpl
        def before_model_call(self, ctx: TurnContext) -> None:
            order.append("middle")

    class First:
        @hookimpl(tryfirst=True)
        async def before_model_call(self, ctx: TurnContext) -> None:
            order.append("first")

    class OuterWrapper:
        @hookimpl(wrapper=True, tryfirst=True)
        def before_model_call(self, ctx: TurnContext) -> Generator[None, object, object]:
            order.append("outer in")
            result = yield
            order.append("outer out")
            return result

    class InnerWrapper:
        @hookimpl(wrapper=True, trylast=True)
        def before_model_call(self, ctx: TurnContext) -> Generator[None, object, object]:
            order.append("inner in")
            result = yield
            order.append("inner out")
            return result

    plugins = (Last(), InnerWrapper(), First(), Middle(), OuterWrapper())
    session = make_session(plugins=plugins)
    await session.submit_turn("hello")
    assert order == [
        "outer in",
        "inner in",
        "first",
        "middle",
        "last",
        "inner out",
        "outer out",
    ]


class _PickSpec:
    @pluggy.HookspecMarker("agentcore")(firstresult=True)
    def pick(self, options: list[str]) -> str | None:
        """A firstresult hook for the call loop's own test."""


def test_firstresult_hook_takes_the_first_non_none_answer_in_pluggy_order() -> None:
    class Fallback:
        @hookimpl(trylast=True)
        def pick(self, options: list[str]) -> str | None:
            return "fallback"

    class NoOpinion:
        @hookimpl(tryfirst=True)
        def pick(self, options: list[str]) -> str | None:
            return None

    class Preferred:
        @hookimpl
        def pick(self, options: list[str]) -> str | None:
            return "preferred"

    seen: list[object] = []

    class Wrapper:
        @hookimpl(wrapper=True)
        def pick(self, options: list[str]) -> Generator[None, object, object]:
            result = yield
            seen.append(result)
            return result

    pm = AgentBuilder().provider(MockProvider()).load_plugins(False).build().plugin_manager
    pm.add_hookspecs(_PickSpec)
    for plugin in (Fallback(), NoOpinion(), Preferred(), Wrapper()):
        pm.register(plugin)
    assert pm.hook.pick(options=["a"]) == "preferred"
    assert seen == ["preferred"]


async def test_call_hook_awaits_before_taking_the_first_result() -> None:
    calls: list[str] = []

    class Empty:
        @hookimpl(tryfirst=True)
        async def pick(self, options: list[str]) -> str | None:
            calls.append("empty")
            return None

    class Chooser:
        @hookimpl
        async def pick(self, options: list[str]) -> str | None:
            calls.append("chooser")
            await asyncio.sleep(0)
            return options[-1]

    class Never:
        @hookimpl(trylast=True)
        def pick(self, options: list[str]) -> str | None:
            calls.append("never")
            return options[0]

    pm = AgentBuilder().provider(MockProvider()).load_plugins(False).build().plugin_manager
    pm.add_hookspecs(_PickSpec)
    for plugin in (Empty(), Chooser(), Never()):
        pm.register(plugin)
    assert await call_hook(pm.hook.pick, options=["a", "b"]) == "b"
    assert calls == ["empty", "chooser"]


class _AsyncGeneratorWrapper:
    @hookimpl(wrapper=True)
    async def on_turn_end(self, ctx: TurnContext) -> Any:
        yield


class _CoroutineWrapper:
    @hookimpl(wrapper=True)
    async def post_turn_end(self, ctx: TurnContext) -> None:
        return None


class _AsyncHookwrapper:
    @hookimpl(hookwrapper=True)
    async def on_turn_start(self, ctx: TurnContext) -> Any:
        yield


@pytest.mark.parametrize(
    ("plugin", "hook", "option"),
    [
        (_AsyncGeneratorWrapper(), "on_turn_end", "wrapper=True"),
        (_CoroutineWrapper(), "post_turn_end", "wrapper=True"),
        (_AsyncHookwrapper(), "on_turn_start", "hookwrapper=True"),
    ],
)
def test_an_async_wrapper_is_refused_at_build(plugin: object, hook: str, option: str) -> None:
    builder = AgentBuilder().provider(MockProvider()).load_plugins(False).plugin(plugin)
    with pytest.raises(ConfigError) as raised:
        builder.build()
    message = str(raised.value)
    kind = type(plugin)
    assert f"plugin '{kind.__module__}.{kind.__qualname__}'" in message
    assert f"the {option} implementation of {hook!r} is async" in message
    assert f"Write it as `def {hook}(...)` with one `yield`" in message


def test_an_async_implementation_of_a_synchronous_hook_is_refused_at_build() -> None:
    class AsyncSettings:
        @hookimpl
        async def register_settings(self) -> list[Any]:
            return []

    builder = AgentBuilder().provider(MockProvider()).load_plugins(False).plugin(AsyncSettings())
    with pytest.raises(ConfigError, match=r"'register_settings' is called synchronously"):
        builder.build()


async def test_a_wrapper_that_never_yields_is_an_error_on_a_hook_that_propagates(
    make_session: MakeSession,
) -> None:
    class NoYield:
        @hookimpl(wrapper=True)
        def on_turn_start(self, ctx: TurnContext) -> Generator[None, object, object]:
            if False:
                yield
            return None

    session = make_session(plugins=(NoYield(),))
    with pytest.raises(RuntimeError, match="did not yield"):
        await session.submit_turn("hello")


async def test_an_installed_plugin_with_an_async_wrapper_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "async_wrapper_plugin.py").write_text(
        textwrap.dedent(
            """
            from agentcore import hookimpl

            @hookimpl(wrapper=True)
            async def on_turn_end(ctx):
                yield
            """
        )
    )
    dist = tmp_path / "agentcore_asyncwrap-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agentcore-asyncwrap\nVersion: 1.0\n"
    )
    (dist / "entry_points.txt").write_text("[agentcore]\nasyncwrap = async_wrapper_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("AGENTCORE_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    try:
        with pytest.raises(ConfigError, match=r"plugin 'asyncwrap'.*'on_turn_end' is async"):
            AgentBuilder().provider(MockProvider()).build()
    finally:
        sys.modules.pop("async_wrapper_plugin", None)


async def test_an_argument_with_a_default_gets_the_hook_value(make_session: MakeSession) -> None:
    seen: list[object] = []

    class Plugin:
        @hookimpl
        def on_turn_error(self, ctx: TurnContext, error: BaseException | None = None) -> None:
            seen.append(error)

    session = make_session(MockProvider([ValueError("provider broke")]), plugins=(Plugin(),))
    with pytest.raises(ValueError):
        await session.submit_turn("hello")
    assert [str(error) for error in seen] == ["provider broke"]


async def test_trace_env_logs_the_awaited_hooks(
    make_session: MakeSession, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Plugin:
        @hookimpl
        async def on_turn_end(self, ctx: TurnContext) -> str:
            return "seen"

    monkeypatch.setenv("AGENTCORE_TRACE_PLUGINS", "1")
    session = make_session(plugins=(Plugin(),))
    with caplog.at_level(logging.DEBUG, logger="agentcore.plugins"):
        await session.submit_turn("hello")
    assert "hook on_turn_end returned ['seen']" in caplog.text


async def test_trace_env_is_read_when_the_bundle_is_built(
    make_session: MakeSession, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Plugin:
        @hookimpl
        async def on_turn_end(self, ctx: TurnContext) -> str:
            return "seen"

    monkeypatch.delenv("AGENTCORE_TRACE_PLUGINS", raising=False)
    session = make_session(plugins=(Plugin(),))
    monkeypatch.setenv("AGENTCORE_TRACE_PLUGINS", "1")  # too late for this bundle
    with caplog.at_level(logging.DEBUG, logger="agentcore.plugins"):
        await session.submit_turn("hello")
    assert "hook on_turn_end" not in caplog.text
