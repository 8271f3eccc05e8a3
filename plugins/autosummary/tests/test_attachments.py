"""Images and files across a summary: the newest images stay, every other one is recorded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from attachment_helpers import (
    assert_no_attachment_dropped,
    config,
    images_of,
    photo_turn,
    picture,
    recorded,
    summary_of,
)
from summary_helpers import Replies, StrictServer

from agentcore import (
    AgentSession,
    AudioBlock,
    FileBlock,
    FocusedConfig,
    ImageBlock,
    LlmRequest,
    Message,
    SqliteStore,
    TextBlock,
    ToolUseBlock,
)
from agentcore.budget import reply_reservation
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary import get_conversation_summary
from agentcore_autosummary.applying.record import RECORD_HEADING

MakeSession = Callable[..., AgentSession]


@pytest.mark.parametrize(
    ("shape", "strategy"),
    [("transcript", "incremental"), ("prefix", "incremental"), ("transcript", "segments")],
)
async def test_five_images_summarized_twice_keep_the_newest_two_and_name_the_others(
    make_session: MakeSession, shape: str, strategy: str
) -> None:
    provider = MockProvider(responder=Replies())
    settings = config(request_shape=shape, strategy=strategy)
    session = make_session(provider, summary=settings, mode=FocusedConfig())
    for number in range(5):
        await session.submit_turn(photo_turn(number))
    await session.submit_turn("What do the photos have in common?")
    assert len(provider.calls_for("summary")) == 2
    # The prefix shape sends the last turn request, its images and record included.
    second = provider.calls_for("summary")[1].messages
    assert bool(images_of(second)) == (shape == "prefix")
    request = provider.calls_for("turn")[-1].messages
    assert images_of(request) == [picture(3), picture(4)]
    summary = summary_of(request)
    assert recorded(summary) == {0: ["image"], 2: ["image"], 4: ["image"]}
    assert "- image (image/png, 120 bytes), turn 0, message 0" in summary
    assert "- image (image/png, 120 bytes), turn 2, message 4" in summary
    slot = await session.get_slot()
    assert slot.config.focused is not None
    assert slot.config.focused.pinned == (6,)  # image 3; image 4 is in the verbatim tail
    stored = await get_conversation_summary(session)
    assert stored is not None and stored.endswith("turn 2, message 4")
    await assert_no_attachment_dropped(session, provider.calls_for("turn"))


async def test_the_summarizer_never_sees_the_record(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    settings = config(strategy="incremental")  # the summarizer reads the previous summary
    session = make_session(provider, summary=settings, mode=FocusedConfig())
    for number in range(5):
        await session.submit_turn(photo_turn(number))
    second = provider.calls_for("summary")[1].messages[-1].text
    assert "summary #1" in second  # the previous summary, read back
    assert RECORD_HEADING not in second
    assert "[image]" in second  # the transcript marks the images it covers


async def test_a_record_the_summarizer_copies_is_written_once(make_session: MakeSession) -> None:
    def copying(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Nice."
        return f"The user shares photos.\n\n{RECORD_HEADING}\n- image (image/png, 1 bytes), x"

    provider = MockProvider(responder=copying)
    session = make_session(provider, summary=config(gate=False), mode=FocusedConfig())
    for number in range(3):
        await session.submit_turn(photo_turn(number))
    summary = summary_of((await session.get_slot()).load_messages())
    assert summary.count(RECORD_HEADING) == 1
    assert recorded(summary) == {0: ["image"]}


async def test_files_and_audio_are_recorded_by_name(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=config(), mode=FocusedConfig())
    report = FileBlock("Q3 report.pdf", "application/pdf", data=picture(7, 3000))
    await session.submit_turn(Message.user([TextBlock("The report."), report]))
    door = ImageBlock(media_type="image/jpeg", url="https://example.com/shots/front%20door.jpg")
    await session.submit_turn(Message.user([TextBlock("The door."), door]))
    sound = AudioBlock(picture(9, 64))
    await session.submit_turn(Message.user([TextBlock("A recording."), sound]))
    for number in range(3):
        # Long enough that their summary shrinks the context with the image kept.
        await session.submit_turn(f"Anything else, {number}? " + "Tell me about the garden. " * 10)
    assert len(provider.calls_for("summary")) == 2
    request = provider.calls_for("turn")[-1].messages
    summary = summary_of(request)
    assert recorded(summary) == {0: ["file"], 4: ["audio"]}
    assert '- file "Q3 report.pdf" (application/pdf, 3,000 bytes), turn 0, message 0' in summary
    assert "- audio (audio/wav, 64 bytes), turn 2, message 4" in summary
    # The image stays (by URL, pinned): the newest images are kept, files and audio named.
    assert [m for m in request if door in m.content]
    first = provider.calls_for("summary")[0].messages[-1].text
    assert "User: The report. [file: Q3 report.pdf]" in first
    assert "User: The door. [image: front door.jpg]" in first


async def test_keep_images_0_keeps_none_and_records_all(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=config(keep_images=0), mode=FocusedConfig())
    for number in range(5):
        await session.submit_turn(photo_turn(number))
    await session.submit_turn("And now?")
    request = provider.calls_for("turn")[-1].messages
    assert images_of(request) == [picture(4)]  # the verbatim tail's only
    assert recorded(summary_of(request)) == {0: ["image"], 2: ["image"], 4: ["image"], 6: ["image"]}
    slot = await session.get_slot()
    assert slot.config.focused is not None and slot.config.focused.pinned == ()
    await assert_no_attachment_dropped(session, provider.calls_for("turn"))


async def test_a_user_pin_is_never_removed_nor_recorded(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=config(keep_images=1), mode=FocusedConfig())
    await session.submit_turn(photo_turn(0), pin=True)
    for number in range(1, 5):
        await session.submit_turn(photo_turn(number))
    await session.submit_turn("And now?")
    slot = await session.get_slot()
    assert slot.config.focused is not None
    assert slot.config.focused.pinned == (0,)  # the user's; the tail's image is the one kept
    request = provider.calls_for("turn")[-1].messages
    assert images_of(request) == [picture(0), picture(4)]
    assert recorded(summary_of(request)) == {2: ["image"], 4: ["image"], 6: ["image"]}
    await assert_no_attachment_dropped(session, provider.calls_for("turn"))


async def test_an_image_the_user_unpins_is_recorded(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=config(), mode=FocusedConfig())
    for number in range(3):
        await session.submit_turn(photo_turn(number))
    slot = await session.get_slot()
    assert slot.config.focused is not None and slot.config.focused.pinned == (2,)
    await session.unpin(2)
    for number in range(3, 6):
        await session.submit_turn(photo_turn(number))
    summary = summary_of((await session.get_slot()).load_messages())
    assert 2 in recorded(summary)


async def test_a_resumed_session_keeps_the_record_and_the_pins(
    make_session: MakeSession, tmp_path: Path
) -> None:
    path = tmp_path / "images.db"
    async with SqliteStore(path) as store:
        first = make_session(summary=config(), mode=FocusedConfig(), store=store)
        for number in range(4):
            await first.submit_turn(photo_turn(number))
        before = (await first.get_slot()).config.focused
        await first.aclose()
    assert before is not None and before.pinned == (2,)
    provider = MockProvider(responder=Replies())
    async with SqliteStore(path) as store:
        second = make_session(provider, summary=config(), mode=FocusedConfig(), store=store)
        slot = await second.get_slot()
        assert slot.config.focused is not None and slot.config.focused.pinned == (2,)
        await second.submit_turn(photo_turn(4))
        await second.submit_turn("What is left?")
        request = provider.calls_for("turn")[-1].messages
        assert images_of(request) == [picture(3), picture(4)]
        summary = summary_of(request)
        assert recorded(summary) == {0: ["image"], 2: ["image"], 4: ["image"]}
        # The turns noted before the resume are still named.
        assert "turn 1, message 2" in summary and "turn 2, message 4" in summary
        await second.aclose()


async def test_an_image_that_does_not_fit_is_recorded_and_requests_fit_the_window(
    make_session: MakeSession,
) -> None:
    window = 4000
    server = StrictServer(window, ratio=1.0)
    # Each photo comes with a long caption (about 700 tokens with its image): the room
    # kept images have (half of what the watermark leaves) holds one of them, not two.
    caption = " ".join(f"detail{n}" for n in range(300))
    settings = config(
        max_context_tokens=window,
        trigger_token_ratio=0.9,
        keep_recent_tokens=1000,
        keep_images=3,
    )
    session = make_session(server.provider, summary=settings, mode=FocusedConfig())
    for number in range(5):
        image = ImageBlock(media_type="image/png", data=picture(number))
        await session.submit_turn(Message.user([TextBlock(f"{number}: {caption}"), image]))
    await session.submit_turn("Which one was best?")
    assert server.summaries == 2
    assert server.over_budget == [] and server.rejected == []
    slot = await session.get_slot()
    assert slot.config.focused is not None and slot.config.focused.pinned == (6,)
    request = server.calls("turn")[-1].messages
    assert images_of(request) == [picture(3), picture(4)]  # 3 wanted; one more did not fit
    assert recorded(summary_of(request)) == {0: ["image"], 2: ["image"], 4: ["image"]}
    await assert_no_attachment_dropped(session, server.calls("turn"))


async def kept_image_then_down(
    window: int, make_session: MakeSession
) -> tuple[StrictServer, AgentSession]:
    """Three photos, one summary keeping the second photo pinned; then no summary succeeds."""
    server = StrictServer(window, ratio=1.0)

    def summarize_once(request: LlmRequest) -> str:
        if server.summaries:
            raise RuntimeError("the summarizer is down")
        server.summaries += 1
        return "summary #1: photos of the garden."

    server.summary = summarize_once
    settings = config(max_context_tokens=window)
    session = make_session(server.provider, summary=settings, mode=FocusedConfig())
    for number in range(3):
        await session.submit_turn(photo_turn(number))
    slot = await session.get_slot()
    assert slot.config.focused is not None and slot.config.focused.pinned == (2,)
    return server, session


@pytest.mark.parametrize("alone", [False, True], ids=["beside-the-context", "alone"])
async def test_kept_images_give_way_to_a_request_that_does_not_fit(
    make_session: MakeSession, alone: bool
) -> None:
    window = 4000
    server, session = await kept_image_then_down(window, make_session)
    slot = await session.get_slot()
    # A message that fits only once the kept image is given up: with it, the request
    # (beside the context; or alone, the smallest request, with the system prompt and
    # the pins) is about half the kept message's tokens over the window.
    counter = get_token_counter(None)
    context = await session.load_messages()
    if alone:
        context = [context[0], slot.messages[2]]
    kept = counter.count_messages([slot.messages[2]])
    budget = window - reply_reservation(None, window)
    words = ["word"] * (budget - counter.count_messages(context) + kept // 2)
    while counter.count_messages([*context, Message.user(" ".join(words))]) > budget + kept // 2:
        words.pop()
    await session.submit_turn(" ".join(words))
    assert server.over_budget == [] and server.rejected == []
    slot = await session.get_slot()
    assert slot.config.focused is not None and slot.config.focused.pinned == ()
    request = server.calls("turn")[-1].messages
    summary = summary_of((await session.get_slot()).load_messages())
    assert recorded(summary) == {0: ["image"], 2: ["image"]}
    if not alone:
        assert images_of(request) == [picture(2)]  # the verbatim tail's
        await assert_no_attachment_dropped(session, server.calls("turn"))


async def test_an_image_in_a_tool_result_is_kept_with_its_call(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=config(keep_images=1), mode=FocusedConfig())
    call = ToolUseBlock("shot-1", "screenshot", {})
    shot = ImageBlock(data=picture(5))
    chart = FileBlock("chart.csv", "text/csv", data=picture(6, 40))
    await session.import_history(
        [
            Message.user("Take a screenshot of the dashboard. " + "It shows the load. " * 40),
            Message.assistant("", [call]),
            Message("tool", [TextBlock("Here it is."), shot, chart], tool_call_id="shot-1"),
            Message.assistant("Done. " + "The load was steady all week. " * 40),
        ]
    )
    for number in range(3):
        await session.submit_turn(f"Next step {number}.")
    slot = await session.get_slot()
    assert slot.config.focused is not None
    assert slot.config.focused.summary_covers >= 4
    assert slot.config.focused.pinned == (1, 2)  # the call with its result
    request = provider.calls_for("turn")[-1].messages
    assert [m for m in request if shot in m.content and chart in m.content]
    assert RECORD_HEADING not in summary_of(request)  # nothing left the request


async def test_an_imported_attachment_is_named_by_its_message(make_session: MakeSession) -> None:
    provider = MockProvider(responder=Replies())
    session = make_session(provider, summary=config(keep_images=0), mode=FocusedConfig())
    await session.import_history([photo_turn(1), Message.assistant("A garden.")])
    for number in range(3):
        await session.submit_turn(f"Next step {number}.")
    summary = summary_of(provider.calls_for("turn")[-1].messages)
    assert "- image (image/png, 120 bytes), message 0" in summary
