"""The recall tool, end to end: can a model that calls it reach each planted fact?

``python -m bench.recall_tool [--set tuning|evaluation] [--engines memory sqlite]``
replays each generated conversation of the quality bench through an
:class:`~agentcore.AgentSession` with autosummary, ``recall="tool"`` and the quality
bench's budget (2,048 tokens, summaries capped at 256), the turns answered by the
script. Its summarizer keeps no fact at all ("the user and the assistant worked on
the task") and nothing is quoted beside it (``retention_check="off"``), so what the
session still holds is the verbatim tail, and everything else must come back through
the tool. After the conversation each fact's
question is submitted as a turn to a scripted model that calls
``recall_history(query=<the question>)`` when it is offered, then stops: the turn
fails before anything is stored, so every question sees the conversation as it
ended. A fact counts as **in the request** when the request that question's turn
sends holds its final value, **by the tool** when the tool's answer does, and a tool
answer that holds a replaced or withdrawn value and not the final one counts as
**stale**. No model is involved; the choices of the search were made on the tuning
set.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    LlmRequest,
    LlmResponse,
    Message,
)
from agentcore.messages import ToolUseBlock
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary import SummaryConfig
from agentcore_autosummary.recalling.tool import RECALL_TOOL_NAME
from bench.quality.answers import question_of
from bench.quality.conversations import TOOL_NAMES, Script
from bench.quality.facts import Fact, mentions
from bench.quality.generator import KINDS, SEEDS, generate
from bench.recall import open_store
from bench.systems.agentcore_systems import _tool_uses, scripted_tools
from bench.systems.base import TurnScript

BUDGET = 2_048
CAP = 256
SUMMARY = "Summary: the user and the assistant worked on the task."


class QuestionDone(Exception):
    """Raised by the scripted model once a question's turn has what it needs."""


class Asked:
    """What one question's turn sent and what the tool answered."""

    def __init__(self) -> None:
        self.request = ""
        self.tool_answer: str | None = None


def _reply_to_question(request: LlmRequest, question: str, asked: Asked) -> LlmResponse:
    """Call the recall tool with the question when it is offered; then stop the turn."""
    last = request.messages[-1]
    if last.role == "tool":
        asked.tool_answer = last.text
        raise QuestionDone
    asked.request = "\n".join(message.text for message in request.messages)
    if RECALL_TOOL_NAME not in [spec.name for spec in request.tools]:
        raise QuestionDone  # nothing summarized yet: no tool to call
    call = ToolUseBlock("recall-1", RECALL_TOOL_NAME, {"query": question, "limit": 5})
    return LlmResponse(Message.assistant("", [call]), stop_reason="tool_use")


async def replay(script: Script, store: Any, session_id: str) -> list[tuple[Fact, Asked]]:
    """Play ``script`` into a session on ``store``, then ask each fact's question."""
    steps = TurnScript()
    asking: list[tuple[str, Asked]] = []

    def respond(request: LlmRequest) -> str | LlmResponse:
        if request.purpose == "summary":
            return SUMMARY
        if asking:
            question, asked = asking[0]
            return _reply_to_question(request, question, asked)
        step = steps.next_step()
        return LlmResponse(Message.assistant(step.text, _tool_uses(step.calls)))

    registry = scripted_tools(steps, TOOL_NAMES)
    config = SummaryConfig(
        max_context_tokens=BUDGET, max_summary_tokens=CAP, recall="tool", retention_check="off"
    )
    bundle = (
        AgentBuilder()
        .provider(MockProvider(responder=respond))
        .tool_registry(registry)
        .store(store)
        .setting("summary_config", config)
        .build()
    )
    session = AgentSession(Agent("assistant"), session_id, bundle, FocusedConfig())
    results: list[tuple[Fact, Asked]] = []
    try:
        for turn in script.turns:
            steps.start(turn)
            await session.submit_turn(turn.user)
        for fact in script.facts:
            if not fact.question:
                continue
            asked = Asked()
            asking[:] = [(question_of(fact, script.language), asked)]
            try:
                await session.submit_turn(asking[0][0])
            except Exception as exc:
                if not isinstance(exc, QuestionDone) and not isinstance(
                    exc.__cause__, QuestionDone
                ):
                    raise
            results.append((fact, asked))
        asking.clear()
    finally:
        await session.aclose()
    return results


async def run(set_name: str, engines: Sequence[str]) -> None:
    counter = get_token_counter()
    print(
        f"the recall tool, {set_name} set (seeds {SEEDS[set_name]}), a summarizer that keeps "
        f"nothing, budget {BUDGET:,} tokens"
    )
    print(
        "| engine | kind | facts | in the request | by the tool | reached | tool answers "
        "stale | tool answer tokens, mean |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for engine in engines:
            totals = [0, 0, 0, 0, 0]
            for kind in KINDS:
                counts = [0, 0, 0, 0, 0]
                tokens: list[int] = []
                for seed in SEEDS[set_name]:
                    store = await open_store(engine, Path(folder), f"tool-{engine}-{kind}-{seed}")
                    try:
                        asked = await replay(generate(kind, seed), store, f"{kind}-{seed}")
                    finally:
                        await store.close()
                    for fact, result in asked:
                        answer = result.tool_answer or ""
                        in_request = mentions(result.request, fact.value)
                        by_tool = mentions(answer, fact.value)
                        stale = not by_tool and bool(fact.old) and mentions(answer, fact.old)
                        counts = [
                            counts[0] + 1,
                            counts[1] + in_request,
                            counts[2] + (by_tool and not in_request),
                            counts[3] + (in_request or by_tool),
                            counts[4] + stale,
                        ]
                        if result.tool_answer is not None:
                            tokens.append(counter.count_text(answer))
                mean = sum(tokens) / len(tokens) if tokens else 0.0
                print(
                    f"| {engine} | {kind} | {counts[0]} | {counts[1]} | {counts[2]} | "
                    f"{counts[3]} ({counts[3] / counts[0]:.2f}) | {counts[4]} | {mean:.0f} |"
                )
                totals = [a + b for a, b in zip(totals, counts, strict=True)]
            print(
                f"| {engine} | all | {totals[0]} | {totals[1]} | {totals[2]} | "
                f"{totals[3]} ({totals[3] / totals[0]:.2f}) | {totals[4]} | |"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recall_tool", description=__doc__)
    parser.add_argument("--set", choices=sorted(SEEDS), default="tuning")
    parser.add_argument("--engines", nargs="+", default=["memory", "sqlite"])
    args = parser.parse_args(argv)
    asyncio.run(run(args.set, args.engines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
