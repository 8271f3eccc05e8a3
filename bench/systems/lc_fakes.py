"""Offline LangChain chat models for the LangChain and langmem systems.

:class:`ScriptedChatModel` is a ``BaseChatModel`` that answers with a
function of the messages it receives: the scripted assistant steps for turns,
the faithful summary (:mod:`bench.facts`) for the summarizer. ``bind_tools``
returns the model itself, so ``create_agent`` can offer it tools.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from bench.conversations import Step, Turn
from bench.measure import Pair, Recorder, TokenMeter
from bench.systems.base import TurnScript

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def pair(message: BaseMessage) -> Pair:
    content = message.content
    text = content if isinstance(content, str) else json.dumps(content)
    calls = getattr(message, "tool_calls", None)
    if calls:
        rendered = " ".join(
            f"{call['name']} {json.dumps(call['args'], separators=(',', ':'))}" for call in calls
        )
        text = f"{text} {rendered}" if text else rendered
    return _ROLES.get(message.type, message.type), text


def token_counter(meter: TokenMeter) -> Callable[[Iterable[Any]], int]:
    """A LangChain ``token_counter`` that counts messages like the bench does.

    The tokens of the messages, without the 3 tokens of reply priming the bench
    adds once per request: libraries sum the counts of single messages (langmem
    counts each message on its own), and LangChain's own counters add nothing per
    list either.
    """

    def count(messages: Iterable[Any]) -> int:
        return sum(meter.message(pair(message)) for message in messages)

    return count


def step_message(step: Step) -> AIMessage:
    return AIMessage(
        content=step.text,
        tool_calls=[
            {"name": call.name, "args": call.arguments, "id": call.id, "type": "tool_call"}
            for call in step.calls
        ],
    )


def to_messages(turns: Sequence[Turn]) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    for turn in turns:
        messages.append(HumanMessage(turn.user))
        for step in turn.steps:
            messages.append(step_message(step))
            messages.extend(ToolMessage(call.output, tool_call_id=call.id) for call in step.calls)
    return messages


class ScriptedChatModel(BaseChatModel):
    """A chat model whose reply is ``respond(messages)``."""

    respond: Callable[[list[BaseMessage]], AIMessage]

    @property
    def _llm_type(self) -> str:
        return "bench-scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.respond(list(messages)))])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self


def turn_model(script: TurnScript, recorder: Recorder) -> ScriptedChatModel:
    def respond(messages: list[BaseMessage]) -> AIMessage:
        with recorder.model_time():
            recorder.request(pair(message) for message in messages)
            return step_message(script.next_step())

    return ScriptedChatModel(respond=respond)


def summary_model(recorder: Recorder, delay: float) -> ScriptedChatModel:
    def respond(messages: list[BaseMessage]) -> AIMessage:
        with recorder.model_time():
            summary = recorder.summary(pair(message) for message in messages)
            if delay:
                time.sleep(delay)
            return AIMessage(content=summary)

    return ScriptedChatModel(respond=respond)
