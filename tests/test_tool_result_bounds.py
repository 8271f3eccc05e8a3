"""Tool results are bounded at the source, and a blocking sync tool cannot hold the process."""

from __future__ import annotations

import contextvars
import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    ConfigError,
    Message,
    SqliteStore,
    ToolRegistry,
    ToolUseBlock,
)
from agentcore.llm import LlmResponse
from agentcore.testing import MockProvider
from agentcore.tools import DEFAULT_MAX_RESULT_CHARS, ToolCallHooks

BIG = 50 * 1024 * 1024
NOTICE = re.compile(r"tool result cut: ([\d,]+) of its ([\d,]+) characters were left out")


def calls(*names: str) -> LlmResponse:
    """One assistant reply calling each of ``names`` without arguments."""
    blocks = [ToolUseBlock(f"c{index}", name, {}) for index, name in enumerate(names)]
    return LlmResponse(Message.assistant("", blocks), stop_reason="tool_use")


def tool_texts(messages: Any) -> list[str]:
    return [message.text for message in messages if message.role == "tool"]


def parts(text: str) -> tuple[str, str, str]:
    """The head, the notice and the tail of a cut result."""
    start = text.index("\n\n[... tool result cut")
    end = text.index("...]\n\n", start) + len("...]\n\n")
    return text[:start], text[start:end], text[end:]


def omitted(text: str) -> tuple[int, int]:
    match = NOTICE.search(text)
    assert match is not None, text[:300]
    return int(match[1].replace(",", "")), int(match[2].replace(",", ""))


async def test_a_50_mb_result_is_stored_and_sent_within_the_default_limit(tmp_path: Path) -> None:
    registry = ToolRegistry()
    big = "a" * (BIG // 2) + "b" * (BIG // 2)

    @registry.tool
    def dump() -> str:
        """Return a huge log."""
        return big

    provider = MockProvider([calls("dump"), "done"])
    path = tmp_path / "s.db"
    async with SqliteStore(path) as store:
        bundle = (
            AgentBuilder()
            .provider(provider)
            .tool_registry(registry)
            .store(store)
            .load_plugins(False)
            .build()
        )
        await AgentSession(Agent("a"), "s", bundle).submit_turn("go")
        # What the store holds, read back by a new session over the same store.
        stored = tool_texts(await AgentSession(Agent("a"), "s", bundle).history())
    [sent] = tool_texts(provider.calls[1].messages)
    assert len(stored) == 1
    assert stored[0] == sent
    assert len(sent) <= DEFAULT_MAX_RESULT_CHARS
    assert sent.startswith("a" * 1000) and sent.endswith("b" * 1000)
    left_out, total = omitted(sent)
    assert total == BIG
    head, _, tail = parts(sent)
    assert set(head) == {"a"} and set(tail) == {"b"}
    assert len(head) + len(tail) + left_out == BIG
    assert path.stat().st_size < 5 * 1024 * 1024


async def test_a_large_dict_result_is_sent_as_cut_json() -> None:
    registry = ToolRegistry(max_result_chars=2_000)

    @registry.tool
    async def rows() -> dict[str, Any]:
        """Return many rows."""
        return {"rows": [{"id": index, "name": f"row {index}"} for index in range(200_000)]}

    provider = MockProvider([calls("rows"), "done"])
    bundle = AgentBuilder().provider(provider).tool_registry(registry).load_plugins(False).build()
    await AgentSession(Agent("a"), "s", bundle).submit_turn("go")
    [sent] = tool_texts(provider.calls[1].messages)
    assert len(sent) <= 2_000
    assert sent.startswith('{"rows": [{"id": 0, "name": "row 0"}')
    assert sent.endswith('"name": "row 199999"}]}')
    full = json.dumps({"rows": [{"id": index, "name": f"row {index}"} for index in range(200_000)]})
    assert omitted(sent)[1] == len(full)


async def test_the_cut_keeps_the_head_and_tail_and_says_how_much_was_left_out() -> None:
    registry = ToolRegistry(max_result_chars=1_000)
    text = "HEAD-" + "".join(f"{index:07d}" for index in range(10_000)) + "-TAIL"

    @registry.tool
    def log() -> str:
        """Return a log."""
        return text

    result = await registry.call(ToolUseBlock("c1", "log", {}))
    cut = result.text
    assert not result.is_error
    assert len(cut) == 1_000
    left_out, total = omitted(cut)
    assert total == len(text)
    head, _, tail = parts(cut)
    assert text.startswith(head) and head.startswith("HEAD-")
    assert text.endswith(tail) and tail.endswith("-TAIL")
    assert len(head) + len(tail) + left_out == len(text)
    assert "the limit is 1,000" in cut


async def test_a_result_within_the_limit_and_no_limit_are_sent_whole() -> None:
    registry = ToolRegistry(max_result_chars=None)

    @registry.tool
    def log() -> str:
        """Return a log."""
        return "x" * 300_000

    assert (await registry.call(ToolUseBlock("c1", "log", {}))).text == "x" * 300_000
    exact = ToolRegistry(max_result_chars=300_000)
    exact.register(log)
    assert (await exact.call(ToolUseBlock("c1", "log", {}))).text == "x" * 300_000


async def test_a_tools_own_limit_overrides_the_registrys() -> None:
    registry = ToolRegistry(max_result_chars=1_000)

    @registry.tool(max_result_chars=300)
    def small() -> str:
        """Small."""
        return "s" * 10_000

    @registry.tool(max_result_chars=5_000)
    def large() -> str:
        """Large."""
        return "l" * 10_000

    @registry.tool
    def plain() -> str:
        """Plain."""
        return "p" * 10_000

    registry.register(lambda: "r" * 10_000, name="registered", max_result_chars=400)
    sizes = {
        name: len((await registry.call(ToolUseBlock("c", name, {}))).text)
        for name in ("small", "large", "plain", "registered")
    }
    assert sizes == {"small": 300, "large": 5_000, "plain": 1_000, "registered": 400}
    assert registry["small"].max_result_chars == 300
    assert registry.limit_of(registry["plain"]) == 1_000


async def test_hooks_see_the_cut_result_and_error_texts_are_bounded() -> None:
    registry = ToolRegistry(max_result_chars=500)

    @registry.tool
    def log() -> str:
        """Return a log."""
        return "x" * 100_000

    @registry.tool
    def fail() -> str:
        """Fail loudly."""
        raise RuntimeError("y" * 100_000)

    seen: list[str] = []

    async def before(info: Any) -> None:
        pass

    async def after(info: Any) -> None:
        seen.append(info.result.text)

    hooks = ToolCallHooks(before, after)
    results = await registry.call_all(
        [ToolUseBlock("c1", "log", {}), ToolUseBlock("c2", "fail", {})], hooks=hooks
    )
    assert [len(text) for text in seen] == [500, 500]
    assert [message.is_error for message in results] == [False, True]
    assert results[1].text.startswith("tool 'fail' raised RuntimeError: yyy")
    assert omitted(results[1].text)[0] > 99_000


@pytest.mark.parametrize("value", [0, -1, 255, True, 1.5, "1000", float("inf")])
def test_bad_limits_are_refused_naming_the_field_and_value(value: Any) -> None:
    words = r"max_result_chars must be an int >= 256 \(characters\) or None, got "
    shown = re.escape(repr(value))
    with pytest.raises(ConfigError, match=rf"^ToolRegistry {words}{shown}$"):
        ToolRegistry(max_result_chars=value)
    registry = ToolRegistry()
    with pytest.raises(ConfigError, match=rf"^{words}{shown}$"):
        registry.register(lambda: "", name="t", max_result_chars=value)
    with pytest.raises(ConfigError, match=rf"^{words}{shown}$"):
        registry.tool(max_result_chars=value)
    assert len(registry) == 0


async def test_a_sync_tool_sees_the_callers_context_variables() -> None:
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id")
    registry = ToolRegistry()

    @registry.tool
    def who() -> str:
        """Say which request this is."""
        return request_id.get("unset")

    request_id.set("r-42")
    assert (await registry.call(ToolUseBlock("c1", "who", {}))).text == "r-42"


EXIT_SCRIPT = """
import asyncio, time
from agentcore import Agent, AgentBuilder, AgentSession, Message, ToolRegistry, ToolUseBlock
from agentcore.llm import LlmResponse
from agentcore.testing import MockProvider

registry = ToolRegistry(timeout=1.0)

@registry.tool
def stuck() -> str:
    \"\"\"Block for a long time.\"\"\"
    time.sleep(30)
    return "finally"

call = LlmResponse(Message.assistant("", [ToolUseBlock("c1", "stuck", {})]), stop_reason="tool_use")
provider = MockProvider([call, "gave up"])
bundle = AgentBuilder().provider(provider).tool_registry(registry).load_plugins(False).build()
reply = asyncio.run(AgentSession(Agent("a"), "s", bundle).submit_turn("go"))
print(reply.text, "|", provider.calls[1].messages[-1].text, flush=True)
"""


def test_a_timed_out_blocking_sync_tool_does_not_keep_the_process_alive() -> None:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(EXIT_SCRIPT)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    assert "gave up | tool 'stuck' did not finish within 1 seconds" in done.stdout
    assert elapsed < 20, f"the process took {elapsed:.1f} s to exit"


async def test_a_large_value_is_sent_as_the_json_json_dumps_writes() -> None:
    class Label:
        def __str__(self) -> str:
            return "label"

    value: dict[Any, Any] = {
        "rows": [
            {"id": index, "name": 'é\u2028"', 1: 1.5, None: [True, None], "tag": Label()}
            for index in range(3_000)
        ],
        "pairs": [(index, -index) for index in range(3_000)],
    }
    expected = json.dumps(value, ensure_ascii=False, default=str)
    whole = ToolRegistry(max_result_chars=None)
    whole.register(lambda: value, name="rows")
    assert (await whole.call(ToolUseBlock("c1", "rows", {}))).text == expected
    cut = ToolRegistry(max_result_chars=5_000)
    cut.register(lambda: value, name="rows")
    text = (await cut.call(ToolUseBlock("c1", "rows", {}))).text
    head, _, tail = parts(text)
    assert len(text) == 5_000
    assert expected.startswith(head) and expected.endswith(tail)
    assert omitted(text) == (len(expected) - len(head) - len(tail), len(expected))


async def test_a_value_that_is_not_json_gives_an_error_result() -> None:
    registry = ToolRegistry()
    loop: list[Any] = list(range(5_000))
    loop.append(loop)
    registry.register(lambda: loop, name="loop")
    result = await registry.call(ToolUseBlock("c1", "loop", {}))
    assert result.is_error
    assert (
        result.text == "tool 'loop' returned a value that is not JSON: Circular reference detected"
    )
