from __future__ import annotations

import math

import pytest

from agentcore import Agent, LlmCycle, Message
from agentcore.budget import DEFAULT_REPLY_SHARE, reply_reservation
from agentcore.errors import ConfigError, ContextWindowExceededError
from agentcore.llm import LlmRequest
from agentcore.testing import MockProvider


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": True}, "max_tokens"),
        ({"max_tokens": 1.5}, "max_tokens"),
        ({"temperature": -0.1}, "temperature"),
        ({"temperature": 2.5}, "temperature"),
        ({"temperature": math.nan}, "temperature"),
        ({"temperature": "0.2"}, "temperature"),
        ({"stop": ["a", ""]}, "stop"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"stop": [1]}, "stop"),
        ({"token_counter": len}, "token_counter"),
    ],
)
def test_agent_refuses_bad_request_settings(settings: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        Agent("a", **settings)  # type: ignore[arg-type]


def test_agent_settings_are_normalised() -> None:
    agent = Agent("a", max_tokens=10, temperature=0, stop="END")
    assert agent.stop == ("END",)
    assert Agent("a", stop=None).stop == ()


def test_reply_reservation_is_the_cap_or_a_share_of_the_window() -> None:
    assert reply_reservation(300, 2048) == 300
    assert reply_reservation(None, 2048) == int(2048 * DEFAULT_REPLY_SHARE)
    assert reply_reservation(None, 4) == 1


async def test_cycle_retries_once_through_on_overflow() -> None:
    overflow = ContextWindowExceededError("too long", prompt_tokens=3000, limit_tokens=2048)
    provider = MockProvider([overflow, "fits now"])
    seen: list[ContextWindowExceededError] = []

    async def shrink(error: ContextWindowExceededError, added: object) -> list[Message]:
        seen.append(error)
        return [Message.user("short")]

    cycle = LlmCycle(provider, temperature=0.5, stop="X", on_overflow=shrink)
    result = await cycle.submit_messages([Message.user("long " * 100)])
    assert result.final_message.text == "fits now"
    assert seen == [overflow]
    retry: LlmRequest = provider.calls[1]
    assert [m.text for m in retry.messages] == ["short"]
    assert (retry.temperature, retry.stop) == (0.5, ("X",))

    twice = MockProvider([overflow, overflow])
    with pytest.raises(ContextWindowExceededError):
        await LlmCycle(twice, on_overflow=shrink).submit_messages([Message.user("x")])
    assert len(twice.calls) == 2


async def test_streamed_cycle_retries_once_through_on_overflow() -> None:
    overflow = ContextWindowExceededError("too long")
    provider = MockProvider([overflow, "streamed"])

    async def shrink(error: ContextWindowExceededError, added: object) -> list[Message]:
        return [Message.user("short")]

    stream = LlmCycle(provider, on_overflow=shrink).stream_with_tools([Message.user("x")])
    text = "".join([event.text async for event in stream])
    assert text == "streamed"
    assert len(provider.calls) == 2
