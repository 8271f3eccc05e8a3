"""Text from providers made valid before it is stored: messages.valid_text and make_valid."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentcore.messages import Message, ToolUseBlock, invalid_text, make_valid, valid_text

# Any code point, surrogates included: what a decoder that passes them through can produce.
any_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF))


@given(any_text)
def test_valid_text_always_encodes_as_utf8(text: str) -> None:
    valid_text(text).encode("utf-8")


@given(st.text())
def test_valid_text_leaves_valid_text_alone(text: str) -> None:
    assert valid_text(text) is text


@given(st.text(), st.text())
def test_a_character_split_into_its_surrogate_pair_is_joined(before: str, after: str) -> None:
    emoji = "\U0001f600"
    split = emoji.encode("utf-16-le").decode("utf-16-le", "surrogatepass")
    halves = "".join(
        chr(int.from_bytes(split.encode("utf-16-le", "surrogatepass")[i : i + 2], "little"))
        for i in (0, 2)
    )
    assert len(halves) == 2
    assert valid_text(before + halves + after) == before + emoji + after


def test_lone_surrogates_become_the_replacement_character() -> None:
    assert valid_text("a\ud800b") == "a\ufffdb"
    assert valid_text("\udfff") == "\ufffd"
    assert valid_text("\ude00\ud83d") == "\ufffd\ufffd"  # the wrong order is no pair


def test_make_valid_covers_every_text_of_a_message() -> None:
    message = Message.assistant(
        "x\ud800", [ToolUseBlock("id\udc00", "name\ud801", {"k\ud802": ["v\ud803", {"n": 1}]})]
    )
    assert invalid_text(message) == (
        "content[0].text holds the surrogate code point '\\ud800' at index 1, "
        "which UTF-8 cannot encode"
    )
    fixed = make_valid(message)
    assert invalid_text(fixed) is None
    assert fixed.text == "x\ufffd"
    call = fixed.tool_calls[0]
    assert (call.id, call.name) == ("id\ufffd", "name\ufffd")
    assert call.arguments == {"k\ufffd": ["v\ufffd", {"n": 1}]}
    result = make_valid(Message.tool_result("c\ud800", "out\udfff"))
    assert (result.tool_call_id, result.text) == ("c\ufffd", "out\ufffd")
    valid = Message.user("fine")
    assert make_valid(valid) is valid
