"""Recall: how well a store's search finds a planted fact, and how fast it answers.

``python -m bench.recall quality [--set tuning|evaluation] [--engines memory sqlite postgres]``
replays each generated conversation of the quality bench (``bench.quality.generator``)
into a store, then asks each fact's question (what a user would type) through
``search_messages`` and scores where the message that states the fact's final value
comes: **recall@1** and **recall@5**. No model is involved. Choices of the search
(its terms, its stop words) are made on the tuning set; published figures come
from the evaluation set.

``python -m bench.recall latency [--sizes 10000 100000 1000000] [--engines sqlite postgres]``
fills one store with that many messages (spread over sessions of 1,000 messages)
and times searches of one session, best of a few rounds (the median of each round
of 20 queries), and one turn's write (two messages) with the index against the same
write with nothing to index, in alternating blocks of 32 turns 50 ms apart (see
:func:`_write_times`): the median and the mean of each, and the time SQLite's index
spends catching up in its worker thread, per turn. PostgreSQL needs ``AGENTCORE_TEST_POSTGRES_DSN``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from agentcore import Message, SqliteStore
from agentcore.messages import ToolUseBlock
from agentcore.stores import InMemoryStore, MemoryStore
from agentcore.stores.base import MessageAppend, StoreWrite
from agentcore.stores.search import SearchableStore
from bench.quality.facts import Fact, mentions
from bench.quality.generator import KINDS, SEEDS, generate


def messages_of(script: Any) -> tuple[list[Message], list[int]]:
    """The conversation as stored messages, and the turn each message belongs to."""
    messages: list[Message] = []
    turns: list[int] = []
    for number, turn in enumerate(script.turns):
        messages.append(Message.user(turn.user))
        turns.append(number)
        for step in turn.steps:
            calls = [ToolUseBlock(call.id, call.name, call.arguments) for call in step.calls]
            messages.append(Message.assistant(step.text, calls))
            turns.append(number)
            for call in step.calls:
                messages.append(Message.tool_result(call.id, call.output))
                turns.append(number)
    return messages, turns


def states_fact(message: Message, fact: Fact) -> bool:
    """Whether ``message`` states the fact's final value."""
    return mentions(message.text, fact.value)


async def open_store(engine: str, folder: Path, name: str) -> MemoryStore:
    if engine == "memory":
        return InMemoryStore()
    if engine == "sqlite":
        return SqliteStore(folder / f"{name}.db")
    from agentcore.stores import PostgresStore

    dsn = os.environ.get("AGENTCORE_TEST_POSTGRES_DSN")
    if not dsn:
        raise SystemExit("postgres: set AGENTCORE_TEST_POSTGRES_DSN")
    return PostgresStore(dsn)


CJK_WAYS = ("chars", "bigrams", "chars-only")
"""How CJK text may be searched (``--cjk``): what the stores do (``chars``: a character a
token, a query's run as its two-character phrases), or, to measure against it,
``bigrams`` (a run indexed and looked for as its overlapping two-character words) and
``chars-only`` (a query's characters looked for one by one, no phrases)."""


def use_cjk(way: str) -> None:
    """Make every store search CJK text the ``way`` given (see :data:`CJK_WAYS`)."""
    from agentcore.stores import _search_text as text
    from agentcore.stores import search

    if way == "bigrams":
        plain_tokens = text.tokens

        def bigram_tokens(value: str) -> list[str]:
            out: list[str] = []
            run: list[str] = []
            for token in [*plain_tokens(value), ""]:
                if token and text._CJK_CHARACTER.fullmatch(token):
                    run.append(token)
                    continue
                if len(run) == 1:
                    out.append(run[0])
                out.extend(a + b for a, b in pairwise(run))
                run = []
                if token:
                    out.append(token)
            return out

        text.tokens = bigram_tokens  # type: ignore[assignment]
    elif way == "chars-only":
        plain_terms = text.search_terms

        def character_terms(query: str) -> list[text.SearchTerm]:
            found: dict[text.SearchTerm, None] = {}
            for term in plain_terms(query):
                for token in term.tokens if len(term.tokens) > 1 else (term.tokens[0],):
                    found.setdefault(text.SearchTerm((token,), term.prefix), None)
            return list(found)

        text.search_terms = character_terms  # type: ignore[assignment]
        search.search_terms = character_terms  # type: ignore[assignment]


async def quality(set_name: str, engines: Sequence[str], cjk: str = "chars") -> None:
    use_cjk(cjk)
    print(
        f"recall of planted facts, {set_name} set (seeds {SEEDS[set_name]}), no model, "
        f"CJK searched as {cjk}"
    )
    print("| engine | kind | facts | recall@1 | recall@5 |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for engine in engines:
            totals = [0, 0, 0]
            for kind in KINDS:
                found = [0, 0, 0]
                for seed in SEEDS[set_name]:
                    script = generate(kind, seed)
                    messages, _turns = messages_of(script)
                    session = f"recall-{kind}-{seed}-{random.randrange(1 << 30)}"
                    store = await open_store(engine, Path(folder), f"{engine}-{kind}-{seed}")
                    try:
                        await store.write(
                            StoreWrite(session, appends={"main": MessageAppend(0, messages)})
                        )
                        assert isinstance(store, SearchableStore)
                        for fact in script.facts:
                            if not fact.question:
                                continue
                            hits = await store.search_messages(session, fact.question, limit=5)
                            ranks = [states_fact(hit.message, fact) for hit in hits]
                            found[0] += 1
                            found[1] += bool(ranks[:1] and ranks[0])
                            found[2] += any(ranks)
                        await store.delete_session(session)
                    finally:
                        await store.close()
                print(
                    f"| {engine} | {kind} | {found[0]} | {found[1] / found[0]:.2f} | "
                    f"{found[2] / found[0]:.2f} |"
                )
                totals = [a + b for a, b in zip(totals, found, strict=True)]
            print(
                f"| {engine} | all | {totals[0]} | {totals[1] / totals[0]:.2f} | "
                f"{totals[2] / totals[0]:.2f} |"
            )


_WORDS = (
    "deploy",
    "service",
    "port",
    "billing",
    "ledger",
    "queue",
    "cache",
    "gateway",
    "auth",
    "mailer",
    "search",
    "budget",
    "release",
    "rollback",
    "incident",
    "memory",
    "limit",
    "timeout",
    "retry",
    "replica",
    "shard",
    "index",
    "schema",
    "migration",
    "backup",
    "restore",
    "token",
    "session",
    "customer",
    "invoice",
    "refund",
    "ticket",
    "region",
)


def filler(rng: random.Random, number: int) -> Message:
    words = " ".join(rng.choice(_WORDS) for _ in range(18))
    return Message.user(f"note {number}: {words} value {rng.randrange(100000)}")


async def latency(sizes: Sequence[int], engines: Sequence[str]) -> None:
    print("search latency (median of 20 queries of one 1,000-message session, best of 3)")
    print(
        "| engine | stored messages | search ms | write ms, indexed | not indexed | ratio "
        "| ratio of means | indexing off the write, ms a turn | of which holding the write lock |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    rng = random.Random(7)
    per_session = 1_000
    for engine in engines:
        with tempfile.TemporaryDirectory() as folder:
            store = await open_store(engine, Path(folder), f"latency-{engine}")
            try:
                stored = 0
                prefix = f"lat-{random.randrange(1 << 30)}-"
                for size in sizes:
                    while stored < size:
                        session = f"{prefix}{stored // per_session}"
                        batch = [filler(rng, stored + n) for n in range(per_session)]
                        await store.write(
                            StoreWrite(session, appends={"main": MessageAppend(0, batch)})
                        )
                        stored += per_session
                    assert isinstance(store, SearchableStore)
                    session = f"{prefix}{rng.randrange(stored // per_session)}"
                    best = float("inf")
                    for _ in range(3):
                        times = []
                        for _ in range(20):
                            query = f"which {rng.choice(_WORDS)} {rng.choice(_WORDS)} value?"
                            started = time.perf_counter()
                            await store.search_messages(session, query, limit=5)
                            times.append(time.perf_counter() - started)
                        best = min(best, statistics.median(times))
                    indexed, indexed_mean, plain, plain_mean, behind, locked = await _write_times(
                        store, f"{prefix}w{size}", rng
                    )
                    print(
                        f"| {engine} | {stored:,} | {best * 1000:.1f} | {indexed * 1000:.3f} | "
                        f"{plain * 1000:.3f} | {indexed / plain:.2f} | "
                        f"{indexed_mean / plain_mean:.2f} | {behind * 1000:.3f} | "
                        f"{locked * 1000:.3f} |"
                    )
                    sys.stdout.flush()
            finally:
                await store.close()


BLOCK = 32
"""Turns of each kind in a row: one catch-up of SQLite's index every block of indexed turns."""

TURN_PAUSE = 0.05
"""Seconds between two writes of the write bench: a turn's write follows a model call,
which takes far longer; SQLite's index catches up in a worker thread meanwhile."""


async def _write_times(
    store: MemoryStore, session: str, rng: random.Random
) -> tuple[float, float, float, float, float, float]:
    """A turn's write (two messages), indexed and not, in alternating blocks.

    Returns the median and mean of each, what indexing costs off the write per turn
    (SQLite's catch-ups; 0 for PostgreSQL), and how much of it holds the write lock
    another connection's write would wait for.

    PostgreSQL indexes in the write: "not indexed" leaves the messages' search texts empty.
    SQLite indexes in a worker thread every ``INDEX_EVERY`` messages: "not indexed" is a
    write that never starts one.
    """
    from agentcore.stores import _codec, _sqlite_connection

    history = [filler(rng, n) for n in range(200)]
    await store.write(StoreWrite(session, appends={"main": MessageAppend(0, history)}))
    if isinstance(store, SearchableStore):
        await store.search_messages(session, "note")  # SQLite: the index caught up
    real_document, real_every, real_catch_up = (
        _codec.search_document,
        _sqlite_connection.INDEX_EVERY,
        _sqlite_connection.catch_up,
    )
    behind = locked = 0.0

    def timed_catch_up(conn: Any, path: str, **bounds: Any) -> int:
        nonlocal behind, locked
        began: list[float] = []

        def trace(sql: str) -> None:
            nonlocal locked
            if sql == "BEGIN IMMEDIATE":
                began.append(time.perf_counter())
            elif sql in ("COMMIT", "ROLLBACK") and began:
                locked += time.perf_counter() - began.pop()

        started = time.perf_counter()
        conn.set_trace_callback(trace)
        try:
            return real_catch_up(conn, path, **bounds)
        finally:
            conn.set_trace_callback(None)
            behind += time.perf_counter() - started

    times: dict[bool, list[float]] = {True: [], False: []}
    turns = 640
    _sqlite_connection.catch_up = timed_catch_up  # type: ignore[assignment]
    try:
        for turn in range(turns):
            indexed = turn // BLOCK % 2 == 0  # in blocks: a catch-up slows its own block
            _codec.search_document = real_document if indexed else (lambda message: "")  # type: ignore[assignment]
            _sqlite_connection.INDEX_EVERY = real_every if indexed else 1 << 62
            pair = [filler(rng, turn), Message.assistant("Noted, " + filler(rng, turn).text)]
            await asyncio.sleep(TURN_PAUSE)
            started = time.perf_counter()
            await store.write(
                StoreWrite(session, appends={"main": MessageAppend(200 + 2 * turn, pair)})
            )
            times[indexed].append(time.perf_counter() - started)
    finally:
        _codec.search_document = real_document
        _sqlite_connection.INDEX_EVERY = real_every
        _sqlite_connection.catch_up = real_catch_up  # type: ignore[assignment]
    return (
        statistics.median(times[True]),
        statistics.mean(times[True]),
        statistics.median(times[False]),
        statistics.mean(times[False]),
        behind / (turns / 2),
        locked / (turns / 2),
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recall", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    q = sub.add_parser("quality", help="recall@1 and recall@5 of planted facts")
    q.add_argument("--set", choices=sorted(SEEDS), default="tuning")
    q.add_argument("--engines", nargs="+", default=["memory", "sqlite"])
    q.add_argument("--cjk", choices=CJK_WAYS, default="chars", help="how CJK text is searched")
    lat = sub.add_parser("latency", help="search and write time as the store grows")
    lat.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    lat.add_argument("--engines", nargs="+", default=["sqlite"])
    args = parser.parse_args(argv)
    if args.command == "quality":
        asyncio.run(quality(args.set, args.engines, args.cjk))
    else:
        asyncio.run(latency(args.sizes, args.engines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
