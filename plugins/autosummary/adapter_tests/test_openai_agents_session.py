"""CompactingSession against the real OpenAI Agents SDK (offline, a fake model)."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Session, SQLiteSession

from agentcore import ConfigError, LlmRequest
from agentcore.testing import MockProvider
from agentcore_autosummary import Compactor, CompactorState, SummaryConfig
from agentcore_autosummary.adapters.openai_agents import CompactingSession

WINDOW = 2048
TOPICS = ["rivers", "stones", "clouds", "tables", "music", "light", "apples", "trees"]


def summarizer() -> MockProvider:
    def respond(request: LlmRequest) -> str:
        number = len(provider.calls)
        topics = " ".join(TOPICS[(number * 3 + i) % len(TOPICS)] for i in range(4 + number % 4))
        return f"Summary {number}: the user asked about {topics}."

    provider = MockProvider(responder=respond)
    return provider


def history(turns: int) -> list[Any]:
    items: list[Any] = []
    for turn in range(turns):
        words = " ".join(["apple river stone cloud"] * 10)
        items.append({"role": "user", "content": f"question {turn}: {words}"})
        if turn % 2:
            items.append(
                {
                    "type": "function_call",
                    "call_id": f"c{turn}",
                    "name": "lookup",
                    "arguments": '{"topic": "x"}',
                }
            )
            items.append({"type": "function_call_output", "call_id": f"c{turn}", "output": words})
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{turn}",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": f"answer {turn}: {words}", "annotations": []}
                ],
            }
        )
    return items


def compacting(stored: Any, **kwargs: Any) -> CompactingSession:
    compactor = Compactor(summarizer(), SummaryConfig(max_context_tokens=WINDOW))
    return CompactingSession(stored, compactor, **kwargs)


async def test_it_is_a_session_of_the_sdk() -> None:
    session = compacting(SQLiteSession("s"))
    assert isinstance(session, Session)  # the SDK's runtime-checkable protocol
    assert session.session_id == "s"


async def test_get_items_returns_the_summary_then_the_stored_items_verbatim() -> None:
    stored = SQLiteSession("s")
    items = history(60)
    await stored.add_items(items)
    session = compacting(stored, instructions="Be brief.", reserve_tokens=300)
    sent = await session.get_items()
    assert session.last is not None and session.last.summarized
    assert sent[0]["role"] == "user" and "Summary" in sent[0]["content"]
    tail = [item for item in sent if item in items]
    assert tail == items[len(items) - len(tail) :]  # the newest items, as stored
    calls = {item["call_id"] for item in sent if item.get("type") == "function_call"}
    results = {item["call_id"] for item in sent if item.get("type") == "function_call_output"}
    assert calls == results  # no call without its result
    # The request's size by the budget rule: the reply and the 300 reserved tokens included.
    assert session.last.tokens <= WINDOW
    assert len(await stored.get_items()) == len(items)  # the stored history stays whole
    state = session.state
    again = compacting(stored, instructions="Be brief.", reserve_tokens=300, state=state.to_json())
    assert await again.get_items() == sent  # resumed from the stored state: the same request
    assert CompactorState.from_json(again.state.to_json()).summary == state.summary


async def test_get_items_with_a_limit_reads_the_stored_items() -> None:
    stored = SQLiteSession("s")
    await stored.add_items(history(60))
    session = compacting(stored)
    assert await session.get_items(limit=3) == await stored.get_items(limit=3)


async def test_pop_and_clear_go_to_the_stored_session() -> None:
    stored = SQLiteSession("s")
    await stored.add_items(history(60))
    session = compacting(stored)
    await session.get_items()
    newest = (await stored.get_items(limit=1))[0]
    assert await session.pop_item() == newest
    await session.add_items([newest])
    assert (await stored.get_items(limit=1))[0] == newest
    await session.clear_session()
    assert await stored.get_items() == [] and session.state == CompactorState()
    assert await session.get_items() == []


async def test_a_history_shorter_than_the_summary_starts_over() -> None:
    stored = SQLiteSession("s")
    await stored.add_items(history(60))
    session = compacting(stored)
    await session.get_items()
    assert session.state.covered > 0
    await stored.clear_session()
    await stored.add_items(history(2))
    sent = await session.get_items()
    assert len(sent) == len(history(2)) and session.state.covered == 0


def test_bad_arguments_are_refused_naming_them() -> None:
    compactor = Compactor(summarizer(), SummaryConfig(max_context_tokens=WINDOW))
    with pytest.raises(ConfigError, match=r"has no get_items\(\)"):
        CompactingSession(object(), compactor)
    with pytest.raises(ConfigError, match="compactor must be a Compactor"):
        CompactingSession(SQLiteSession("s"), "compactor")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="reserve_tokens must be an int >= 0"):
        CompactingSession(SQLiteSession("s"), compactor, reserve_tokens=-5)
