"""Summary requests that ride the prompt cache (``SummaryConfig.request_shape``).

With the turns' own provider and model, a summary request is the last turn request as it
went out on the wire, then the model's reply, then the summary instruction: a provider
that cached the turn's prefix bills it as cache reads. With another summarizer, it is a
transcript prompt whose fixed instruction comes first, the same in every compaction.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    LlmResponse,
    Message,
    ToolRegistry,
    TurnContext,
    hookimpl,
)
from agentcore.providers import AnthropicProvider, OpenAIProvider
from agentcore.testing import MockProvider
from agentcore_autosummary import (
    ENGLISH_SUMMARY_PROMPT,
    ENGLISH_UPDATE_SUMMARY_PROMPT,
    SummaryInfo,
    get_conversation_summary,
)
from agentcore_autosummary import plugin as autosummary_plugin
from agentcore_autosummary.recalling.automatic import NEW_MESSAGE_LABEL, RECALL_LABEL

FILLER = " ".join(f"note{i}" for i in range(120))
SUMMARY = "Summary: the user keeps the keys k0 to k5 on port 8443."
# The default prompt's prefix instruction (prompt.PREFIX_SUMMARY_INSTRUCTION) starts so.
MARK = "Write a concise summary of the conversation above"
SETTINGS: dict[str, Any] = {
    "strategy": "incremental",  # a segment is asked for as a transcript of its messages
    "max_context_tokens": 3000,
    "trigger_token_ratio": 0.4,
    "keep_recent_tokens": 150,
    "debounce_turns": 1,
    "retention_check": "off",  # the summaries asserted here are the summarizer's own
    # Requests repeated byte for byte; what automatic recall changes has its own test.
    "recall": "off",
}


def _asks_for_summary(kind: str, body: dict[str, Any]) -> bool:
    last = body["messages"][-1]
    content = last["content"]
    if isinstance(content, list):
        content = " ".join(block.get("text", "") for block in content)
    return MARK in str(content)


class Wire:
    """A server in one wire format: a summary for summary requests, else a short answer."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.bodies: list[tuple[bytes, dict[str, Any]]] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append((request.content, body))
        tokens = len(request.content) // 6  # about what the local count says
        text = f"Noted {len(self.bodies)}."
        if _asks_for_summary(self.kind, body):
            text = f"Summary {len(self.bodies)}: the keys are on port 8443."
        if self.kind == "openai":
            return httpx.Response(
                200,
                json={
                    "id": "r",
                    "object": "chat.completion",
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": tokens,
                        "completion_tokens": 8,
                        "total_tokens": tokens + 8,
                    },
                },
            )
        return httpx.Response(
            200,
            json={
                "id": "msg",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": tokens, "output_tokens": 8},
            },
        )


def _without_cache_marks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_marks(v) for v in value]
    return value


def _tools() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    return tools


async def _conversation_on_the_wire(
    kind: str, settings: dict[str, Any], tools: ToolRegistry | None = None
) -> tuple[Wire, AgentSession]:
    """24 turns through a provider of ``kind`` on a :class:`Wire`, with ``settings``."""
    wire = Wire(kind)
    client = httpx.AsyncClient(transport=httpx.MockTransport(wire.handle))
    provider: Any
    if kind == "openai":
        provider = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", http_client=client)
    else:
        provider = AnthropicProvider(
            "m", base_url="http://127.0.0.1:9", api_key="k", http_client=client
        )
    builder = AgentBuilder().provider(provider).store(InMemoryStore()).load_plugins(False)
    if tools is not None:
        builder.tool_registry(tools)
    bundle = builder.plugin(autosummary_plugin).summary_config(settings).build()
    session = AgentSession(
        Agent("a", system_prompt="You are terse.", model="m"), "s", bundle, FocusedConfig()
    )
    for number in range(24):
        await session.submit_turn(f"Turn {number}: key k{number} is on port 8443. " + FILLER)
    await session.aclose()
    await client.aclose()
    return wire, session


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_summary_request_starts_with_the_previous_turn_request(kind: str) -> None:
    wire, session = await _conversation_on_the_wire(kind, SETTINGS, _tools())

    summaries = [i for i, (_, body) in enumerate(wire.bodies) if _asks_for_summary(kind, body)]
    assert len(summaries) >= 2
    assert (await get_conversation_summary(session) or "").startswith("Summary ")
    for index in summaries:
        raw_turn, turn = wire.bodies[index - 1]
        raw_summary, summary = wire.bodies[index]
        assert not _asks_for_summary(kind, turn)
        sent = _without_cache_marks(turn)
        asked = _without_cache_marks(summary)
        # The same system prompt and tools, then the turn's messages unchanged...
        assert asked.get("system") == sent.get("system")
        assert asked["tools"] == sent["tools"]
        prefix = asked["messages"][: len(sent["messages"])]
        assert json.dumps(prefix) == json.dumps(sent["messages"])
        # ...the reply the turn got, and the instruction last.
        assert len(asked["messages"]) == len(sent["messages"]) + 2
        assert asked["messages"][-2]["role"] == "assistant"
        assert asked["messages"][-1]["role"] == "user"
        if kind == "openai":  # no marks to strip: the encoded bytes themselves
            turn_messages = raw_turn.split(b'"messages":', 1)[1]
            summary_messages = raw_summary.split(b'"messages":', 1)[1]
            assert summary_messages.startswith(turn_messages.split(b"]", 1)[0][:-1])
            assert summary.get("prompt_cache_key") == turn.get("prompt_cache_key")


async def test_with_recall_a_summary_request_repeats_the_turn_request_as_stored() -> None:
    """The recalled part was for that turn request alone: the summary reads the message
    the user wrote, and the request repeats the turn's up to that message."""
    wire, _ = await _conversation_on_the_wire("openai", {**SETTINGS, "recall": "auto"})
    bodies = [body for _, body in wire.bodies]
    summaries = [i for i, body in enumerate(bodies) if _asks_for_summary("openai", body)]
    after_recall = [i for i in summaries if RECALL_LABEL in json.dumps(bodies[i - 1])]
    assert after_recall, "no summary followed a turn request with a recalled part"
    for index in after_recall:
        sent, asked = bodies[index - 1]["messages"], bodies[index]["messages"]
        assert RECALL_LABEL not in json.dumps(asked)
        said = sent[-1]["content"]
        assert asked[: len(sent) - 1] == sent[:-1]  # the cached prefix, up to that message
        own = said.split(f"{NEW_MESSAGE_LABEL}\n", 1)[1]
        assert asked[len(sent) - 1] == {"role": "user", "content": own}


class Applied:
    """Records every summary applied."""

    def __init__(self) -> None:
        self.applied: list[SummaryInfo] = []

    @hookimpl
    def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
        self.applied.append(summary)


def _session(turns: MockProvider, applied: Applied, **config: Any) -> AgentSession:
    bundle = (
        AgentBuilder()
        .provider(turns)
        .store(InMemoryStore())
        .load_plugins(False)
        .plugin(autosummary_plugin)
        .plugin(applied)
        .summary_config({**SETTINGS, **config})
        .build()
    )
    return AgentSession(
        Agent("a", system_prompt="You are terse.", model="m"), "s", bundle, FocusedConfig()
    )


async def _turns(session: AgentSession, count: int) -> None:
    for turn in range(count):
        await session.submit_turn(f"Turn {turn}: key k{turn} is on port 8443. " + FILLER)


async def test_another_summarizer_gets_a_transcript_with_the_fixed_instruction_first() -> None:
    words = [
        "apples",
        "rivers",
        "stones",
        "clouds",
        "lamps",
        "roads",
        "birds",
        "songs",
        "maps",
        "bells",
    ]

    def summarize(request: LlmRequest) -> str:
        n = len(summarizer.calls)  # each summary unlike the last, so the gate applies it
        topics = " and ".join(words[(n * 3 + i) % len(words)] for i in range(4))
        return f"Summary {n}: the user spoke of {topics}; the service is on port 8443."

    summarizer = MockProvider(responder=summarize)
    applied = Applied()
    session = _session(
        MockProvider(responder=lambda r: "Noted."), applied, summary_provider=summarizer
    )
    await _turns(session, 24)
    requests = summarizer.calls
    assert len(requests) >= 3 and len(applied.applied) >= 3
    assert all(len(request.messages) == 1 and not request.tools for request in requests)
    # The first summary has the default prompt; every update after it the update prompt,
    # whose fixed instruction comes first too and is the same from one update to the next
    # (in English: the conversation is).
    first, second, third = (request.messages[0].text for request in requests[:3])
    assert first.startswith(ENGLISH_SUMMARY_PROMPT.split("{messages}", 1)[0])
    fixed = ENGLISH_UPDATE_SUMMARY_PROMPT.split("{previous}", 1)[0]
    assert second.startswith(fixed) and third.startswith(fixed)
    assert second != third  # what follows the instruction is each compaction's own


async def test_the_shape_can_be_chosen_either_way() -> None:
    turns = MockProvider(responder=lambda r: SUMMARY if r.purpose == "summary" else "Noted.")
    session = _session(turns, Applied(), request_shape="transcript")
    await _turns(session, 8)
    (first, *_) = turns.calls_for("summary")
    assert len(first.messages) == 1 and first.messages[0].text.startswith(
        "Compress the conversation"
    )

    summarizer = MockProvider(responder=lambda r: SUMMARY)
    turns = MockProvider(responder=lambda r: "Noted.")
    session = _session(turns, Applied(), request_shape="prefix", summary_provider=summarizer)
    await _turns(session, 8)
    (first, *_) = summarizer.calls
    sent = [
        call
        for call in turns.calls_for("turn")
        if list(first.messages[: len(call.messages)]) == list(call.messages)
    ]
    assert sent and len(first.messages) == len(sent[-1].messages) + 2
    assert MARK in first.messages[-1].text


def _cut_then_good(request: LlmRequest) -> Any:
    if request.purpose != "summary":
        return "Noted."
    if MARK in request.messages[-1].text:  # the prefix-shaped request: stopped at its cap
        return LlmResponse(Message.assistant("Summary: the user"), stop_reason="max_tokens")
    return SUMMARY


async def test_the_gate_refuses_a_prefix_summary_and_a_transcript_retry_is_applied() -> None:
    turns = MockProvider(responder=_cut_then_good)
    applied = Applied()
    session = _session(turns, applied)
    await _turns(session, 8)
    summary_calls = turns.calls_for("summary")
    assert MARK in summary_calls[0].messages[-1].text
    assert len(summary_calls[1].messages) == 1  # the retry is a transcript
    (info, *_) = applied.applied
    assert info.quality is not None
    assert (info.quality.verdict, info.quality.route, info.quality.refused) == (
        "kept",
        "higher_cap",
        ("truncated",),
    )
    assert info.summary == SUMMARY
    assert info.usage is not None and info.usage.input_tokens > 0  # both calls paid


async def test_a_prefix_too_long_for_the_window_falls_back_to_a_transcript() -> None:
    turns = MockProvider(responder=lambda r: SUMMARY if r.purpose == "summary" else "Noted.")
    applied = Applied()
    # A watermark so high that the turn's prefix leaves the reply less than its reserve.
    session = _session(turns, applied, trigger_token_ratio=0.9, max_summary_tokens=700)
    await _turns(session, 14)
    calls = turns.calls_for("summary")
    assert calls and all(len(call.messages) == 1 for call in calls)
    assert applied.applied and applied.applied[0].summary == SUMMARY


@pytest.mark.parametrize(("cap", "words"), [(256, 120), (64, 30)])
async def test_the_default_prefix_instruction_asks_for_a_merged_summary_within_its_cap(
    cap: int, words: int
) -> None:
    """The default prompt's instruction: the conversation above, a word count the cap holds."""
    turns = MockProvider(responder=lambda r: SUMMARY if r.purpose == "summary" else "Noted.")
    session = _session(turns, Applied(), request_shape="prefix", max_summary_tokens=cap)
    await _turns(session, 8)
    first, *_ = turns.calls_for("summary")
    instruction = first.messages[-1].text
    assert first.max_tokens is not None and first.max_tokens <= cap
    assert instruction.startswith(MARK)
    assert f"in at most {words} words" in instruction
    assert "where they give a new value, write only the new value" in instruction
    assert "Write in the language of the conversation" in instruction
    # The messages it summarizes are the ones above it, as the turn sent them.
    assert any("key k0 is on port 8443" in m.text for m in first.messages[:-1])
    kept = re.search(r"except its last (\d+) messages", instruction)
    assert kept is None or int(kept.group(1)) < len(first.messages)


# The first request of a prefix-shaped resummary retry (prompt.PREFIX_NEW_MESSAGES_INSTRUCTION).
NEW_ONLY_MARK = "Write a concise summary of only the messages above that come after"


async def test_a_copy_is_checked_again_on_the_cached_prefix_and_merged_by_a_transcript() -> None:
    """The retry of a copy asks for the new messages alone on the same prefix, then merges."""

    def respond(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        last = request.messages[-1].text
        if NEW_ONLY_MARK in last:
            return "The new messages hold nothing more than the keys on port 8443."
        return SUMMARY  # every update: the same summary, a copy after the first

    turns = MockProvider(responder=respond)
    applied = Applied()
    session = _session(turns, applied)
    await _turns(session, 24)
    calls = turns.calls_for("summary")
    sent = turns.calls_for("turn")
    copies = [info for info in applied.applied if info.quality and info.quality.verdict == "copy"]
    assert copies, [info.quality for info in applied.applied]
    parts = [i for i, call in enumerate(calls) if NEW_ONLY_MARK in call.messages[-1].text]
    assert parts
    for index in parts:
        part = calls[index]
        # The part request is a turn request as sent, its reply, and the new instruction.
        prefixes = [call for call in sent if part.messages[: len(call.messages)] == call.messages]
        assert prefixes and len(part.messages) == len(prefixes[-1].messages) + 2
        assert part.tools == prefixes[-1].tools and part.cache_key == prefixes[-1].cache_key
        # The merge that follows is a transcript of the previous summary and that part.
        merge = calls[index + 1]
        assert len(merge.messages) == 1 and not merge.tools
        assert SUMMARY in merge.messages[0].text
        assert "nothing more than the keys" in merge.messages[0].text
    assert copies[0].quality is not None and copies[0].quality.route == "resummary"


async def test_a_prompt_of_your_own_gets_a_transcript_resummary() -> None:
    prompt = "Sum up, briefly:\n{messages}"

    def respond(request: LlmRequest) -> str:
        return SUMMARY if request.purpose == "summary" else "Noted."

    turns = MockProvider(responder=respond)
    session = _session(turns, Applied(), summary_prompt=prompt)
    await _turns(session, 24)
    calls = turns.calls_for("summary")
    assert calls
    assert not [call for call in calls if NEW_ONLY_MARK in call.messages[-1].text]


async def test_a_part_that_says_nothing_new_needs_no_merge() -> None:
    """A new-messages summary made only of the previous summary's words: the copy stands."""

    def respond(request: LlmRequest) -> str:
        if request.purpose != "summary":
            return "Noted."
        if NEW_ONLY_MARK in request.messages[-1].text:
            return "The user keeps the keys on port 8443."  # every word is in SUMMARY
        return SUMMARY

    turns = MockProvider(responder=respond)
    applied = Applied()
    session = _session(turns, applied)
    await _turns(session, 24)
    calls = turns.calls_for("summary")
    parts = [i for i, call in enumerate(calls) if NEW_ONLY_MARK in call.messages[-1].text]
    assert parts
    for index in parts:  # what follows a part is the next summary's update, not a merge
        after = calls[index + 1 : index + 2]
        assert all(MARK in call.messages[-1].text for call in after)
    copies = [info for info in applied.applied if info.quality and info.quality.verdict == "copy"]
    assert len(copies) == len(parts)
    assert all(info.summary == SUMMARY for info in copies)
