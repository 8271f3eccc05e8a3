"""agentcore: the Full baseline and the autosummary plugin under three configurations.

Each runs a real :class:`AgentSession` with a :class:`ToolRegistry` (the
scripted tool calls run through it, in parallel) over an
:class:`InMemoryStore` (or, for ``agentcore-sqlite``, a :class:`SqliteStore`
in a temporary file), answered by :class:`MockProvider`.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import ClassVar

from agentcore import (
    Agent,
    AgentBuilder,
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    LlmResponse,
    MemoryStore,
    Message,
    SqliteStore,
    StreamEvent,
    ToolRegistry,
    ToolUseBlock,
)
from agentcore.slots import FULL, SlotMode
from agentcore.stores import MessageAppend, SessionState, StoreWrite
from agentcore.testing import MockProvider
from agentcore.tokens import get_token_counter
from agentcore_autosummary import SummaryConfig
from bench.conversations import TOOL_NAMES, ToolCall, Turn
from bench.measure import Pair, Recorder
from bench.settings import SYSTEM_PROMPT, Settings
from bench.systems.base import Env, System, TurnScript

SESSION_ID = "bench"


def pair(message: Message) -> Pair:
    text = message.text
    calls = message.tool_calls
    if calls:
        rendered = " ".join(
            f"{call.name} {json.dumps(dict(call.arguments), separators=(',', ':'))}"
            for call in calls
        )
        text = f"{text} {rendered}" if text else rendered
    return message.role, text


def to_messages(turns: Sequence[Turn]) -> list[Message]:
    messages: list[Message] = []
    for turn in turns:
        messages.append(Message.user(turn.user))
        for step in turn.steps:
            messages.append(Message.assistant(step.text, _tool_uses(step.calls)))
            messages.extend(Message.tool_result(call.id, call.output) for call in step.calls)
    return messages


def _tool_uses(calls: Sequence[ToolCall]) -> list[ToolUseBlock]:
    return [ToolUseBlock(call.id, call.name, call.arguments) for call in calls]


def scripted_tools(script: TurnScript, names: Sequence[str]) -> ToolRegistry:
    """The tools ``names``, each call answered with ``script``'s output for it."""

    def tool(key: str, query: str) -> str:
        """Answer a scripted tool call."""
        return script.output(key)

    registry = ToolRegistry()
    for name in names:
        registry.register(tool, name=name, description=f"The {name} tool.")
    return registry


class _RecordingProvider:
    """MockProvider behind a recorder: every request is measured, the time is the model's."""

    def __init__(self, inner: MockProvider, recorder: Recorder) -> None:
        self._inner = inner
        self._recorder = recorder
        self.last_summary = ""
        """The faithful summary of the latest summary request, which the responder returns."""

    async def complete(self, request: LlmRequest) -> LlmResponse:
        with self._recorder.model_time():
            # Made as the recorder reads them (it may not: Recorder.measures_requests).
            pairs = (pair(message) for message in request.messages)
            tools = get_token_counter(None).count_tools(request.tools)
            if request.purpose == "summary":
                self.last_summary = self._recorder.summary(
                    pairs, tool_tokens=tools, max_tokens=request.max_tokens
                )
            else:
                self._recorder.request(pairs, tool_tokens=tools, max_tokens=request.max_tokens)
            response = await self._inner.complete(request)
            self._inner.calls.clear()  # MockProvider keeps every request; the bench does not
            return response

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamEvent]:
        return self._inner.stream(request)


class _AgentcoreSystem(System):
    """An agentcore session; subclasses choose the slot mode and the summary config."""

    def mode(self) -> SlotMode:
        return FULL

    def summary_config(self, settings: Settings) -> SummaryConfig | None:
        return None

    def make_store(self) -> MemoryStore:
        return InMemoryStore()

    async def prepare(self, env: Env, history: Sequence[Turn]) -> None:
        self._delay = env.summary_delay
        self._script = TurnScript()
        provider = _RecordingProvider(MockProvider(responder=self._respond), env.recorder)
        self._provider = provider
        registry = scripted_tools(self._script, TOOL_NAMES)
        store = self.make_store()
        builder = AgentBuilder().provider(provider).tool_registry(registry).store(store)
        summary = self.summary_config(env.settings)
        if summary is not None:
            builder.setting("summary_config", summary)
        bundle = builder.build()
        agent = Agent("assistant", system_prompt=SYSTEM_PROMPT)
        mode = self.mode()
        if history:
            # Store the history through the store's API, then resume it like a user would.
            first = AgentSession(agent, SESSION_ID, bundle, mode)
            await first.set_mode(mode)
            await store.write(
                StoreWrite(
                    SESSION_ID,
                    state=SessionState(turn_index=len(history)),
                    appends={first.current_slot_id: MessageAppend(0, to_messages(history))},
                )
            )
        self._session = AgentSession(agent, SESSION_ID, bundle, mode)

    async def _respond(self, request: LlmRequest) -> LlmResponse | str:
        if request.purpose == "summary":
            if self._delay:
                await asyncio.sleep(self._delay)
            return self._provider.last_summary
        step = self._script.next_step()
        return LlmResponse(Message.assistant(step.text, _tool_uses(step.calls)))

    async def run_turn(self, turn: Turn) -> None:
        self._script.start(turn)
        await self._session.submit_turn(turn.user)

    async def finish(self) -> None:
        await self._session.aclose()


class FullSystem(_AgentcoreSystem):
    """Full slot, no plugin setting: every raw message is sent every time."""

    key: ClassVar[str] = "agentcore-full"


class SeedRuleSystem(_AgentcoreSystem):
    """The seed's rule: cumulative tokens trigger at 0.75, the whole history is summarized.

    The slot is a plain ``FocusedConfig()``, as for the other agentcore systems:
    only the summary policy differs.
    """

    key: ClassVar[str] = "agentcore-seed"

    def mode(self) -> SlotMode:
        return FocusedConfig()

    def summary_config(self, settings: Settings) -> SummaryConfig | None:
        return SummaryConfig(
            max_context_tokens=settings.budget,
            trigger="cumulative",
            strategy="full",
            max_summary_tokens=settings.max_summary_tokens,
            # The seed's ratio, and the tail the plugin kept before its defaults moved to
            # 0.5 and an eighth: this system stays the rule of the design.
            trigger_token_ratio=0.75,
            keep_recent_tokens=settings.budget // 4,
            retention_check="off",  # the seed quoted nothing
        )


class InlineSystem(_AgentcoreSystem):
    """The plugin's defaults: context trigger, incremental strategy, inline."""

    key: ClassVar[str] = "agentcore-inline"

    def mode(self) -> SlotMode:
        return FocusedConfig()

    def summary_config(self, settings: Settings) -> SummaryConfig | None:
        return SummaryConfig(
            **{
                "max_context_tokens": settings.budget,
                "max_summary_tokens": settings.max_summary_tokens,
                **settings.summary_overrides,
            }
        )


class BackgroundSystem(InlineSystem):
    """The plugin's defaults with ``mode="background"``."""

    key: ClassVar[str] = "agentcore-background"
    background: ClassVar[bool] = True

    def summary_config(self, settings: Settings) -> SummaryConfig | None:
        return SummaryConfig(
            **{
                "max_context_tokens": settings.budget,
                "max_summary_tokens": settings.max_summary_tokens,
                **settings.summary_overrides,
                "mode": "background",
            }
        )

    async def pause(self) -> None:
        # A user slower than the summary call: the pending summary completes.
        await self._session.aclose()


class SqliteSystem(InlineSystem):
    """The plugin's defaults, inline, with the session kept in a :class:`SqliteStore`."""

    key: ClassVar[str] = "agentcore-sqlite"

    def make_store(self) -> MemoryStore:
        self._folder = tempfile.TemporaryDirectory(prefix="agentcore-bench-")
        self._store = SqliteStore(Path(self._folder.name) / "bench.db")
        return self._store

    async def finish(self) -> None:
        await super().finish()
        await self._store.close()
        self._folder.cleanup()
