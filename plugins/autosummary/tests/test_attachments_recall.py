"""Recall across a summary: a recalled message names its attachments; automatic recall
brings an image back."""

from __future__ import annotations

from collections.abc import Callable

from attachment_helpers import config, photo_turn, picture

from agentcore import (
    AgentSession,
    FocusedConfig,
    ImageBlock,
    LlmRequest,
    LlmResponse,
    Message,
    TextBlock,
    ToolUseBlock,
)
from agentcore.testing import MockProvider
from agentcore_autosummary.recalling.automatic import NEW_MESSAGE_LABEL, RECALL_LABEL
from agentcore_autosummary.recalling.tool import RECALL_TOOL_NAME

MakeSession = Callable[..., AgentSession]


class Model:
    """Summaries that keep nothing; a turn that calls ``recall_history`` when asked to."""

    def __init__(self) -> None:
        self.turns: list[LlmRequest] = []
        self.summaries = 0

    def __call__(self, request: LlmRequest) -> str | LlmResponse:
        if request.purpose == "summary":
            self.summaries += 1
            return f"summary #{self.summaries}: photos were shared."
        self.turns.append(request)
        last = request.messages[-1]
        offered = [spec.name for spec in request.tools]
        if last.role == "user" and last.text.startswith("Find") and RECALL_TOOL_NAME in offered:
            call = ToolUseBlock("r1", RECALL_TOOL_NAME, {"query": "ledger chart", "limit": 2})
            return LlmResponse(Message.assistant("", [call]), stop_reason="tool_use")
        if last.role == "tool":
            return f"Found it: {last.text}"
        return "Noted."


def chart() -> Message:
    image = ImageBlock(media_type="image/png", data=picture(0))
    return Message.user([TextBlock("The ledger chart shows the port numbers."), image])


async def share_and_summarize(session: AgentSession) -> None:
    """The chart, then four photos: two summaries; the chart is recorded, not kept."""
    await session.submit_turn(chart())
    for number in range(1, 5):
        await session.submit_turn(photo_turn(number))


async def test_the_tool_names_the_attachment_of_a_recalled_message(
    make_session: MakeSession,
) -> None:
    model = Model()
    settings = config(recall="tool", keep_images=1)
    session = make_session(MockProvider(responder=model), summary=settings, mode=FocusedConfig())
    await share_and_summarize(session)
    assert model.summaries == 2
    reply = await session.submit_turn("Find the chart we talked about.")
    assert reply.text == (
        "Found it: [turn 0, user] The ledger chart shows the port numbers. "
        "[attached image (image/png, 120 bytes)]"
    )


async def test_automatic_recall_brings_the_image_back(make_session: MakeSession) -> None:
    model = Model()
    settings = config(recall="auto", keep_images=1)
    session = make_session(MockProvider(responder=model), summary=settings, mode=FocusedConfig())
    await share_and_summarize(session)
    await session.submit_turn("Show me the ledger chart again.")
    blocks = [m for m in model.turns[-1].messages if m.text.startswith(RECALL_LABEL)]
    assert len(blocks) == 1
    assert "[attached image (image/png, 120 bytes), shown below]" in blocks[0].text
    # The user's message: the recalled text, its image, then the user's own words.
    assert blocks[0].role == "user"
    assert blocks[0].content[1] == ImageBlock(media_type="image/png", data=picture(0))
    assert blocks[0].content[2:] == (
        TextBlock(NEW_MESSAGE_LABEL),
        TextBlock("Show me the ledger chart again."),
    )


async def test_automatic_recall_sends_no_image_with_keep_images_0(
    make_session: MakeSession,
) -> None:
    model = Model()
    settings = config(recall="auto", keep_images=0)
    session = make_session(MockProvider(responder=model), summary=settings, mode=FocusedConfig())
    await share_and_summarize(session)
    await session.submit_turn("Show me the ledger chart again.")
    blocks = [m for m in model.turns[-1].messages if m.text.startswith(RECALL_LABEL)]
    assert len(blocks) == 1
    assert "[attached image (image/png, 120 bytes)]" in blocks[0].text
    assert [block.kind for block in blocks[0].content] == ["text"]
    assert blocks[0].text.endswith("Show me the ledger chart again.")
