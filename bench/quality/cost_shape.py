"""The shape of each system's bill in seconds: the quality bench without its model.

A quality run bills what each system sent to the real 1.5B summarizer
(:mod:`bench.quality.billed`) and takes minutes a conversation. Its dollars
follow the shape of the requests more than the words of the summaries: how large
the context is after a summary, how often a summary comes, how much it writes.
This replays the same conversations through the same systems and bills them the
same way, with a loopback server standing in for the summarizer: its reply is
every other sentence of the request, each sentence's words reversed (no copy
check takes it for the transcript), as long as the real model's replies run on
the tuning set: :data:`SUMMARY_SHARE` of a summary request's tokens,
:data:`MERGE_SHARE` of a merge's, at most the request's ``max_tokens``. The facts
such a summary keeps mean nothing, so none are reported: this is for choosing
settings by their dollars before a real run measures what they keep.

``python -m bench.quality.cost_shape [--set tuning|evaluation] [--kinds KIND ...]
[--only SYSTEM ...] [--overrides JSON ...] [--causes]``: one row per conversation and
system (each ``--overrides`` object is one more agentcore row, its
:data:`~bench.quality.systems.OVERRIDES_VARIABLE` fields), then the totals;
``--causes`` adds each row's turn tokens OpenAI bills uncached, by why
(:mod:`bench.quality.cache_breaks`), over all the conversations.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import threading
from collections import Counter
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentcore.tokens import get_token_counter
from agentcore_autosummary.calling.segments import MERGE_INSTRUCTION
from bench.quality import generator
from bench.quality import server as servers
from bench.quality.cache_breaks import CAUSES
from bench.quality.run import BUDGET, CAP, run_one, script_for
from bench.quality.systems import OVERRIDES_VARIABLE, SYSTEMS, Settings

SUMMARY_SHARE = 0.09
"""A summary reply's tokens over its request's: the 1.5B model's segment summaries on the
tuning set wrote 57 to 210 tokens for requests of 900 to 1,500."""

MERGE_SHARE = 0.6
"""A merge reply's tokens over its request's: 84 to 256 tokens for 236 to 359 there."""

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
_COUNTER = get_token_counter()


def stand_in_reply(text: str, max_tokens: int) -> str:
    """The stand-in summary of a request whose messages' texts are ``text``."""
    share = MERGE_SHARE if MERGE_INSTRUCTION[:40] in text else SUMMARY_SHARE
    target = min(max_tokens, max(8, int(_COUNTER.count_text(text) * share)))
    kept: list[str] = []
    used = 0
    for sentence in _SENTENCE_END.split(text)[::2]:
        reversed_words = " ".join(reversed(sentence.split()))
        tokens = _COUNTER.count_text(reversed_words)
        if used + tokens > target:
            break
        kept.append(reversed_words)
        used += tokens
    return " ".join(kept) or "Nothing to keep."


class _StandIn(BaseHTTPRequestHandler):
    """An OpenAI-compatible ``/chat/completions`` that answers with :func:`stand_in_reply`."""

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        texts = []
        for message in body.get("messages") or []:
            content = message.get("content") or ""
            if isinstance(content, list):
                content = " ".join(str(part.get("text", "")) for part in content)
            texts.append(content)
        text = "\n".join(texts)
        reply = stand_in_reply(
            text, body.get("max_tokens") or body.get("max_completion_tokens") or CAP
        )
        prompt, completion = _COUNTER.count_text(text), _COUNTER.count_text(reply)
        payload = {
            "id": "stand-in",
            "object": "chat.completion",
            "model": body.get("model", "stand-in"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
        content_bytes = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(content_bytes)))
        self.end_headers()
        self.wfile.write(content_bytes)


def _row(conversation: str, name: str, result: dict[str, Any]) -> list[Any]:
    return [
        conversation,
        name,
        result["summary_calls"],
        result["summary_output_tokens"],
        result["turn_tokens"],
        round(result["turn_tokens"] / max(1, result["turn_calls"])),
        result["dollars"]["openai"],
        result["dollars"]["anthropic"],
    ]


def measure(
    conversations: Sequence[str],
    systems: Sequence[str],
    overrides: Sequence[str],
    causes: dict[str, Counter[str]] | None = None,
) -> list[list[Any]]:
    """Rows of figures: per conversation, each system, then each agentcore override.

    ``causes``, when given, gathers each row's uncached turn tokens by cause, by name.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = servers.Proxy(f"http://127.0.0.1:{server.server_address[1]}")
    settings = Settings(budget=BUDGET, cap=CAP, base_url=proxy.base_url)
    runs = [(key, None) for key in systems] + [("agentcore", text) for text in overrides]
    rows: list[list[Any]] = []
    saved = os.environ.get(OVERRIDES_VARIABLE)
    try:
        for conversation in conversations:
            script = script_for(conversation)
            for key, override in runs:
                os.environ[OVERRIDES_VARIABLE] = override or ""
                result = run_one(key, script, settings, proxy, answers=False)
                if result["status"] != "ok":
                    raise SystemExit(f"{conversation} / {key}: {result.get('reason')}")
                rows.append(_row(conversation, override or key, result))
                if causes is not None:
                    causes.setdefault(override or key, Counter()).update(
                        result["openai_uncached_by_cause"]
                    )
    finally:
        if saved is None:
            os.environ.pop(OVERRIDES_VARIABLE, None)
        else:
            os.environ[OVERRIDES_VARIABLE] = saved
        proxy.close()
        server.shutdown()
        server.server_close()
    return rows


HEADER = (
    "conversation",
    "system",
    "summary calls",
    "summary output tokens",
    "turn tokens",
    "per request",
    "$ OpenAI",
    "$ Anthropic",
)


def _cell(cell: Any) -> str:
    if isinstance(cell, float):
        return f"{cell:.4f}"
    if isinstance(cell, int):
        return f"{cell:,}"
    return f"`{cell}`" if cell.startswith("{") else str(cell)


def table(rows: Sequence[Sequence[Any]]) -> list[str]:
    """The rows as a Markdown table, with each system's totals last."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    totals: dict[str, list[float]] = {}
    for row in rows:
        lines.append("| " + " | ".join(_cell(cell) for cell in row) + " |")
        total = totals.setdefault(row[1], [0.0] * 6)
        for index, value in enumerate(row[2:]):
            total[index] += value
    for name, total in totals.items():
        calls, output, tokens, _, openai, anthropic = total
        lines.append(
            f"| all | {_cell(name)} | {calls:,.0f} | {output:,.0f} | {tokens:,.0f} | | "
            f"{openai:.4f} | {anthropic:.4f} |"
        )
    return lines


def causes_table(causes: dict[str, Counter[str]]) -> list[str]:
    """Each system's uncached turn tokens at OpenAI by cause, as a Markdown table."""
    header = ("system", *CAUSES, "all")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, counts in causes.items():
        cells = [counts[cause] for cause in CAUSES]
        figures = " | ".join(f"{cell:,}" for cell in [*cells, sum(cells)])
        lines.append(f"| {_cell(name)} | {figures} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, replay, print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.quality.cost_shape", description=__doc__)
    parser.add_argument("--set", choices=list(generator.SEEDS), default="tuning")
    parser.add_argument("--kinds", nargs="+", choices=list(generator.KINDS))
    parser.add_argument(
        "--only", nargs="+", choices=list(SYSTEMS), default=["agentcore", "langmem", "langchain"]
    )
    parser.add_argument(
        "--overrides", nargs="*", default=[], metavar="JSON", help="agentcore's fields, a row each"
    )
    parser.add_argument(
        "--causes", action="store_true", help="the uncached turn tokens by cause, too"
    )
    args = parser.parse_args(argv)
    for text in args.overrides:
        if not isinstance(json.loads(text), dict):
            parser.error(f"--overrides takes JSON objects, not {text!r}")
    conversations = generator.keys(args.set, args.kinds)
    causes: dict[str, Counter[str]] | None = {} if args.causes else None
    print("\n".join(table(measure(conversations, args.only, args.overrides, causes))))
    if causes is not None:
        print("\nTurn tokens OpenAI bills uncached, by cause (bench.quality.cache_breaks):\n")
        print("\n".join(causes_table(causes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
