"""``strategy="server"``: the provider's server compacts at the trigger; elsewhere, our summary."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from summary_helpers import TINY_WINDOW

from agentcore import (
    AgentSession,
    ContentBlock,
    FocusedConfig,
    LlmRequest,
    LlmResponse,
    Message,
    OpaqueBlock,
    SqliteStore,
    TextBlock,
    TurnContext,
    Usage,
    hookimpl,
)
from agentcore.providers import OpenAIProvider, OpenAIResponsesProvider
from agentcore.testing import MockProvider
from agentcore.tokens import TokenCounter
from agentcore_autosummary import SummaryConfig, SummaryInfo, get_conversation_summary

COUNTER = TokenCounter("estimate")
MakeSession = Callable[..., AgentSession]


def config(**overrides: Any) -> SummaryConfig:
    fields: dict[str, Any] = {
        **TINY_WINDOW,
        "strategy": "server",
        "trigger_token_ratio": 0.2,
        "keep_recent_tokens": 40,
        "debounce_turns": 1,
    }
    return SummaryConfig(**{**fields, **overrides})


class ResponsesServer:
    """A Responses-API model that compacts its input as the documentation says.

    When a request asks for compaction (``context_management``) and its
    input passes the threshold, the reply starts with an encrypted
    ``compaction`` item; ``compacts=False`` plays a compatible server that
    ignores the field. Every request is kept; summary calls are counted.
    """

    api = "openai-responses"

    def __init__(self, *, compacts: bool = True, item_cost: int = 0) -> None:
        self.compacts = compacts
        self.item_cost = item_cost
        self.turns: list[LlmRequest] = []
        self.summaries = 0
        self.items = 0

    def __call__(self, request: LlmRequest) -> str | LlmResponse:
        if request.purpose == "summary":
            self.summaries += 1
            return f"summary #{self.summaries}: the user asked about rollout steps."
        self.turns.append(request)
        tokens = COUNTER.count_messages(list(request.messages))
        tokens += self.item_cost * len(first_items(request))  # the server's size of its items
        usage = Usage(tokens, 5)
        asked = request.extra_body.get("context_management")
        if self.compacts and asked and tokens >= asked[0]["compact_threshold"]:
            self.items += 1
            item = {
                "type": "compaction",
                "id": f"cmp_{self.items}",
                "encrypted_content": f"gAAAA-{self.items}-" + "z" * 40,
            }
            content: list[ContentBlock] = [
                OpaqueBlock("openai-responses", item),
                TextBlock("Noted."),
            ]
            return LlmResponse(Message("assistant", content), usage=usage)
        return LlmResponse(Message.assistant("Noted."), usage=usage)


class Provider(MockProvider):
    """A mock provider that says it speaks the Responses API."""

    api = "openai-responses"


class Summaries:
    def __init__(self) -> None:
        self.infos: list[SummaryInfo] = []

    @hookimpl
    def after_summary(self, ctx: TurnContext, summary: SummaryInfo) -> None:
        self.infos.append(summary)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    async with SqliteStore(tmp_path / "server.db") as opened:
        yield opened


async def talk(session: AgentSession, turns: int, start: int = 0) -> None:
    for number in range(start, start + turns):
        await session.submit_turn(
            f"Step {number} of the rollout: check the gateway, the queue depth, the error "
            "rate of the last hour and the logs of every worker before moving on."
        )


def first_items(request: LlmRequest) -> list[str]:
    """The compaction items the request sends, by id."""
    return [
        str(block.item["id"])
        for message in request.messages
        for block in message.content
        if isinstance(block, OpaqueBlock)
    ]


async def test_the_server_compacts_at_the_trigger_and_its_item_leads_the_window(
    make_session: MakeSession, store: SqliteStore
) -> None:
    model = ResponsesServer()
    summarizer = MockProvider([])  # a summary call would exhaust it
    summaries = Summaries()
    summary_config = config(summary_provider=summarizer)
    session = make_session(
        Provider(responder=model), summary=summary_config, mode=FocusedConfig(), store=store
    )
    session.bundle.plugin_manager.register(summaries)
    await talk(session, 12)

    trigger = summary_config.trigger_tokens
    asked = [turn.extra_body.get("context_management") for turn in model.turns]
    assert asked[0] == [{"type": "compaction", "compact_threshold": trigger}]
    assert all(field is not None for field in asked)
    assert model.items >= 1 and model.summaries == 0 and summarizer.calls == []
    [first, *_] = summaries.infos
    assert first.reason == "server" and "cannot be read" in first.summary
    assert first.usage is not None and first.usage.input_tokens >= trigger

    # The request after each item starts with it: what came before is covered.
    slot = await session.get_slot()
    focused = slot.config.focused
    assert focused is not None and focused.summary_override is None
    context = slot.load_messages()
    assert isinstance(context[1].content[0], OpaqueBlock)  # after the system prompt
    assert first_items(model.turns[-1])[0] == f"cmp_{model.items}"
    assert await get_conversation_summary(session) == summaries.infos[-1].summary


async def test_an_item_larger_than_its_json_teaches_the_correction_nothing(
    make_session: MakeSession, store: SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    # The server counts each item as 1,500 tokens where its JSON makes about 30: a
    # correction learned from requests that carry one would take every text as 4 times
    # its size, and size every later request (and the window guard) by it.
    model = ResponsesServer(item_cost=1500)
    session = make_session(
        Provider(responder=model), summary=config(), mode=FocusedConfig(), store=store
    )
    with caplog.at_level(logging.INFO, logger="agentcore.autosummary"):
        await talk(session, 20)
    assert model.items >= 2 and model.summaries == 0
    factors = [
        float(record.getMessage().split("counts ")[1].split("x")[0])
        for record in caplog.records
        if "the server counts" in record.getMessage()
    ]
    assert all(factor < 1.5 for factor in factors), factors


async def test_a_resumed_session_sends_the_stored_item_first(
    make_session: MakeSession, store: SqliteStore
) -> None:
    model = ResponsesServer()
    session = make_session(
        Provider(responder=model), summary=config(), mode=FocusedConfig(), store=store
    )
    await talk(session, 12)
    assert model.items >= 1
    newest = f"cmp_{model.items}"

    resumed_model = ResponsesServer(compacts=False)
    resumed = make_session(Provider(responder=resumed_model), summary=config(), store=store)
    await resumed.submit_turn("Where were we?")
    [request] = resumed_model.turns
    assert first_items(request) == [newest]
    leading = request.messages[1].content[0]  # right after the system prompt
    assert isinstance(leading, OpaqueBlock) and leading.item["id"] == newest


async def test_on_chat_completions_the_plugin_summarizes_itself(
    make_session: MakeSession, store: SqliteStore
) -> None:
    model = ResponsesServer()
    summaries = Summaries()
    session = make_session(
        MockProvider(responder=model), summary=config(), mode=FocusedConfig(), store=store
    )
    session.bundle.plugin_manager.register(summaries)
    await talk(session, 12)
    assert all(turn.extra_body == {} for turn in model.turns)
    assert model.items == 0 and model.summaries >= 1
    assert summaries.infos and all(info.reason == "watermark" for info in summaries.infos)
    assert "summary #" in (await get_conversation_summary(session) or "")


async def test_a_server_that_ignores_the_field_gets_our_summary_and_one_warning(
    make_session: MakeSession, store: SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    model = ResponsesServer(compacts=False)
    session = make_session(
        Provider(responder=model), summary=config(), mode=FocusedConfig(), store=store
    )
    with caplog.at_level(logging.WARNING, logger="agentcore.autosummary"):
        await talk(session, 16)
    assert model.items == 0 and model.summaries >= 2
    warnings = [r for r in caplog.records if "did not compact" in r.getMessage()]
    assert len(warnings) == 1
    window = await session.load_messages()
    assert COUNTER.count_messages(window) < TINY_WINDOW["max_context_tokens"]


# -- end to end: the Responses provider and a loopback server -------------------------


class Loopback:
    """A loopback server of both OpenAI APIs, as their documentation describes them.

    ``POST /v1/responses`` compacts an input past ``compact_threshold`` tokens
    (four characters a token) into an encrypted ``compaction`` item before its
    reply; ``POST /v1/chat/completions`` answers plainly. Every request body is kept.
    """

    def __init__(self) -> None:
        self.bodies: list[tuple[str, dict[str, Any]]] = []
        self.items = 0
        loopback = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                loopback.bodies.append((self.path, body))
                reply = loopback.answer(self.path, body)
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if path.endswith("/chat/completions"):
            text = "summary: rollout steps." if "max_tokens" in body else "Noted."
            return {
                "choices": [{"message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": len(json.dumps(body)) // 4, "completion_tokens": 3},
            }
        tokens = len(json.dumps(body["input"])) // 4
        output: list[dict[str, Any]] = []
        threshold = [entry["compact_threshold"] for entry in body.get("context_management", [])]
        if threshold and tokens >= threshold[0]:
            self.items += 1
            output.append(
                {"type": "compaction", "id": f"cmp_{self.items}", "encrypted_content": "gAAAA" * 8}
            )
        output.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Noted."}],
            }
        )
        return {
            "object": "response",
            "status": "completed",
            "model": body["model"],
            "output": output,
            "usage": {"input_tokens": tokens, "output_tokens": 3},
        }

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    served = Loopback()
    yield served
    served.close()


def responses_inputs(loopback: Loopback) -> list[list[dict[str, Any]]]:
    return [body["input"] for path, body in loopback.bodies if path.endswith("/responses")]


async def test_on_the_responses_api_the_item_is_stored_resumed_and_sent_first(
    make_session: MakeSession, store: SqliteStore, loopback: Loopback
) -> None:
    provider = OpenAIResponsesProvider("gpt-5-mini", base_url=loopback.url, api_key="sk-test")
    session = make_session(provider, summary=config(), mode=FocusedConfig(), store=store)
    await talk(session, 12)
    assert loopback.items >= 1
    inputs = responses_inputs(loopback)
    after = next(i for i, sent in enumerate(inputs) if any(x["type"] == "compaction" for x in sent))
    assert inputs[after][1]["type"] == "compaction"  # right after the system prompt
    assert all(path.endswith("/responses") for path, _ in loopback.bodies)  # no summary call
    await provider.aclose()

    again = OpenAIResponsesProvider("gpt-5-mini", base_url=loopback.url, api_key="sk-test")
    resumed = make_session(again, summary=config(), store=store)
    await resumed.submit_turn("Where were we?")
    first = responses_inputs(loopback)[-1]
    assert first[1] == {
        "type": "compaction",
        "id": f"cmp_{loopback.items}",
        "encrypted_content": "gAAAA" * 8,
    }
    await again.aclose()


async def test_on_chat_completions_the_same_config_makes_our_summary(
    make_session: MakeSession, store: SqliteStore, loopback: Loopback
) -> None:
    provider = OpenAIProvider("gpt-4o-mini", base_url=loopback.url, api_key="sk-test")
    session = make_session(provider, summary=config(), mode=FocusedConfig(), store=store)
    await talk(session, 12)
    summaries = [body for _, body in loopback.bodies if "max_tokens" in body]
    assert summaries, "no summary call"
    assert not any("context_management" in body for _, body in loopback.bodies)
    assert "summary: rollout steps." in (await get_conversation_summary(session) or "")
    await provider.aclose()
