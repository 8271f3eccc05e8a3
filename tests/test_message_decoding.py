"""Stored messages decode (and encode) to the same values and errors, fast path or cattrs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentcore import ImageBlock, Message, TextBlock, ToolUseBlock, Usage
from agentcore._plain_messages import plain_message_dict, text_message
from agentcore.errors import CorruptDataError, StoreError
from agentcore.messages import Role, set_token_count, token_counts
from agentcore.serialization import (
    converter,
    message_from_dict,
    message_from_json,
    message_to_dict,
    message_to_json,
    plain_message,
)
from agentcore.stores import MessageAppend, SessionState, SqliteStore, StoreWrite, _codec

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.text())
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
ids = st.text(min_size=1, max_size=12)
calls = st.builds(ToolUseBlock, ids, ids, st.dictionaries(st.text(max_size=8), json_values))
plain_messages = st.one_of(
    st.builds(Message, st.sampled_from(["system", "user", "assistant"]), st.text()),
    st.builds(Message.assistant, st.text(), st.lists(calls, max_size=3)),
    st.builds(Message.tool_result, ids, st.text(), is_error=st.booleans()),
)
other_messages = st.builds(
    Message.user,
    st.lists(
        st.one_of(st.builds(TextBlock, st.text()), st.builds(ImageBlock, url=st.text(min_size=1))),
        min_size=1,
        max_size=3,
    ),
)


@given(plain_messages)
def test_a_plain_message_takes_the_fast_path_and_comes_back_equal(message: Message) -> None:
    data = message_to_dict(message)
    fast = plain_message(json.loads(json.dumps(data)))
    assert fast is not None
    assert fast == message == converter.structure(data, Message)
    assert message_from_json(message_to_json(message)) == message


@given(st.one_of(plain_messages, other_messages))
def test_a_text_message_is_encoded_as_the_converter_encodes_it(message: Message) -> None:
    fast = plain_message_dict(message)
    if any(not isinstance(block, TextBlock) for block in message.content):
        assert fast is None  # tool calls, images...: the converter's path
    else:
        assert fast is not None
        assert json.dumps(fast) == json.dumps(converter.unstructure(message, Message))


@given(
    st.one_of(plain_messages, other_messages),
    st.lists(st.tuples(st.text(min_size=1), st.integers(0, 2**40)), max_size=3),
)
def test_a_message_is_stored_as_the_json_of_its_dict_and_counts(
    message: Message, counts: list[tuple[str, int]]
) -> None:
    for key, count in reversed(counts):
        set_token_count(message, key, count)
    data = converter.unstructure(message, Message)
    if token_counts(message):
        data[_codec.TOKENS_FIELD] = dict(token_counts(message))
    expected = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    assert _codec.encode_message(message) == expected


@given(st.one_of(plain_messages, other_messages))
def test_every_message_round_trips_whichever_path_it_takes(message: Message) -> None:
    assert message_from_dict(json.loads(message_to_json(message))) == message


@settings(max_examples=30, deadline=None)
@given(st.lists(plain_messages, min_size=1, max_size=5))
async def test_a_store_gives_back_what_it_stored(messages: list[Message]) -> None:
    async with SqliteStore(":memory:") as store:
        await store.write(StoreWrite("s", appends={"a": MessageAppend(0, messages)}))
        assert await store.load_messages("s", "a") == messages


BAD_ROWS = [
    {"role": "robot", "content": [{"type": "text", "text": "hi"}]},
    {"role": "user", "content": [{"type": "text", "text": 5}]},
    {"role": "user", "content": [{"type": "text", "text": "hi", "extra": 1}]},
    {"role": "user", "content": [{"type": "text"}]},
    {"role": "user", "content": [{"type": "video", "text": "hi"}]},
    {"role": "user", "content": "hi"},
    {"role": "user", "content": ["hi"]},
    {"role": "user", "content": [], "surprise": True},
    {"content": [{"type": "text", "text": "hi"}]},
    {"role": "tool", "content": [{"type": "text", "text": "r"}]},
    {"role": "user", "tool_call_id": "c1", "content": []},
    {"role": "tool", "tool_call_id": 7, "content": []},
    {"role": "tool", "tool_call_id": "c1", "is_error": "yes", "content": []},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "", "name": "f"}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": 3}]},
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "c", "name": "f", "arguments": []}],
    },
    {"role": "assistant", "content": [{"type": "tool_use", "name": "f"}]},
    [{"role": "user"}],
    "user",
]


async def _load(path: Path, body: str) -> str | list[Message]:
    """What loading the slot gives with ``body`` as message 1: the messages, or the error."""
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE messages SET body = ? WHERE idx = 1", (body,))
    raw.close()
    async with SqliteStore(path) as store:
        try:
            return await store.load_messages("s", "a")
        except CorruptDataError as exc:
            return str(exc)


@pytest.mark.parametrize("row", BAD_ROWS, ids=range(len(BAD_ROWS)))
async def test_a_bad_row_gets_the_same_error_with_or_without_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: object
) -> None:
    path = tmp_path / "bad.db"
    async with SqliteStore(path) as store:
        messages = [Message.user("a"), Message.user("b"), Message.user("c")]
        await store.write(StoreWrite("s", appends={"a": MessageAppend(0, messages)}))
    body = json.dumps(row)
    fast = await _load(path, body)
    monkeypatch.setattr(
        _codec, "plain_message", lambda data, counts=(): None
    )  # cattrs for every row
    assert await _load(path, body) == fast
    # cattrs turns a few wrong types into the right one (5 into "5"); the rest is refused.
    if isinstance(fast, str):
        assert "message 1 of slot 'a' in session 's' does not match its format" in fast


usages = st.builds(
    Usage,
    st.integers(0, 2**40),
    st.integers(0, 2**40),
    st.one_of(st.integers(0, 3), st.booleans()),
    st.integers(0, 3),
)
states = st.builds(
    SessionState,
    st.one_of(st.integers(0, 2**31), st.booleans()),
    st.one_of(st.just("default"), st.text(min_size=1)),
    st.dictionaries(st.text(), usages, max_size=3),
)


@given(states)
def test_a_state_is_stored_as_the_json_of_its_converted_dict(state: SessionState) -> None:
    unstructured = converter.unstructure(state, SessionState)
    expected = json.dumps(unstructured, ensure_ascii=False, separators=(",", ":"))
    try:
        expected.encode("utf-8")
    except UnicodeEncodeError:
        with pytest.raises(StoreError, match="not valid Unicode"):
            _codec.encode_batch(StoreWrite("s", state=state))
        return
    assert _codec.encode_batch(StoreWrite("s", state=state)).state == expected


@given(st.sampled_from(["system", "user", "assistant"]), st.text())
def test_a_text_message_built_directly_equals_the_constructors(role: Role, text: str) -> None:
    built = text_message(role, text)
    assert built == Message(role, text)
    assert message_to_json(built) == message_to_json(Message(role, text))
