from __future__ import annotations

import pytest

from agentcore import LlmError, LlmRequest, LlmResponse, Message, Usage
from agentcore.llm import ResponseComplete, TextDelta, ToolCallDelta
from agentcore.messages import ToolUseBlock
from agentcore.testing import MockProvider, MockProviderExhaustedError
from agentcore.tokens import count_text_tokens, count_tokens


def _request(text: str = "hi", purpose: str = "turn") -> LlmRequest:
    return LlmRequest([Message.user(text)], purpose=purpose)


async def test_script_serves_text_responses_and_exceptions_in_order() -> None:
    canned = LlmResponse(Message.assistant("canned"), Usage(1, 1))
    provider = MockProvider(["first", canned, LlmError("down")])
    assert (await provider.complete(_request())).text == "first"
    assert await provider.complete(_request()) is canned
    with pytest.raises(LlmError, match="down"):
        await provider.complete(_request())
    with pytest.raises(MockProviderExhaustedError, match="script is used up"):
        await provider.complete(_request())
    assert len(provider.calls) == 4 and provider.remaining == 0


async def test_responder_may_be_sync_or_async_and_sees_the_request() -> None:
    async def shout(request: LlmRequest) -> str:
        return request.messages[-1].text.upper()

    assert (await MockProvider(responder=shout).complete(_request("hey"))).text == "HEY"
    echo = MockProvider(responder=lambda r: f"{r.purpose}: {r.messages[-1].text}")
    assert (await echo.complete(_request("x", "summary"))).text == "summary: x"
    assert echo.calls_for("summary") == echo.calls and echo.calls_for("turn") == []


async def test_default_usage_is_the_counted_request_and_reply() -> None:
    provider = MockProvider(["a reply of several words"])
    request = _request("a question that grows the context")
    response = await provider.complete(request)
    assert response.usage == Usage(
        count_tokens(request.messages), count_text_tokens("a reply of several words")
    )
    fixed = MockProvider(["x"], usage=Usage(10, 5))
    assert (await fixed.complete(request)).usage == Usage(10, 5)


async def test_stream_chunks_text_then_tool_calls_then_the_response() -> None:
    call = ToolUseBlock("c1", "search", {"q": "x"})
    provider = MockProvider([LlmResponse(Message.assistant("abcdefghij", [call]))], chunk_size=4)
    events = [event async for event in provider.stream(_request())]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["abcd", "efgh", "ij"]
    assert [e.call for e in events if isinstance(e, ToolCallDelta)] == [call]
    assert isinstance(events[-1], ResponseComplete)
    assert events[-1].response.message.text == "abcdefghij"


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        MockProvider(["x"], responder=lambda r: "y")
    with pytest.raises(ValueError, match="chunk_size"):
        MockProvider(chunk_size=0)
