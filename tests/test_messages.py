from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentcore import (
    AudioBlock,
    FileBlock,
    ImageBlock,
    Message,
    ReasoningBlock,
    TextBlock,
    ToolUseBlock,
)
from agentcore.serialization import message_from_json, message_to_json

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
ids = st.text(min_size=1, max_size=12)
blocks = st.one_of(
    st.builds(TextBlock, st.text()),
    st.builds(
        ToolUseBlock, ids, ids, st.dictionaries(st.text(max_size=8), json_values, max_size=3)
    ),
    st.builds(ImageBlock, st.sampled_from(["image/png", "image/jpeg"]), data=st.text(min_size=1)),
    st.builds(ImageBlock, url=st.text(min_size=1)),
    st.builds(AudioBlock, st.text()),
    st.builds(
        FileBlock, st.text(min_size=1), data=st.none() | st.text(), url=st.none() | st.text()
    ),
    st.builds(
        ReasoningBlock, st.text(), signature=st.none() | st.text(), data=st.none() | st.text()
    ),
)
messages = st.one_of(
    st.builds(
        Message, st.sampled_from(["system", "user", "assistant"]), st.lists(blocks, max_size=4)
    ),
    st.builds(Message.tool_result, ids, st.text(), is_error=st.booleans()),
)


@given(messages)
def test_json_round_trip_is_lossless(message: Message) -> None:
    assert message_from_json(message_to_json(message)) == message


def test_reasoning_is_kept_apart_from_the_text() -> None:
    reply = Message(
        "assistant", [ReasoningBlock("think "), ReasoningBlock("more"), TextBlock("hi")]
    )
    assert (reply.text, reply.reasoning) == ("hi", "think more")
    assert message_from_json(message_to_json(reply)) == reply
    assert '"type":"reasoning"' in message_to_json(reply).replace(" ", "")


def test_constructors_and_text() -> None:
    assert Message.system("be brief").role == "system"
    assert Message.user("hi").text == "hi"
    reply = Message.assistant("let me look", [ToolUseBlock("c1", "search", {"q": "x"})])
    assert reply.text == "let me look"
    assert [call.name for call in reply.tool_calls] == ["search"]
    result = Message.tool_result("c1", "found", is_error=True)
    assert (result.role, result.tool_call_id, result.is_error, result.text) == (
        "tool",
        "c1",
        True,
        "found",
    )
    image = Message.user_image(url="https://example.com/cat.png", text="what is it?")
    assert image.role == "user" and image.text == "what is it?"
    assert isinstance(image.content[0], ImageBlock)
    joined = Message("assistant", [TextBlock("a"), ToolUseBlock("c", "t"), TextBlock("b")])
    assert joined.text == "ab"


def test_invalid_messages_are_refused_with_clear_errors() -> None:
    with pytest.raises(ValueError, match="role"):
        Message("robot", "hi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tool_call_id"):
        Message("tool", "result")
    with pytest.raises(ValueError, match="tool_call_id"):
        Message("user", "hi", tool_call_id="c1")
    with pytest.raises(ValueError, match="exactly one"):
        ImageBlock()
    with pytest.raises(TypeError, match="content blocks"):
        Message("user", ["not a block"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="name"):
        ToolUseBlock("c1", "")
