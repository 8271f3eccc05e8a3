"""Long conversations through AgentSession and autosummary against a real OpenAI-compatible server.

llama-cpp-python's server runs SmolLM2-135M-Instruct with a 2,048-token
window, and the summary config says the same (``max_context_tokens=2048``).
The model is tiny and its answers are poor; what is real is its HTTP,
its streaming, its tokenizer and its context limit. Each conversation must
end with no failed turn, no request rejected for its length (seen from the
client and in the server's log) and the conversation summarized.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal

import attrs
import httpx
import pytest
from llama_server import MODEL_ALIAS, LlamaServer, log_statuses
from request_log import RecordingProvider, record_to_json, summarize_records

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    EmptyReplyError,
    FocusedConfig,
    LlmError,
    ToolRegistry,
    TurnContext,
    hookimpl,
)
from agentcore_autosummary import RecallInfo, SummaryConfig, get_conversation_summary

REPLY_CAP = 96
"""``max_tokens`` of every turn reply."""

CONVERSATION_TIMEOUT = 900.0
"""Seconds one conversation may take in all, so a hung server cannot hang the run."""

TOOL_CONVERSATION_TIMEOUT = 1800.0
"""The same for the tool conversation with recall on: 36 requests, each with what
recall found, took 13 minutes on 2 cores shared with other model servers."""

SYSTEM_PROMPT = "You are a concise assistant. Answer in two or three sentences."

TOPICS = (
    "how bread rises",
    "why the sky is blue",
    "how a bicycle stays upright",
    "what makes a good password",
    "how bees make honey",
    "why leaves change colour in autumn",
    "how a refrigerator keeps food cold",
    "what a compiler does",
    "how tides work",
    "why cats purr",
    "how vaccines train the immune system",
    "how a lighthouse lens works",
    "what causes thunder",
    "how to brew tea properly",
    "why the moon has phases",
    "how solar panels make electricity",
    "how a library catalogue is organised",
    "why rivers meander",
    "how coffee is roasted",
    "what a database index is",
    "how birds navigate when migrating",
    "why bridges have expansion joints",
    "how yeast differs from baking powder",
    "what makes sourdough sour",
    "how glaciers carve valleys",
)

FACTS = (
    "My name is Ada Lindqvist and I keep bees on a rooftop in Malmo.",
    "The order number for my new hive is HX-40417.",
    "We decided to harvest honey on the second Saturday of August.",
    "My neighbour Tomas lends me his smoker; it has a blue handle.",
)

PARAGRAPHS = (
    "Minutes of the allotment committee. The meeting opened at seven with eleven members "
    "present. The treasurer reported that the water bill rose by fourteen percent this year, "
    "mostly because two taps on the north side leaked for most of the summer before anyone "
    "noticed. The committee agreed to fit new washers and to check every tap monthly.",
    "The secretary read a letter from the council about the hedge along the lane. The hedge "
    "must be trimmed before the end of October and kept below two metres. Volunteers for the "
    "work were Ingrid, Paul and Samira, who will borrow the long trimmer from the school.",
    "Plot 23 has been vacant since March. Three people on the waiting list were offered it; "
    "the first declined because of the distance, the second did not reply, and the third, "
    "Mr Okafor, accepted and will start in the spring. He plans to grow potatoes and beans.",
    "The compost bays are full. The committee asked members to stop adding woody prunings, "
    "which take years to rot, and to use the green bin instead. A turning rota was agreed: "
    "each plot holder turns the heaps once per season, and the rota is posted on the shed.",
    "Slugs were worse than usual after the wet June. Members shared remedies: copper tape, "
    "beer traps, night patrols with a torch, and encouraging frogs with a small pond. The "
    "committee will not buy slug pellets because of the risk to hedgehogs and birds.",
    "The open day is planned for the first Sunday of September. There will be a plant sale, "
    "a cake stall, and a competition for the heaviest marrow. Posters go up in the library "
    "and the post office two weeks before. Parking will be on the school field.",
    "Any other business: the shed lock is stiff and needs oil; the rain gauge was knocked "
    "over and should be fixed to a post; and the gate sign is faded. The meeting closed at "
    "half past eight. The next meeting is on the third Thursday of next month.",
)


@attrs.define
class Conversation:
    """A session under test with its provider, and what happened to its turns."""

    session: AgentSession
    provider: RecordingProvider
    stream: bool
    failures: list[str] = attrs.field(factory=list)
    empty_replies: list[str] = attrs.field(factory=list)
    """Turns the model answered with nothing (``EmptyReplyError``): the model's doing, not
    a failure of the window; nothing of them is stored."""
    turns: int = 0
    recalls: list[RecallInfo] = attrs.field(factory=list)
    """Every recall of the conversation, as the ``after_recall`` hook saw it."""

    @hookimpl(optionalhook=True)
    def after_recall(self, ctx: TurnContext, recall: RecallInfo) -> None:
        """Keep each recall, for the figures."""
        self.recalls.append(recall)

    async def turn(self, text: str) -> None:
        """One turn on the chosen path; a provider error is counted, not raised."""
        self.turns += 1
        try:
            if self.stream:
                stream = self.session.submit_turn_stream(text)
                pieces = [event.text async for event in stream]
                assert stream.message is not None
                assert "".join(pieces) == stream.message.text
            else:
                await self.session.submit_turn(text)
        except EmptyReplyError as exc:  # SmolLM2-135M at temperature 0 sometimes says nothing
            self.empty_replies.append(f"turn {self.turns}: {exc}")
        except LlmError as exc:
            self.failures.append(f"turn {self.turns}: {type(exc).__name__}: {exc}")


def _agent_and_cap(cap: int) -> tuple[Agent, int | None]:
    """An agent whose replies are capped at ``cap`` tokens.

    Where :class:`Agent` takes ``max_tokens`` the cap goes there (so the
    budget reserves it); otherwise the provider adds it to turn requests.
    """
    if "max_tokens" in attrs.fields_dict(Agent):
        return Agent("it", system_prompt=SYSTEM_PROMPT, max_tokens=cap), None
    return Agent("it", system_prompt=SYSTEM_PROMPT), cap


class CappedProvider(RecordingProvider):
    """Adds ``max_tokens`` to turn requests that carry none (while Agent has no such field)."""

    def __init__(self, *args: Any, turn_cap: int | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.turn_cap = turn_cap

    def _capped(self, request: Any) -> Any:
        if self.turn_cap is not None and request.purpose == "turn" and request.max_tokens is None:
            return attrs.evolve(request, max_tokens=self.turn_cap)
        return request

    async def complete(self, request: Any) -> Any:
        return await super().complete(self._capped(request))

    def stream(self, request: Any) -> Any:
        return super().stream(self._capped(request))


def make_conversation(
    server: LlamaServer,
    *,
    mode: Literal["inline", "background"],
    stream: bool,
    tools: ToolRegistry | None = None,
    session_id: str,
    summary: dict[str, Any] | None = None,
    extra_body: dict[str, Any] | None = None,
    max_tool_rounds: int = 8,
    window_known: bool = True,
) -> Conversation:
    """A session on the server with autosummary (``max_context_tokens`` = the server's window).

    ``summary`` adds SummaryConfig fields; the conversation runs in a Focused slot,
    the mode whose requests a summary shrinks. ``window_known=False`` leaves
    ``max_context_tokens`` unset: the plugin must learn the window from the server.
    """
    summary = summary or {}
    agent, turn_cap = _agent_and_cap(REPLY_CAP)
    provider = CappedProvider(
        MODEL_ALIAS,
        base_url=server.base_url,
        api_key="none",
        timeout=180.0,
        max_retries=0,
        extra_body={"temperature": 0.0, "seed": 7, **(extra_body or {})},
        turn_cap=turn_cap,
    )
    builder = AgentBuilder().provider(provider).load_plugins(True).max_tool_rounds(max_tool_rounds)
    window = server.n_ctx if window_known else None
    config = SummaryConfig(max_context_tokens=window, mode=mode, **summary)
    builder.setting("summary_config", config)
    if tools is not None:
        builder.tool_registry(tools)
    session = AgentSession(agent, session_id, builder.build(), FocusedConfig())
    conversation = Conversation(session=session, provider=provider, stream=stream)
    session.bundle.plugin_manager.register(conversation)
    return conversation


def server_token_count(server: LlamaServer, text: str) -> int:
    """How many tokens the server's own tokenizer makes of ``text``."""
    root = server.base_url.removesuffix("/v1")
    reply = httpx.post(
        f"{root}/extras/tokenize/count", json={"input": text, "model": MODEL_ALIAS}, timeout=30
    )
    reply.raise_for_status()
    count: int = reply.json()["count"]
    return count


def pasted_text(server: LlamaServer, index: int, low: int = 650, high: int = 900) -> str:
    """A pasted document of ``low``..``high`` server tokens, different for each ``index``."""
    parts = [f"Please read these notes (copy {index + 1}) and remember the decisions:"]
    step = 0
    while True:
        paragraph = PARAGRAPHS[(index + step) % len(PARAGRAPHS)]
        parts.append(f"{step + 1}. {paragraph}")
        text = "\n\n".join(parts)
        count = server_token_count(server, text)
        if count >= low:
            assert count <= high, f"the pasted text came out at {count} server tokens"
            return text
        step += 1


def chat_messages(turns: int, *, offset: int = 0) -> list[str]:
    """``turns`` user messages: questions on varied topics, with facts planted early."""
    messages = []
    for i in range(turns):
        topic = TOPICS[(i + offset) % len(TOPICS)]
        if i < len(FACTS):
            messages.append(f"{FACTS[i]} Also, can you explain {topic}?")
        else:
            messages.append(f"Can you explain {topic}? Give one concrete example.")
    return messages


async def finish(
    conv: Conversation,
    server: LlamaServer,
    log_mark: int,
    figures: list[dict[str, Any]],
    name: str,
    started: float,
    allowed_refusals: int = 0,
    gated: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """Wait for background work, gather the figures, and assert the behaviour.

    ``allowed_refusals``: requests the server may refuse for their length (the
    one that teaches an unknown window). ``gated``: the summaries this tiny
    model writes may all be refused by the summary gate (SmolLM2-135M loops
    until its cap on long pasted documents): then the turns must still all be
    answered inside the window, degraded, and every summary call answered.
    """
    await conv.session.aclose()
    await conv.provider.aclose()
    slot = await conv.session.get_slot()
    summary = await get_conversation_summary(conv.session)
    focused = slot.config.focused
    assert focused is not None
    records = conv.provider.records
    log = log_statuses(server.read_log(log_mark))
    row: dict[str, Any] = {
        "test": name,
        "turns": conv.turns,
        "failed_turns": len(conv.failures),
        "empty_replies": len(conv.empty_replies),
        "recalled_turns": sum(bool(recall.found) for recall in conv.recalls),
        **summarize_records(records, server.n_ctx),
        "server_non_200": log.rejected,
        "server_statuses": dict(log.statuses),
        "server_length_lines": log.length_lines,
        "summary_replies": sum(r.purpose == "summary" and r.ok for r in records),
        "summary_covers": focused.summary_covers,
        "wall_seconds": round(time.monotonic() - started, 1),
        "turn_failures": conv.failures,
        **extra,
    }
    row["errors"] = [*conv.failures, *row["errors"]]
    row["requests_detail"] = [record_to_json(r) for r in records]
    figures.append(row)
    assert log.statuses, "the server log shows no chat completion at all"
    problems = []
    if conv.failures:
        problems.append(f"{len(conv.failures)} of {conv.turns} turns failed: {conv.failures[:2]}")
    if 2 * len(conv.empty_replies) >= conv.turns:  # the model still answers most turns
        problems.append(f"{len(conv.empty_replies)} of {conv.turns} replies were empty")
    if row["rejected_for_length"] > allowed_refusals:
        problems.append(
            f"{row['rejected_for_length']} requests rejected for their length "
            f"({row['rejected_turns']} turns, {row['rejected_summaries']} summaries)"
        )
    if log.rejected > allowed_refusals or log.length_lines > allowed_refusals:
        problems.append(
            f"the server log shows statuses {dict(log.statuses)} and "
            f"{log.length_lines} context-length errors"
        )
    refused_by_gate = gated and row["summary_replies"] > 0
    row["summaries_refused_by_the_gate"] = refused_by_gate and summary is None
    if (summary is None or focused.summary_covers == 0) and not refused_by_gate:
        problems.append(
            f"no summary was applied (summary={summary!r:.60}, covers={focused.summary_covers})"
        )
    assert not problems, "; ".join(problems)
    return row


async def bounded(work: Any, timeout: float = CONVERSATION_TIMEOUT) -> None:
    await asyncio.wait_for(work, timeout)


def plot_tools(calls: list[str]) -> ToolRegistry:
    """A registry with one tool, ``plot_holder``, that records each call in ``calls``."""
    tools = ToolRegistry(timeout=5.0)

    @tools.tool
    def plot_holder(plot: int) -> str:
        """Who holds an allotment plot.

        :param plot: The plot number.
        """
        calls.append(f"plot_holder({plot})")
        return "Mr Okafor" if plot == 23 else f"plot {plot} is held by a long-standing member"

    return tools


@pytest.mark.parametrize(
    ("mode", "stream"),
    [("inline", False), ("background", True)],
    ids=["inline-submit_turn", "background-submit_turn_stream"],
)
async def test_long_chat_stays_in_the_window(
    llama_server: LlamaServer,
    figures: list[dict[str, Any]],
    mode: Literal["inline", "background"],
    stream: bool,
    request: pytest.FixtureRequest,
) -> None:
    """20 short questions with replies capped at 96 tokens and the default SummaryConfig."""
    started = time.monotonic()
    mark = llama_server.log_size()
    conv = make_conversation(llama_server, mode=mode, stream=stream, session_id=f"chat-{mode}")

    async def run() -> None:
        for text in chat_messages(20):
            await conv.turn(text)

    await bounded(run())
    await finish(conv, llama_server, mark, figures, request.node.name, started)


@pytest.mark.parametrize(
    ("mode", "stream"),
    [("inline", True), ("background", False)],
    ids=["inline-submit_turn_stream", "background-submit_turn"],
)
async def test_pasted_documents_and_a_tool(
    llama_server: LlamaServer,
    figures: list[dict[str, Any]],
    mode: Literal["inline", "background"],
    stream: bool,
    request: pytest.FixtureRequest,
) -> None:
    """Three pasted documents of 650-900 server tokens among 12 turns, with a tool offered.

    Summaries are capped at 256 tokens here, to keep the run short on 2 cores.
    """
    started = time.monotonic()
    mark = llama_server.log_size()
    calls: list[str] = []
    tools = plot_tools(calls)

    conv = make_conversation(
        llama_server,
        mode=mode,
        stream=stream,
        tools=tools,
        session_id=f"paste-{mode}",
        summary={"max_summary_tokens": 256},
    )
    questions = chat_messages(12, offset=7)
    questions[3] = "Who holds plot 23? Use the plot_holder tool if you can."
    # Sized with the server's tokenizer now, while the server is idle: during the
    # conversation a background summary may hold it.
    for copy, turn in enumerate((1, 4, 7)):
        questions[turn] = pasted_text(llama_server, copy)

    async def run() -> None:
        for text in questions:
            await conv.turn(text)

    await bounded(run())
    await finish(
        conv, llama_server, mark, figures, request.node.name, started, gated=True, tool_calls=calls
    )


async def test_tool_calls_round_trip(
    llama_tool_server: LlamaServer, figures: list[dict[str, Any]], request: pytest.FixtureRequest
) -> None:
    """A model that calls tools (``tool_choice: "auto"``), with pasted documents, inline.

    On ``submit_turn`` only: llama-cpp-python does not stream requests with an
    automatic tool choice. The model is not required to call the tool; the
    calls it made are in the figures.
    """
    server = llama_tool_server
    started = time.monotonic()
    mark = server.log_size()
    calls: list[str] = []
    tools = plot_tools(calls)

    conv = make_conversation(
        server,
        mode="inline",
        stream=False,
        tools=tools,
        session_id="tools",
        # This chat format adds ~150 tokens to every request that no local count sees, so
        # the learned correction is high; a verbatim tail of a quarter of the window (512)
        # then leaves a summary too little to free, and the plugin refuses the turn rather
        # than overflow. A 256-token tail keeps room to summarize.
        # Automatic recall on: the recalled part must not keep this small model from
        # answering (a separate recalled message did, in 6 of 9 turns).
        summary={"max_summary_tokens": 256, "keep_recent_tokens": 256, "recall": "auto"},
        extra_body={"tool_choice": "auto"},
        max_tool_rounds=2,
    )
    questions = [
        f"Who holds plot {plot}? Use the plot_holder tool." for plot in (23, 7, 12, 31, 4, 18)
    ]
    for copy, turn in enumerate((1, 3, 5)):
        questions.insert(turn, pasted_text(server, copy + 3))

    async def run() -> None:
        for text in questions:
            await conv.turn(text)

    await bounded(run(), TOOL_CONVERSATION_TIMEOUT)
    row = await finish(conv, server, mark, figures, request.node.name, started, tool_calls=calls)
    # The questions asked again find the earlier ones, and the model still answers them
    # (finish() counts the empty replies).
    assert row["recalled_turns"] > 0, "no turn had anything recalled"


async def test_an_unknown_window_is_learned_from_the_server(
    llama_server: LlamaServer, figures: list[dict[str, Any]], request: pytest.FixtureRequest
) -> None:
    """``max_context_tokens`` unset: the model is in no table and this server has no
    window endpoint (``/props`` answers 404), so 32,000 tokens are assumed until the
    server refuses a request naming its 2,048; from then on requests are planned for it.
    """
    started = time.monotonic()
    mark = llama_server.log_size()
    conv = make_conversation(
        llama_server, mode="inline", stream=False, session_id="unknown-window", window_known=False
    )
    questions = chat_messages(14, offset=3)
    for copy, turn in enumerate((2, 6)):
        questions[turn] = pasted_text(llama_server, copy + 5)

    async def run() -> None:
        for text in questions:
            await conv.turn(text)

    await bounded(run())
    row = await finish(
        conv, llama_server, mark, figures, request.node.name, started, allowed_refusals=1
    )
    assert row["rejected_for_length"] <= 1
