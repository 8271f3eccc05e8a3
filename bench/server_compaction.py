"""``python -m bench.server_compaction``: the server compacting against our own summaries.

One scripted conversation goes through ``OpenAIResponsesProvider`` to a loopback
server that speaks the Responses API as its documentation describes it, twice:
with autosummary's ``strategy="server"`` (each turn request carries
``context_management`` with the plugin's trigger as ``compact_threshold``; past
it the server compacts and its reply starts with an encrypted ``compaction``
item, which later requests carry in place of what it covers) and with
``strategy="incremental"`` (the plugin's own summary calls, to the same server).

The server bills every request as OpenAI does: input tokens, of which those of a
prefix it saw in the last 5 minutes are cached (``bench.billing.OpenAICache``:
from 1,024 tokens, in steps of 128), and output tokens. What the documentation
does not say is how the compaction pass itself is billed; the bench assumes it
costs what a summary call of ours costs: the request's input read once more
(cached as the turn's), and the item's size (``--item-tokens``, by default the
plugin's summary cap) written as output, then carried as input by every later
request. Turns arrive 45 s apart (``bench.billing.turn_start``), so the cache
holds between them. Prints the requests, tokens and dollars of each strategy at
a model's list price (``agentcore.pricing.LIST_PRICES``), side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentcore import Usage
from agentcore.tokens import get_token_counter
from bench.billing import Block, OpenAICache, dollars, turn_start
from bench.conversations import generated

MODEL = "gpt-4.1-mini"


@dataclass
class Ledger:
    """What the server billed: requests by kind, tokens, and the simulated clock."""

    now: float = 0.0
    turns: int = 0
    summaries: int = 0
    compactions: int = 0
    usage: Usage = field(default_factory=lambda: Usage(0, 0))

    def add(self, usage: Usage) -> None:
        self.usage = self.usage + usage


class ResponsesServer:
    """A loopback ``POST /responses`` that compacts past ``compact_threshold`` and bills."""

    def __init__(self, item_tokens: int, replies: Sequence[str]) -> None:
        self.item_tokens = item_tokens
        self.replies = list(replies)
        self.ledger = Ledger()
        self.cache = OpenAICache()
        self.counter = get_token_counter("gpt-4o")
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ResponsesServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                with server._lock:
                    reply = server.answer(body)
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler

    def _tokens(self, item: dict[str, Any]) -> int:
        if item.get("type") == "compaction":
            return self.item_tokens
        text = json.dumps(item.get("content", item.get("output", item)), ensure_ascii=False)
        return 4 + self.counter.count_text(text)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request, billed."""
        items = list(body.get("input", []))
        if body.get("instructions"):
            items.insert(0, {"type": "message", "role": "system", "content": body["instructions"]})
        blocks = [
            Block(hash(json.dumps(item, sort_keys=True)), self._tokens(item)) for item in items
        ]
        billed = self.cache.bill(blocks, self.ledger.now)
        output: list[dict[str, Any]] = []
        if body.get("max_output_tokens"):  # only the plugin's summary requests set a cap
            self.ledger.summaries += 1
            text = "The user and the assistant worked through the plan. " * (self.item_tokens // 10)
            out_tokens = self.counter.count_text(text)
        else:
            self.ledger.turns += 1
            threshold = next(
                (
                    entry.get("compact_threshold")
                    for entry in body.get("context_management", [])
                    if entry.get("type") == "compaction"
                ),
                None,
            )
            text = self.replies[(self.ledger.turns - 1) % len(self.replies)]
            out_tokens = self.counter.count_text(text)
            if threshold is not None and billed.input_tokens >= threshold:
                self.ledger.compactions += 1
                number = next(self._ids)
                output.append(
                    {
                        "type": "compaction",
                        "id": f"cmp_{number}",
                        # base64 of the item's text: 4 bytes a token, 4 characters per 3 bytes
                        "encrypted_content": f"gAAAAB{number:06d}"
                        + "x" * (self.item_tokens * 16 // 3),
                    }
                )
                out_tokens += self.item_tokens
        output.append(
            {
                "type": "message",
                "id": f"msg_{next(self._ids)}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
        usage = Usage(billed.input_tokens, out_tokens, cached_input_tokens=billed.cache_read)
        self.ledger.add(usage)
        return {
            "id": f"resp_{next(self._ids)}",
            "object": "response",
            "status": "completed",
            "model": body.get("model", MODEL),
            "output": output,
            "usage": {
                "input_tokens": billed.input_tokens,
                "input_tokens_details": {"cached_tokens": billed.cache_read},
                "output_tokens": out_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": billed.input_tokens + out_tokens,
            },
        }


async def run(strategy: str, turns: int, window: int, cap: int, item_tokens: int) -> Ledger:
    """One strategy over the scripted conversation; what the server billed."""
    from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig
    from agentcore.providers import OpenAIResponsesProvider
    from agentcore_autosummary import SummaryConfig

    conversation = generated(7, turns)
    replies = [turn.steps[-1].text for turn in conversation.turns]
    with ResponsesServer(item_tokens, replies) as server:
        provider = OpenAIResponsesProvider(MODEL, base_url=server.base_url, api_key="sk-bench")
        config = SummaryConfig(max_context_tokens=window, max_summary_tokens=cap, strategy=strategy)
        bundle = AgentBuilder().provider(provider).setting("summary_config", config).build()
        session = AgentSession(Agent("a", system_prompt="Be brief."), "s", bundle, FocusedConfig())
        try:
            for index, turn in enumerate(conversation.turns):
                server.ledger.now = turn_start(index)
                await session.submit_turn(turn.user)
        finally:
            await session.aclose()
            await provider.aclose()
        return server.ledger


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.server_compaction", description=__doc__)
    parser.add_argument("--turns", type=int, default=120)
    parser.add_argument("--window", type=int, default=16_000, help="max_context_tokens")
    parser.add_argument("--cap", type=int, default=1_024, help="max_summary_tokens")
    parser.add_argument("--item-tokens", type=int, help="a compaction item's size (the cap)")
    args = parser.parse_args(argv)
    item_tokens = args.item_tokens or args.cap
    print(
        f"{args.turns} turns, window {args.window:,}, summary cap {args.cap:,}, "
        f"compaction item {item_tokens:,} tokens, {MODEL} list prices"
    )
    print(
        "| strategy | turn requests | summary requests | compactions | input tokens "
        "| of which cached | output tokens | dollars |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    results = {}
    for strategy in ("server", "incremental"):
        ledger = asyncio.run(run(strategy, args.turns, args.window, args.cap, item_tokens))
        results[strategy] = ledger
        usage = ledger.usage
        print(
            f"| {strategy} | {ledger.turns} | {ledger.summaries} | {ledger.compactions} "
            f"| {usage.input_tokens:,} | {usage.cached_input_tokens:,} | {usage.output_tokens:,} "
            f"| ${dollars(usage, MODEL):.4f} |"
        )
    ratio = dollars(results["server"].usage, MODEL) / dollars(results["incremental"].usage, MODEL)
    print(f"\nserver / incremental dollars: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
