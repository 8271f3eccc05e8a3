"""A prefix that stays put: between two summaries, each turn request extends the one before.

Providers bill a prompt prefix they have cached at a fraction of the price, so a request
that repeats the previous request byte for byte (system prompt, tools, summary, pins, the
verbatim messages) and only appends what the turn added is billed mostly as cache reads.
A 300-turn session with tools, pins and background summaries runs through the real OpenAI
and Anthropic codecs (an httpx mock transport records each wire body); every turn request
must extend the previous one, except right where a summary was applied.
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
    ToolRegistry,
    TurnContext,
    hookimpl,
)
from agentcore.providers import AnthropicProvider, OpenAIProvider
from agentcore.testing import MockProvider
from agentcore_autosummary import SummaryInfo, SummaryRequestInfo
from agentcore_autosummary import plugin as autosummary_plugin
from agentcore_autosummary.recalling.automatic import NEW_MESSAGE_LABEL, RECALL_LABEL

TURNS = 300
TOOL_EVERY = 7
PIN_EVERY = 40


def _text_of(body: dict[str, Any]) -> str:
    return json.dumps(body.get("messages", []))


class WireServer:
    """Answers turn requests in one wire format and records every body it was sent."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.bodies: list[dict[str, Any]] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        n = len(self.bodies)
        wants_tool = n % TOOL_EVERY == 0 and not self._ends_with_tool_result(body)
        tokens = len(_text_of(body)) // 4 + 20
        if self.kind == "openai":
            message: dict[str, Any] = {"role": "assistant", "content": f"Answer {n}: noted."}
            finish = "stop"
            if wants_tool:
                call = {"name": "lookup", "arguments": json.dumps({"key": f"k{n}"})}
                message = {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": f"call_{n}", "type": "function", "function": call}],
                }
                finish = "tool_calls"
            reply = {
                "id": f"r{n}",
                "object": "chat.completion",
                "model": "m",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {
                    "prompt_tokens": tokens,
                    "completion_tokens": 8,
                    "total_tokens": tokens + 8,
                },
            }
        else:
            content: list[dict[str, Any]] = [{"type": "text", "text": f"Answer {n}: noted."}]
            stop = "end_turn"
            if wants_tool:
                content = [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{n}",
                        "name": "lookup",
                        "input": {"key": f"k{n}"},
                    }
                ]
                stop = "tool_use"
            reply = {
                "id": f"msg_{n}",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": content,
                "stop_reason": stop,
                "usage": {"input_tokens": tokens, "output_tokens": 8},
            }
        return httpx.Response(200, json=reply)

    def _ends_with_tool_result(self, body: dict[str, Any]) -> bool:
        last = body["messages"][-1]
        if self.kind == "openai":
            return bool(last["role"] == "tool")
        content = last.get("content")
        return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def _without_cache_marks(value: Any) -> Any:
    """``value`` without Anthropic's ``cache_control`` marks, which move every turn by design."""
    if isinstance(value, dict):
        return {k: _without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_marks(v) for v in value]
    return value


def _stable_parts(kind: str, body: dict[str, Any]) -> tuple[Any, list[Any]]:
    """(what must stay equal, the message list that must only grow) of one wire body."""
    body = _without_cache_marks(body)
    if kind == "openai":
        return body.get("tools"), body["messages"]
    return (body.get("system"), body.get("tools")), body["messages"]


def _said(message: dict[str, Any]) -> bool:
    """Whether ``message`` is a user's message, not a tool result."""
    content = message.get("content")
    results = isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)
    return bool(message["role"] == "user" and not results)


def _without_recalled(messages: list[Any]) -> tuple[list[Any], bool]:
    """``messages`` with automatic recall's part taken out of the message it opens.

    Asserts that message is the turn's own, the last one a user said; also returns
    whether there was one.
    """
    out = list(messages)
    for at, message in enumerate(messages):
        content = message.get("content")
        if RECALL_LABEL not in json.dumps(content, ensure_ascii=False):
            continue
        assert at == max(i for i, m in enumerate(messages) if _said(m))
        own: Any
        if isinstance(content, str):
            own = content.split(f"\n\n{NEW_MESSAGE_LABEL}\n", 1)[1]
        elif len(content) == 1:
            own = [{**content[0], "text": content[0]["text"].split(f"{NEW_MESSAGE_LABEL}\n")[1]}]
        else:
            label = next(i for i, b in enumerate(content) if b.get("text") == NEW_MESSAGE_LABEL)
            own = content[label + 1 :]
        out[at] = {**message, "content": own}
        return out, True
    return out, False


class SummaryWatch:
    """Records at which request each summary started, and the first request made after it.

    A background summary may be applied while a turn's request is on its way (made
    before, sent after): the first request that can carry it is the next one the session
    prepares, seen by ``before_model_call``.
    """

    def __init__(self, server: WireServer) -> None:
        self.server = server
        self.spans: list[tuple[int, int]] = []
        self._started = 0
        self._applied = False

    @hookimpl
    def before_summary(self, ctx: TurnContext, request: SummaryRequestInfo) -> None:
        self._started = len(self.server.bodies)

    @hookimpl
    def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
        self._applied = True

    @hookimpl
    def before_model_call(self, ctx: TurnContext) -> None:
        if self._applied:
            self._applied = False
            self.spans.append((self._started, len(self.server.bodies)))


def _summarizer() -> MockProvider:
    def summarize(request: Any) -> str:
        text = "\n".join(message.text for message in request.messages)
        keys = sorted(set(re.findall(r"key (k\d+)", text)), key=lambda k: int(k[1:]))
        return "Summary: the user gave the keys " + ", ".join(keys) + "."

    return MockProvider(responder=summarize)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_each_turn_request_extends_the_previous_one_between_summaries(kind: str) -> None:
    server = WireServer(kind)
    client = httpx.AsyncClient(transport=httpx.MockTransport(server.handle))
    provider: Any
    if kind == "openai":
        provider = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", http_client=client)
    else:
        provider = AnthropicProvider(
            "m", base_url="http://127.0.0.1:9", api_key="k", http_client=client
        )
    tools = ToolRegistry()

    @tools.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    watch = SummaryWatch(server)
    bundle = (
        AgentBuilder()
        .provider(provider)
        .tool_registry(tools)
        .store(InMemoryStore())
        .load_plugins(False)
        .plugin(autosummary_plugin)
        .plugin(watch)
        .setting(
            "summary_config",
            {
                "max_context_tokens": 6000,
                "mode": "background",
                "summary_provider": _summarizer(),
                "recall": "auto",  # what it adds to a turn's request must not move the prefix
            },
        )
        .build()
    )
    session = AgentSession(
        Agent("a", system_prompt="You are terse.", model="m"), "s", bundle, FocusedConfig()
    )
    for turn in range(TURNS):
        text = f"Turn {turn}: remember key k{turn} is " + "x" * 60
        await session.submit_turn(text, pin=turn % PIN_EVERY == 1)
    await session.aclose()
    await client.aclose()

    applied_near: set[int] = set()
    for started, applied in watch.spans:
        applied_near.update(range(started, applied + 1))
    broken = []
    extended = 0
    recalled = 0
    for i in range(1, len(server.bodies)):
        fixed_before, sent_before = _stable_parts(kind, server.bodies[i - 1])
        fixed_after, sent_after = _stable_parts(kind, server.bodies[i])
        before, _ = _without_recalled(sent_before)
        after, had = _without_recalled(sent_after)
        recalled += had
        if i in applied_near:
            continue
        if fixed_before != fixed_after or after[: len(before)] != before:
            broken.append(i)
        else:
            extended += 1
    print(
        f"\n{kind}: {len(server.bodies)} turn requests, {len(watch.spans)} summaries applied, "
        f"{extended} requests extended the previous one (what recall put in a user's "
        f"message aside, {recalled} had some), {len(broken)} did not"
    )
    assert len(watch.spans) >= 3
    assert broken == [], f"requests that rewrote the prefix: {broken[:10]}"
