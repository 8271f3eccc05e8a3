"""The LangChain converters, against the real langchain-core (skipped when it is not installed)."""

from __future__ import annotations

import sys

import pytest
from history_strategies import histories
from hypothesis import given, settings

from agentcore import ConfigError, FileBlock, ImageBlock, Message, ToolUseBlock
from agentcore.formats import from_langchain, to_langchain

lc = pytest.importorskip("langchain_core.messages", reason="langchain-core is not installed")


@settings(deadline=None, max_examples=60)
@given(histories(kinds=("image", "audio", "file")))
def test_langchain_round_trip(history: list[Message]) -> None:
    converted = to_langchain(history)
    assert from_langchain(converted) == history


def test_langchain_message_types_and_tool_calls() -> None:
    converted = to_langchain(
        [
            Message.system("Be brief."),
            Message.user("2 + 3?"),
            Message.assistant("", [ToolUseBlock("c1", "add", {"a": 2, "b": 3})]),
            Message.tool_result("c1", "boom", is_error=True),
        ]
    )
    system, human, ai, tool = converted
    assert isinstance(system, lc.SystemMessage) and system.content == "Be brief."
    assert isinstance(human, lc.HumanMessage)
    assert ai.tool_calls == [
        {"name": "add", "args": {"a": 2, "b": 3}, "id": "c1", "type": "tool_call"}
    ]
    assert isinstance(tool, lc.ToolMessage) and tool.status == "error" and tool.tool_call_id == "c1"


def test_langchain_reads_other_block_forms() -> None:
    messages = from_langchain(
        [
            lc.HumanMessage(
                content=[
                    {"type": "image_url", "image_url": {"url": "https://example.test/a.png"}},
                    {
                        "type": "image",
                        "source_type": "base64",
                        "data": "AAAA",
                        "mime_type": "image/gif",
                    },
                    {
                        "type": "file",
                        "base64": "AAAA",
                        "mime_type": "application/pdf",
                        "filename": "a.pdf",
                    },
                ]
            ),
            lc.AIMessage(
                content=[
                    {"type": "reasoning", "reasoning": "hmm"},
                    {"type": "text", "text": "Done."},
                ]
            ),
            lc.ChatMessage(role="user", content="again"),
        ]
    )
    assert messages[0].content == (
        ImageBlock(url="https://example.test/a.png"),
        ImageBlock(media_type="image/gif", data="AAAA"),
        FileBlock(name="a.pdf", media_type="application/pdf", data="AAAA"),
    )
    assert messages[1] == Message.assistant("Done.")
    assert messages[2] == Message.user("again")


def test_langchain_bad_input_names_index_and_problem() -> None:
    with pytest.raises(ConfigError, match=r"messages\[1\] is the result of tool call 'x'"):
        from_langchain(
            [lc.HumanMessage(content="hi"), lc.ToolMessage(content="r", tool_call_id="x")]
        )
    with pytest.raises(ConfigError, match=r"messages\[0\]: FunctionMessage is not supported"):
        from_langchain([lc.FunctionMessage(content="r", name="f")])


def test_a_missing_langchain_core_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    with pytest.raises(ImportError, match="pip install langchain-core"):
        to_langchain([Message.user("hi")])
