"""The converters: agentcore histories to and from OpenAI, Anthropic and LangChain formats."""

from __future__ import annotations

from typing import Any

import pytest
from history_strategies import histories
from hypothesis import given, settings

from agentcore import ConfigError, ImageBlock, Message, TextBlock, ToolUseBlock
from agentcore.formats import (
    check_history,
    from_anthropic,
    from_openai,
    to_anthropic,
    to_openai,
)

ROUND_TRIPS = settings(deadline=None, max_examples=60)


def tool_history() -> list[Message]:
    return [
        Message.system("Be brief."),
        Message.user("What is 2 + 3?"),
        Message.assistant("Adding.", [ToolUseBlock("call_1", "add", {"a": 2, "b": 3})]),
        Message.tool_result("call_1", "5"),
        Message.assistant("It is 5."),
    ]


# -- OpenAI -------------------------------------------------------------------------------------


@ROUND_TRIPS
@given(histories(kinds=("image", "audio", "file"), error_prefix_free=True))
def test_openai_round_trip(history: list[Message]) -> None:
    encoded = to_openai(history)
    assert from_openai(encoded) == history
    assert to_openai(from_openai(encoded)) == encoded


def test_openai_wire_shape_of_tool_calls_and_results() -> None:
    encoded = to_openai(tool_history())
    assert encoded[2]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
        }
    ]
    assert encoded[3] == {"role": "tool", "tool_call_id": "call_1", "content": "5"}


def test_openai_reads_the_forms_apps_send() -> None:
    messages = from_openai(
        [
            {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "look", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Error: no such file"},
            {"role": "assistant", "content": None, "refusal": "I cannot help with that."},
        ]
    )
    assert messages[0] == Message.system("Be brief.")
    assert messages[1].content[1] == ImageBlock(media_type="image/jpeg", data="AAAA")
    assert messages[2] == Message.assistant("", [ToolUseBlock("c1", "look", {})])
    assert messages[3] == Message.tool_result("c1", "no such file", is_error=True)
    assert messages[4].text == "I cannot help with that."


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"role": "wizard", "content": "x"}], "messages[0]: unknown role 'wizard'"),
        (
            [
                {"role": "user", "content": "x"},
                {"role": "tool", "tool_call_id": "c9", "content": "r"},
            ],
            "messages[1] is the result of tool call 'c9', but no earlier assistant message",
        ),
        (
            [{"role": "user", "content": [{"type": "video", "video": {}}]}],
            "messages[0]: content[0] is a part of unknown type 'video'",
        ),
        (
            [{"role": "user", "content": [{"type": "file", "file": {"file_id": "file-1"}}]}],
            "messages[0]: content[0] refers to an uploaded file ('file-1')",
        ),
        (
            [
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{oops"}}],
                }
            ],
            "messages[0]: the arguments of the call to tool 'f' are not valid JSON",
        ),
        (["hello"], "messages[0]: a message should be a dict, got str"),
    ],
)
def test_openai_bad_input_names_index_and_problem(messages: list[Any], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_openai(messages)
    assert problem in str(caught.value)


def test_to_openai_refuses_what_the_api_cannot_carry() -> None:
    image = Message("system", [ImageBlock(url="https://example.test/x.png")])
    with pytest.raises(ConfigError, match=r"messages\[1\]: .*only text in a system message"):
        to_openai([Message.user("hi"), image])


# -- Anthropic ----------------------------------------------------------------------------------


@ROUND_TRIPS
@given(histories(kinds=("image", "file", "text-file"), systems=2))
def test_anthropic_round_trip(history: list[Message]) -> None:
    system, turns = to_anthropic(history)
    assert from_anthropic(turns, system=system) == history
    assert to_anthropic(from_anthropic(turns, system=system)) == (system, turns)


def test_anthropic_keeps_system_apart_and_results_in_user_turns() -> None:
    system, turns = to_anthropic([*tool_history(), Message.user("Thanks")])
    assert system == "Be brief."
    assert [turn["role"] for turn in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[1]["content"][1] == {
        "type": "tool_use",
        "id": "call_1",
        "name": "add",
        "input": {"a": 2, "b": 3},
    }
    assert turns[2]["content"] == [{"type": "tool_result", "tool_use_id": "call_1", "content": "5"}]


def test_anthropic_reads_string_content_thinking_and_mixed_user_turns() -> None:
    messages = from_anthropic(
        [
            {"role": "user", "content": "Add 2 and 3"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "easy", "signature": "s"},
                    {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 2, "b": 3}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "5", "is_error": False},
                    {"type": "text", "text": "and now?"},
                ],
            },
        ],
        system=[{"type": "text", "text": "One."}, {"type": "text", "text": "Two."}],
    )
    assert messages == [
        Message.system("One."),
        Message.system("Two."),
        Message.user("Add 2 and 3"),
        Message.assistant("", [ToolUseBlock("t1", "add", {"a": 2, "b": 3})]),
        Message.tool_result("t1", "5"),
        Message.user("and now?"),
    ]


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"role": "system", "content": "x"}], "messages[0]: the Messages API keeps the system"),
        (
            [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t7"}]}],
            "messages[0] is the result of tool call 't7'",
        ),
        (
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [{"type": "wat"}]},
            ],
            "messages[1]: content[0] is a 'wat' block",
        ),
        (
            [{"role": "user", "content": [{"type": "image", "source": {"type": "file"}}]}],
            "messages[0]: content[0].source has type 'file'",
        ),
    ],
)
def test_anthropic_bad_input_names_index_and_problem(messages: list[Any], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        from_anthropic(messages)
    assert problem in str(caught.value)


def test_to_anthropic_refuses_audio_naming_the_message() -> None:
    from agentcore import AudioBlock

    with pytest.raises(ConfigError, match=r"messages\[1\]: .*takes no audio"):
        to_anthropic([Message.user("hi"), Message.user([AudioBlock(data="AAAA")])])


# -- the shared checks ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("history", "problem"),
    [
        (
            [Message.user("x"), Message.tool_result("c1", "r")],
            "messages[1] is the result of tool call 'c1'",
        ),
        (
            [
                Message.assistant("", [ToolUseBlock("c1", "f")]),
                Message.tool_result("c1", "r"),
                Message.tool_result("c1", "again"),
            ],
            "messages[2] answers tool call 'c1' a second time",
        ),
        (
            [
                Message.assistant("", [ToolUseBlock("c1", "f")]),
                Message.assistant("", [ToolUseBlock("c1", "g")]),
            ],
            "messages[1]: tool call id 'c1' was already used by messages[0]",
        ),
        (
            [Message.user([ToolUseBlock("c1", "f")])],
            "messages[0] is a user message holding a tool call",
        ),
        ([Message.user("ok"), Message.user("bad \ud83d")], "messages[1] is not valid Unicode"),
        ([Message.user("ok"), "text"], "messages[1] is not a Message"),
    ],
)
def test_check_history_names_index_and_problem(history: list[Any], problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check_history(history)
    assert problem in str(caught.value)


def test_a_call_without_its_result_is_a_valid_history() -> None:
    history = [Message.user("x"), Message.assistant("", [ToolUseBlock("c1", "f")])]
    check_history(history)
    assert from_openai(to_openai(history)) == history
    assert isinstance(history[0].content[0], TextBlock)
