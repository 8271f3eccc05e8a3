"""The record of attachments: its text, its state, and a property over random conversations."""

from __future__ import annotations

import asyncio
import json

import pytest
from attachment_helpers import assert_no_attachment_dropped, config, picture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    AudioBlock,
    ConfigError,
    ContentBlock,
    FileBlock,
    FocusedConfig,
    ImageBlock,
    InMemoryStore,
    Message,
    TextBlock,
)
from agentcore.testing import MockProvider
from agentcore_autosummary import AttachmentRecord, SummaryConfig, SummaryState
from agentcore_autosummary.applying.record import (
    RECORD_HEADING,
    record_text,
    with_record,
    without_record,
)
from agentcore_autosummary.keeping.attachments import MAX_STORED_RECORDS, folded
from agentcore_autosummary.keeping.state import state_from_json, state_to_json

RECORDS = (
    AttachmentRecord("image", 0, 0, None, "image/png", 1234),
    AttachmentRecord("file", 3, 1, "notes.txt", "text/plain", 12),
    AttachmentRecord("image", 5, None, "cat.jpg", "image/jpeg", None),
)


def test_the_record_names_each_attachment() -> None:
    assert record_text(RECORDS, 10).splitlines() == [
        RECORD_HEADING,
        "- image (image/png, 1,234 bytes), turn 0, message 0",
        '- file "notes.txt" (text/plain, 12 bytes), turn 1, message 3',
        '- image "cat.jpg" (image/jpeg, by URL), message 5',
    ]
    assert record_text((), 10) == ""


def test_a_long_record_counts_its_oldest_attachments() -> None:
    lines = record_text(RECORDS, 1).splitlines()
    assert lines[1:] == [
        "- 2 earlier: 1 file, 1 image, messages 0 to 3",
        '- image "cat.jpg" (image/jpeg, by URL), message 5',
    ]


def test_a_long_history_of_attachments_keeps_a_bounded_state_and_the_same_record() -> None:
    many = tuple(
        AttachmentRecord("image" if n % 3 else "file", n * 2, n, f"a{n}.png", "image/png", 10)
        for n in range(500)
    )
    stored = folded(many)
    assert len(stored) <= MAX_STORED_RECORDS + 2  # one counted record per kind
    assert sum(record.count for record in stored) == len(many)
    newer = AttachmentRecord("image", 1000, 500, "new.png", "image/png", 10)
    again_folded = folded((*stored, newer))  # the next summary folds its state again
    assert sum(record.count for record in again_folded) == len(many) + 1
    assert len(again_folded) <= MAX_STORED_RECORDS + 2
    for lines in (3, 10, 20):
        assert record_text(stored, lines) == record_text(many, lines)
    again = state_from_json(
        state_to_json(SummaryState(attachments=stored)), slot_id="default"
    ).attachments
    assert again == stored


def test_the_record_comes_off_exactly() -> None:
    summary = "The user shares photos.\n\nQuoted from the conversation:\n- A cat."
    marked = with_record(summary, RECORDS, 10)
    assert marked.startswith(summary + "\n\n" + RECORD_HEADING)
    assert without_record(marked) == summary
    assert with_record(marked, RECORDS, 10) == marked  # never two records
    assert with_record(summary, (), 10) == summary
    assert without_record(summary) == summary
    # The heading inside a sentence is the summary's own text.
    inline = f"They said {RECORD_HEADING} nothing."
    assert without_record(inline) == inline


def test_the_state_stores_the_record_and_loads_old_data() -> None:
    state = SummaryState(covered=8, attachments=RECORDS, kept=(6,), turns=((6, 3),))
    data = json.loads(json.dumps(state_to_json(state)))  # as a store keeps it
    assert state_from_json(data, slot_id="s") == state
    assert data["kept"] == [6] and data["turns"] == [[6, 3]]
    # Empty fields are not stored: a state stored before they existed looks the same.
    assert set(state_to_json(SummaryState(covered=3))) == {
        "last_summary_turn",
        "last_attempt_turn",
        "covered",
        "generation",
        "summary",
        "failures",
    }
    old = {"last_summary_turn": 2, "covered": 4, "generation": 1}
    assert state_from_json(old, slot_id="s").attachments == ()


def test_keep_images_is_checked() -> None:
    assert SummaryConfig().keep_images == 2
    assert SummaryConfig(keep_images=0).keep_images == 0
    with pytest.raises(ConfigError, match="keep_images"):
        SummaryConfig(keep_images=-1)
    with pytest.raises(ConfigError, match="keep_images"):
        SummaryConfig.coerce({"keep_images": "2"})


# A turn: what the user's message carries beside its text, and whether it is pinned.
KINDS = ["text", "image", "images", "file", "audio", "url"]
turns = st.lists(st.tuples(st.sampled_from(KINDS), st.booleans()), min_size=1, max_size=16)


def user_message(number: int, kind: str) -> Message:
    blocks: list[ContentBlock] = [TextBlock(f"Message {number}.")]
    if kind in ("image", "images"):
        blocks.append(ImageBlock(data=picture(number)))
    if kind == "images":
        blocks.append(ImageBlock(media_type="image/jpeg", data=picture(number, 77)))
    if kind == "file":
        blocks.append(FileBlock(f"f{number}.txt", "text/plain", data=picture(number, 30)))
    if kind == "audio":
        blocks.append(AudioBlock(picture(number, 50)))
    if kind == "url":
        blocks.append(ImageBlock(url=f"https://example.com/{number}.png"))
    return Message.user(blocks)


async def _run(conversation: list[tuple[str, bool]], keep: int, strategy: str, mode: str) -> None:
    provider = MockProvider(responder=lambda request: f"summary of {len(request.messages)}")
    settings_ = config(keep_images=keep, strategy=strategy, mode=mode, gate=False)
    bundle = (
        AgentBuilder()
        .provider(provider)
        .store(InMemoryStore())
        .setting("summary_config", settings_)
        .build()
    )
    session = AgentSession(Agent("a", system_prompt="sys"), "p", bundle, FocusedConfig())
    pinned: set[int] = set()
    for number, (kind, pin) in enumerate(conversation):
        if pin:
            pinned.add(2 * number)
        await session.submit_turn(user_message(number, kind), pin=pin)
        await session.aclose()  # a background summary lands before the next turn
    await session.submit_turn("The end.")
    slot = await session.get_slot()
    assert slot.config.focused is not None
    assert pinned <= set(slot.config.focused.pinned)  # the user's pins stay
    await assert_no_attachment_dropped(session, provider.calls_for("turn"))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns,
    st.integers(0, 3),
    st.sampled_from(["incremental", "segments", "full"]),
    st.sampled_from(["inline", "background"]),
)
def test_no_attachment_leaves_a_request_unrecorded(
    conversation: list[tuple[str, bool]], keep: int, strategy: str, mode: str
) -> None:
    asyncio.run(_run(conversation, keep, strategy, mode))
