"""langmem: ``summarize_messages`` before every model call, as its docs show.

``SummarizationNode`` is this same function wrapped as a LangGraph node; the
bench calls the function directly in a plain agent loop (model call, scripted
tool results, model call...), keeping the whole history and the
``RunningSummary`` between calls. Settings: ``max_tokens`` is the budget,
``max_tokens_before_summary`` 75% of it, ``max_summary_tokens`` 1,024 (as
agentcore), the bench's cl100k counter.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langmem.short_term import RunningSummary, summarize_messages

from bench.conversations import Turn
from bench.settings import SYSTEM_PROMPT
from bench.systems.base import Env, System, TurnScript
from bench.systems.lc_fakes import summary_model, to_messages, token_counter, turn_model


class LangmemSystem(System):
    key: ClassVar[str] = "langmem"

    async def prepare(self, env: Env, history: Sequence[Turn]) -> None:
        self._settings = env.settings
        self._script = TurnScript()
        self._model = turn_model(self._script, env.recorder)
        self._summarizer = summary_model(env.recorder, env.summary_delay)
        self._count = token_counter(env.counting)
        self._ids = itertools.count()
        self._summary: RunningSummary | None = None
        self._messages: list[BaseMessage] = []
        self._append(SystemMessage(SYSTEM_PROMPT))
        for message in to_messages(history):
            self._append(message)

    def _append(self, message: BaseMessage) -> None:
        message.id = f"m{next(self._ids)}"
        self._messages.append(message)

    async def run_turn(self, turn: Turn) -> None:
        self._script.start(turn)
        self._append(HumanMessage(turn.user))
        settings = self._settings
        while True:
            result = summarize_messages(
                self._messages,
                running_summary=self._summary,
                model=self._summarizer,
                max_tokens=settings.budget,
                max_tokens_before_summary=settings.trigger_tokens,
                max_summary_tokens=settings.max_summary_tokens,
                token_counter=self._count,
            )
            if result.running_summary is not None:
                self._summary = result.running_summary
            reply: Any = self._model.invoke(result.messages)
            self._append(reply)
            if not reply.tool_calls:
                return
            for call in reply.tool_calls:
                self._append(ToolMessage(self._script.output(call["id"]), tool_call_id=call["id"]))
