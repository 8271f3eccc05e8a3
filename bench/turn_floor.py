"""``python -m bench.turn_floor``: what one turn costs, against the floor of a turn, in one run.

Prints, each figure the median of many turns after a warm-up:

- the floor of a turn: tiktoken on the two new texts (the user's message and
  the reply), JSON of the two new rows, one WAL SQLite transaction that
  stores them (``synchronous = NORMAL``, as :class:`~agentcore.SqliteStore`);
- a turn's own store work called directly, with no session: both messages made
  and counted, and ``SqliteStore.write`` of the turn's ``StoreWrite`` (the
  floor's work plus the store's conflict check, idempotency row, state and
  checks): what any turn through the store costs before the session's machinery;
- agentcore's turn on InMemoryStore and on SqliteStore without plugins, and
  on SqliteStore with autosummary on: a config that never summarizes here
  (its window grows by two messages a turn, to 4,400 in a run of 2,000 turns
  after the warm-up, and each request carries all of them), and one that
  summarizes every few turns with an instant summarizer (all turns, then the
  turns that made a summary call, then the others: a window the summaries
  keep small); each in µs and as a multiple of the floor measured beside it
  (in blocks between its turns, see :class:`Paired`: a shared machine's speed
  drifts within a run, by two times and more);
- the non-summarizing autosummary turn with 4 and with 40 tools registered;
- the published figure: the SQLite turn with autosummary (never summarizing) and
  the direct store write of the same turn, measured side by side in one event loop
  (alternating blocks of turns, see :func:`beside_store_write`), their ratio, and
  the floor measured beside them; with the summary turn's median (instant
  summarizer) from the table above;
- the decoding of one stored message (text, and two tool calls): json.loads
  alone, json.loads with cattrs (every message before the fast path), and the
  stores' decode;
- resuming a summarized session of 50,000 stored messages against one of 10, on
  InMemoryStore and SqliteStore (``bench.resume``'s sessions and measure);
- a live session after 10,000 turns on SqliteStore with autosummary summarizing
  (the "summarizing" config): the messages it holds and its traced memory;
- with ``--old PATH`` (a checkout of an older commit, e.g. made by
  ``git worktree add /tmp/c37 c37a590`` or ``git archive``), the memory and
  SQLite turns without plugins and the SQLite turn with autosummary of that
  checkout and of this one, in alternating child processes (same loop, same
  instant model), side by side with their ratio; and the published figure and the
  summary turn of both, the same way.

The model is an instant fake (a fixed reply and usage, no counting), so the
figures are agentcore's own cost. Run from the repository root with the
development environment: ``.venv/bin/python -m bench.turn_floor`` (a minute or
two; ``--turns`` changes how many turns each figure takes). Nothing here
is part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

WARMUP = 200
TURNS = 2_000
PAIRS = 3
SYSTEM_PROMPT = "You are a helpful assistant. Answer briefly and precisely."
REPLY = "Sure: the answer is forty-two, as the guide says; ask again if you need more."
WORDS = ("status", "river", "latency", "budget", "window", "summary", "turn", "store")


def user_text(index: int) -> str:
    """The user's message of turn ``index``: about 25 tokens, different every turn."""
    words = " ".join(WORDS[(index + k) % len(WORDS)] for k in range(12))
    return f"Question {index}: how do {words} relate, and what should I check first?"


class InstantModel:
    """An LLM provider that answers at once: a fixed reply, a fixed usage, no counting.

    A summary names the span of questions it covers, from the first question an
    earlier summary covered to the newest one: like a faithful summarizer, it keeps
    what the previous summary held, so the gate keeps it on the first call.
    """

    model = None

    def __init__(self) -> None:
        from agentcore import LlmResponse, Message, Usage

        self.summaries = 0
        # Imported once, not on every call (an import statement costs a few µs a turn).
        self._classes = (LlmResponse, Message, Usage)

    async def complete(self, request: Any) -> Any:
        """The reply: a short summary for a summary call, :data:`REPLY` otherwise."""
        LlmResponse, Message, Usage = self._classes

        if request.purpose != "turn":
            self.summaries += 1
            text = "\n".join(message.text for message in request.messages)
            asked = re.findall(r"Question (\d+)", text)
            earlier = re.search(r"questions (\d+) to", text)
            first = earlier.group(1) if earlier else asked[0] if asked else None
            span = f"questions {first} to {asked[-1]}" if asked else "the conversation"
            text = (
                f"The user asked {span} about how status, river, latency, budget, "
                "window, summary, turn and store relate; each was answered."
            )
        else:
            text = REPLY
        return LlmResponse(Message.assistant(text), usage=Usage(input_tokens=100, output_tokens=20))

    async def stream(self, request: Any) -> Any:
        """Not used by the bench (every turn is a plain turn)."""
        raise NotImplementedError
        yield  # pragma: no cover


def median_us(samples: list[float]) -> float:
    """The median of ``samples`` (seconds) in µs."""
    return statistics.median(samples) * 1e6


def timed(work: Callable[[int], object], count: int) -> list[float]:
    """Seconds of each of ``count`` calls of ``work(index)``, after a warm-up."""
    for index in range(count, count + WARMUP):  # indices apart from the measured ones
        work(index)
    samples = []
    for index in range(count):
        start = time.perf_counter()
        work(index)
        samples.append(time.perf_counter() - start)
    return samples


class Floor:
    """The work no turn can avoid, each part callable on its own or all at once (:meth:`step`).

    tiktoken (cl100k) on the turn's two new texts, JSON of its two new rows, and one
    WAL SQLite transaction (``synchronous = NORMAL``) inserting them and updating a
    state row, in a database file of its own.
    """

    def __init__(self) -> None:
        import tiktoken

        from agentcore.encodings import load_bundled_encoding

        try:
            self._encoding = load_bundled_encoding("cl100k_base")
        except Exception:
            self._encoding = tiktoken.get_encoding("cl100k_base")
        directory = tempfile.mkdtemp(prefix="turn-floor-")
        conn = self._conn = sqlite3.connect(Path(directory) / "floor.db", isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(
            "CREATE TABLE messages (session TEXT, idx INTEGER, body TEXT, tokens INTEGER,"
            " PRIMARY KEY (session, idx))"
        )
        conn.execute("CREATE TABLE state (session TEXT PRIMARY KEY, turns INTEGER)")
        conn.execute("INSERT INTO state VALUES ('s', 0)")
        self._encoded = self.rows(0)
        self._stored = 0

    def count_texts(self, index: int) -> None:
        """tiktoken on turn ``index``'s user message and on the reply."""
        self._encoding.encode_ordinary(user_text(index))
        self._encoding.encode_ordinary(REPLY)

    def rows(self, index: int) -> list[str]:
        """JSON of turn ``index``'s two new rows."""
        return [
            json.dumps({"role": role, "content": [{"type": "text", "text": text}]})
            for role, text in (("user", user_text(index)), ("assistant", REPLY))
        ]

    def transaction(self, index: int) -> None:
        """One WAL transaction: two rows inserted, the state row updated."""
        conn, stored = self._conn, self._stored
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(
            "INSERT INTO messages VALUES ('s', ?, ?, 30)",
            [(stored, self._encoded[0]), (stored + 1, self._encoded[1])],
        )
        conn.execute("UPDATE state SET turns = turns + 1 WHERE session = 's'")
        conn.execute("COMMIT")
        self._stored = stored + 2

    def step(self, index: int) -> None:
        """The whole floor of turn ``index``: its texts counted, its rows made and stored."""
        self.count_texts(index)
        self.rows(index)
        self.transaction(index)

    def close(self) -> None:
        """Close the floor's database."""
        self._conn.close()


def floor(count: int) -> dict[str, float]:
    """The floor's parts in µs: tiktoken, JSON of the rows, one WAL SQLite transaction."""
    work = Floor()
    parts = {
        "tiktoken on the two new texts": median_us(timed(work.count_texts, count)),
        "JSON of the two new rows": median_us(timed(work.rows, count)),
        "one WAL SQLite transaction": median_us(timed(work.transaction, count)),
    }
    work.close()
    return parts


class Paired:
    """The floor measured in blocks between a figure's turns, beside them.

    A shared machine's speed drifts within a run, by two times and more: a figure is
    divided by the floor measured over the same stretch of time, not by one measured
    at the start. Every :data:`BLOCK_TURNS` turns, the floor runs :data:`BLOCK_FLOORS`
    times in a row; the first :data:`BLOCK_WARMUP` of a block are not kept, so the kept
    ones run with warm caches, as the floor on its own does (a single run between two
    turns finds its tables evicted and costs a third to a half more).
    """

    def __init__(self) -> None:
        self._floor = Floor()
        self.samples: list[float] = []

    def between(self, index: int) -> None:
        """Before turn number ``index`` of a figure: a block of floors, every few turns."""
        if index % BLOCK_TURNS:
            return
        for step in range(BLOCK_FLOORS):
            start = time.perf_counter()
            self._floor.step(index + step)
            if step >= BLOCK_WARMUP:
                self.samples.append(time.perf_counter() - start)

    def median_us(self) -> float:
        """The median floor of the samples, in µs."""
        return median_us(self.samples)

    def close(self) -> None:
        """Close the floor's database."""
        self._floor.close()


BLOCK_TURNS = 100
"""How many turns of a figure run between two blocks of floors (:class:`Paired`)."""
BLOCK_FLOORS = 50
"""How many floors a block runs."""
BLOCK_WARMUP = 10
"""How many floors start a block unkept (its caches warming)."""


def quiet_config() -> Any:
    """The autosummary config that never summarizes here: a window of a million tokens.

    The slot's window grows by two messages a turn, and each request carries all of them.
    """
    from agentcore_autosummary import SummaryConfig

    return SummaryConfig(max_context_tokens=1_000_000)


def busy_config() -> Any:
    """The autosummary config that summarizes every 26 turns or so, the window kept small."""
    from agentcore_autosummary import SummaryConfig

    return SummaryConfig(max_context_tokens=2_000, max_summary_tokens=200)


def decoding(count: int) -> list[tuple[str, float, float, float]]:
    """µs to decode one stored message: json.loads alone, then cattrs, then the store's decode.

    For a text message and for an assistant message with two tool calls, each with its
    stored token counts; "cattrs" is json.loads plus the converter (every message took
    that path before the fast one).
    """
    from agentcore import Message, ToolUseBlock
    from agentcore.messages import set_token_count
    from agentcore.serialization import converter
    from agentcore.stores._codec import TOKENS_FIELD, decode_message, encode_message

    text = Message.user(user_text(1))
    calls = Message.assistant(
        "Looking it up.",
        [ToolUseBlock(f"call_{n}", "lookup", {"query": user_text(n), "limit": 5}) for n in (1, 2)],
    )
    rows = []
    for label, message in (("text message", text), ("two tool calls", calls)):
        set_token_count(message, "o200k_base", 27)
        body = encode_message(message)

        def cattrs_decode(index: int, body: str = body) -> object:
            data = json.loads(body)
            data.pop(TOKENS_FIELD, None)
            return converter.structure(data, Message)

        def plain_loads(index: int, body: str = body) -> object:
            return json.loads(body)

        def store_decode(index: int, body: str = body) -> object:
            return decode_message(body, "a", index, "s")

        loads = median_us(timed(plain_loads, count))
        old = median_us(timed(cattrs_decode, count))
        new = median_us(timed(store_decode, count))
        rows.append((label, loads, old, new))
    return rows


class BenchSession:
    """One session of the bench's turns, answered by :class:`InstantModel`.

    ``sqlite``: on :class:`~agentcore.SqliteStore` (a file of its own), else
    InMemoryStore; ``summary``: autosummary on with that config (the slot Focused);
    ``tools``: that many tools registered; ``lease``: with the session lease (the
    builder's default); off, as one session object per session runs, unless a row
    says otherwise, so the rows stay comparable with the checkouts before the lease
    was the default.
    """

    def __init__(self, session: Any, model: InstantModel, store: Any) -> None:
        self.session = session
        self.model = model
        self.store = store

    @classmethod
    def open(
        cls, *, sqlite: bool, summary: Any = None, tools: int = 0, lease: bool = False
    ) -> BenchSession:
        """A new session, not loaded yet (its first turn loads it)."""
        from agentcore import (
            Agent,
            AgentBuilder,
            AgentSession,
            FocusedConfig,
            InMemoryStore,
            SqliteStore,
            ToolRegistry,
        )

        model = InstantModel()
        store: Any
        if sqlite:
            store = SqliteStore(Path(tempfile.mkdtemp(prefix="turn-floor-")) / "turns.db")
        else:
            store = InMemoryStore()
        # Plugins are registered by hand, never discovered: an older checkout run by --old
        # would otherwise load this tree's other plugins (their entry points) into its core.
        builder = AgentBuilder().provider(model).store(store).load_plugins(False)
        if hasattr(builder, "session_lease"):  # an older checkout (--old) may not have it
            builder.session_lease(lease)
        if summary is not None:
            from agentcore_autosummary import plugin as autosummary_plugin

            builder.plugin(autosummary_plugin).setting("summary_config", summary)
        if tools:
            registry = ToolRegistry()
            for index in range(tools):

                def lookup(query: str, limit: int = 5) -> str:
                    """Look the query up in the knowledge base and return the best matches.

                    Args:
                        query: what to look for.
                        limit: how many matches to return at most.
                    """
                    return query

                registry.register(lookup, name=f"lookup_{index}")
            builder.tool_registry(registry)
        mode: Any = FocusedConfig() if summary is not None else "full"
        agent = Agent("bench", system_prompt=SYSTEM_PROMPT)
        return cls(AgentSession(agent, "s", builder.build(), mode), model, store)

    async def turn(self, index: int) -> bool:
        """Turn ``index`` (its user message :func:`user_text`); whether it made a summary call."""
        before = self.model.summaries
        await self.session.submit_turn(user_text(index))
        return self.model.summaries != before

    async def close(self) -> None:
        """Close the session, and its store when it is a file."""
        await self.session.aclose()
        if hasattr(self.store, "path"):
            await self.store.close()


async def turns(
    *,
    sqlite: bool,
    summary: Any = None,
    tools: int = 0,
    count: int = TURNS,
    paired: Paired | None = None,
    lease: bool = False,
) -> tuple[list[float], list[float], list[float]]:
    """Seconds of each turn of one session, of those that made a summary call, and of the others.

    The session is a :class:`BenchSession` (``sqlite``, ``summary``, ``tools`` and
    ``lease`` as there); ``paired``: the floor is measured between the timed turns
    (see :class:`Paired`).
    """
    bench = BenchSession.open(sqlite=sqlite, summary=summary, tools=tools, lease=lease)
    for index in range(WARMUP):
        await bench.turn(index)
    every: list[float] = []
    summarizing: list[float] = []
    others: list[float] = []
    for index in range(WARMUP, WARMUP + count):
        if paired is not None:
            paired.between(index - WARMUP)
        start = time.perf_counter()
        summarized = await bench.turn(index)
        elapsed = time.perf_counter() - start
        every.append(elapsed)
        (summarizing if summarized else others).append(elapsed)
    await bench.close()
    return every, summarizing, others


class DirectWrites:
    """A turn's own store work, called directly: no session, no hooks, no model.

    Each :meth:`write` is the one a session makes for a turn on SqliteStore: the
    user's message and the reply made and counted (tiktoken, cl100k), then
    ``SqliteStore.write`` of a ``StoreWrite`` with both messages, the session state, a
    new turn id and the slot's guard. That is the floor's work plus what the store
    adds to keep its promises (the conflict check, the idempotency row, the state's
    JSON, the encoding's checks): what a turn costs before any of the session's own
    machinery.
    """

    def __init__(self, store: Any) -> None:
        from agentcore import Usage
        from agentcore.tokens import get_token_counter

        self._store = store
        self._counter = get_token_counter(None)
        self._stored = 2  # the messages the slot holds
        self._usage = Usage(input_tokens=100, output_tokens=20)

    @classmethod
    async def open(cls) -> DirectWrites:
        """A SQLite file holding one session of one turn (its slot and config stored)."""
        from agentcore import Agent, AgentBuilder, AgentSession, SqliteStore

        store = SqliteStore(Path(tempfile.mkdtemp(prefix="turn-floor-")) / "direct.db")
        builder = AgentBuilder().provider(InstantModel()).store(store).load_plugins(False)
        session = AgentSession(Agent("bench", system_prompt=SYSTEM_PROMPT), "s", builder.build())
        await session.submit_turn(user_text(0))  # the session, its slot and its config stored
        await session.aclose()
        return cls(store)

    async def write(self, index: int) -> None:
        """The store work of turn ``index``: its two messages counted and stored."""
        from agentcore import Message
        from agentcore.stores import MessageAppend, SessionState, StoreWrite

        messages = (Message.user(user_text(index)), Message.assistant(REPLY))
        for message in messages:
            await self._counter.count_message_async(message)
        state = SessionState(turn_index=index, cost={"turn": self._usage})
        batch = StoreWrite(
            "s",
            appends={"default": MessageAppend(self._stored, messages)},
            state=state,
            turn_id=os.urandom(16).hex(),
        )
        await self._store.write(batch)
        self._stored += 2

    async def close(self) -> None:
        """Close the store."""
        await self._store.close()


async def store_write_times(count: int = TURNS, paired: Paired | None = None) -> list[float]:
    """Seconds of each of ``count`` :meth:`DirectWrites.write` calls, after a warm-up."""
    direct = await DirectWrites.open()
    for index in range(1, 1 + WARMUP):
        await direct.write(index)
    samples = []
    for index in range(1 + WARMUP, 1 + WARMUP + count):
        if paired is not None:
            paired.between(index - 1 - WARMUP)
        start = time.perf_counter()
        await direct.write(index)
        samples.append(time.perf_counter() - start)
    await direct.close()
    return samples


async def beside_store_write(
    count: int = TURNS, paired: Paired | None = None
) -> tuple[list[float], list[float]]:
    """Seconds of the SQLite turn with autosummary and of its direct store write, side by side.

    The published figure's two sides, in one event loop, each on a SQLite file of its
    own: the :class:`BenchSession` of :func:`quiet_config` (autosummary, never summarizing)
    and :class:`DirectWrites` of the same turns (the same user message and reply), in
    alternating blocks of :data:`BLOCK_TURNS` turns (which goes first swapped every
    block), the floor's blocks between them (``paired``), after a warm-up of each. A
    shared machine's speed drifts within a run: measured in turns, the two sides see
    the same stretch of time, so their ratio does not drift with it.
    """
    bench = BenchSession.open(sqlite=True, summary=quiet_config())
    direct = await DirectWrites.open()
    for index in range(WARMUP):
        await bench.turn(index)
        await direct.write(index)
    turn_times: list[float] = []
    write_times: list[float] = []
    for block_start in range(0, count, BLOCK_TURNS):
        if paired is not None:
            paired.between(block_start)
        block = range(WARMUP + block_start, WARMUP + min(count, block_start + BLOCK_TURNS))
        sides = [(turn_times, bench.turn), (write_times, direct.write)]
        if (block_start // BLOCK_TURNS) % 2:
            sides.reverse()
        for samples, work in sides:
            for index in block:
                start = time.perf_counter()
                await work(index)
                samples.append(time.perf_counter() - start)
    await bench.close()
    await direct.close()
    return turn_times, write_times


async def resume_times(sizes: tuple[int, ...] = (10, 50_000)) -> dict[str, list[float]]:
    """Median seconds to resume a summarized session of each of ``sizes`` messages, per store.

    Every session is stored first; then their resumes alternate, one of each size a
    round (after one untimed round), so a change of the machine's load or of the store's
    files (the WAL of the largest session's writes) falls on every size alike.
    """
    from agentcore import InMemoryStore, SqliteStore

    if __package__ != "bench":  # run as a file (python bench/turn_floor.py)
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench.resume import RUNS, populate, resume, summarized

    figures: dict[str, list[float]] = {}
    for name in ("memory", "SQLite"):
        store: Any = (
            InMemoryStore()
            if name == "memory"
            else SqliteStore(Path(tempfile.mkdtemp(prefix="turn-floor-")) / "resume.db")
        )
        for count in sizes:
            await populate(store, f"resume-{count}", count, summarized(count))
        times: list[list[float]] = [[] for _ in sizes]
        for round_index in range(RUNS + 1):
            for position, count in enumerate(sizes):
                start = time.perf_counter()
                await resume(store, f"resume-{count}")
                if round_index:  # the first round warms up
                    times[position].append(time.perf_counter() - start)
        figures[name] = [statistics.median(each) for each in times]
        await store.close()
    return figures


async def live_memory(summary: Any, count: int = 10_000) -> tuple[int, int, float]:
    """After ``count`` turns on SQLite with ``summary``: messages stored, held, and MiB traced.

    The traced memory is tracemalloc's current size after a full collection, counted
    from the session's start (what the session and its store gained over the turns).
    """
    import gc
    import tracemalloc

    from agentcore import Agent, AgentBuilder, AgentSession, FocusedConfig, SqliteStore
    from agentcore_autosummary import plugin as autosummary_plugin

    store = SqliteStore(Path(tempfile.mkdtemp(prefix="turn-floor-")) / "live.db")
    builder = AgentBuilder().provider(InstantModel()).store(store).load_plugins(False)
    builder.plugin(autosummary_plugin).setting("summary_config", summary)
    gc.collect()
    tracemalloc.start()
    try:
        agent = Agent("bench", system_prompt=SYSTEM_PROMPT)
        session = AgentSession(agent, "live", builder.build(), FocusedConfig())
        for index in range(count):
            await session.submit_turn(user_text(index))
        slot = await session.get_slot()
        stored, held = slot.message_count(), slot.message_count() - slot.offset
        gc.collect()
        traced = tracemalloc.get_traced_memory()[0] / 2**20
    finally:
        tracemalloc.stop()
    await session.aclose()
    await store.close()
    return stored, held, traced


CHILD_RUNS = {
    "memory": ("memory turn without plugins", "µs"),
    "sqlite": ("SQLite turn without plugins", "µs"),
    "sqlite-summary": ("SQLite turn, autosummary (never summarizes here)", "µs"),
    "ratio": ("SQLite turn with autosummary / its direct store write (the published figure)", "×"),
    "summary-turn": ("summary turn, instant summarizer (median of the summary turns)", "ms"),
}
"""What ``--old`` compares, by the name a child process is given: its label and unit."""


def child(count: int, kind: str) -> None:
    """One figure of :data:`CHILD_RUNS`, printed as one number in its unit: run in a child."""
    if kind == "ratio":
        turn_times, write_times = asyncio.run(beside_store_write(count))
        print(f"{statistics.median(turn_times) / statistics.median(write_times):.3f}")
        return
    options: dict[str, Any] = {"sqlite": kind != "memory"}
    if kind == "sqlite-summary":
        options["summary"] = quiet_config()
    if kind == "summary-turn":
        options["summary"] = busy_config()
    every, summarizing, _ = asyncio.run(turns(count=count, **options))
    if kind == "summary-turn":
        print(f"{median_us(summarizing) / 1e3:.3f}")
        return
    print(f"{median_us(every):.1f}")


def child_figure(path: Path | None, count: int, kind: str) -> float:
    """:func:`child` run with ``path`` (an older checkout, its plugin too) first on the path."""
    env = dict(os.environ)
    if path is not None:
        paths = [str(path), str(path / "plugins" / "autosummary"), env.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(paths).rstrip(os.pathsep)
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        kind,
        "--turns",
        str(count),
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the child run failed ({path or 'this checkout'}):\n{done.stderr}")
    return float(done.stdout.split()[-1])


def row(label: str, value: float, base: float) -> str:
    """One line of the table: a label, µs, the floor ``base`` beside it and the multiple of it."""
    return f"| {label} | {value:,.0f} µs | {base:.1f} µs | {value / base:.2f}× |"


def main() -> None:
    """Run every measure and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=TURNS, help="turns per figure")
    parser.add_argument("--old", type=Path, help="an older checkout to compare the memory turn")
    parser.add_argument("--child", choices=sorted(CHILD_RUNS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.turns, args.child)
        return
    quiet, busy = quiet_config(), busy_config()
    parts = floor(args.turns)
    base = sum(parts.values())
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.turns} turns a figure")
    print("\n| floor of a turn | µs |\n|---|---:|")
    for label, value in parts.items():
        print(f"| {label} | {value:.1f} |")
    print(f"| **floor** | **{base:.1f}** |")

    print("\n| decoding one stored message | json.loads | cattrs | agentcore | × json.loads |")
    print("|---|---:|---:|---:|---:|")
    for label, loads, old, new in decoding(args.turns * 10):
        print(f"| {label} | {loads:.1f} µs | {old:.1f} µs | {new:.1f} µs | {new / loads:.2f}× |")

    runs: list[tuple[str, dict[str, Any]]] = [
        ("memory, no plugins", {"sqlite": False}),
        ("SQLite, no plugins", {"sqlite": True}),
        ("SQLite, no plugins, the session lease on (the default)", {"sqlite": True, "lease": True}),
        ("SQLite, autosummary (never summarizes here)", {"sqlite": True, "summary": quiet}),
        ("SQLite, autosummary, 4 tools", {"sqlite": True, "summary": quiet, "tools": 4}),
        ("SQLite, autosummary, 40 tools", {"sqlite": True, "summary": quiet, "tools": 40}),
        ("SQLite, autosummary summarizing (instant summarizer)", {"sqlite": True, "summary": busy}),
    ]
    print("\n| turn (median) | time | floor beside it | × floor |\n|---|---:|---:|---:|")
    paired = Paired()
    direct = asyncio.run(store_write_times(args.turns, paired))
    print(
        row(
            "a turn's own store work, called directly (no session)",
            median_us(direct),
            paired.median_us(),
        )
    )
    paired.close()
    summary_turns: tuple[list[float], float] = ([], 0.0)
    for label, options in runs:
        paired = Paired()
        every, summarizing, others = asyncio.run(turns(count=args.turns, paired=paired, **options))
        beside = paired.median_us()
        paired.close()
        print(row(label, median_us(every), beside), flush=True)
        if summarizing:
            summary_turns = (summarizing, beside)
            label = f"  of which the {len(summarizing)} summary turns"
            print(row(label, median_us(summarizing), beside))
            label = f"  and the {len(others)} other turns (a window the summaries keep small)"
            print(row(label, median_us(others), beside))

    paired = Paired()
    turn_times, write_times = asyncio.run(beside_store_write(args.turns, paired))
    beside = paired.median_us()
    paired.close()
    turn_us, write_us = median_us(turn_times), median_us(write_times)
    print(
        f"\n| the turn beside its store write (blocks of {BLOCK_TURNS} turns, alternating) "
        "| median | floor beside it | × floor |\n|---|---:|---:|---:|"
    )
    print(row("SQLite turn, autosummary (never summarizes here)", turn_us, beside))
    print(row("its own store work, called directly (no session)", write_us, beside))
    ratio = turn_us / write_us
    print(f"| **the turn / its store write: the published figure** | **{ratio:.2f}×** |||")
    summarizing, beside = summary_turns
    if summarizing:
        label = f"summary turn, instant summarizer (median of {len(summarizing)}, as above)"
        value = median_us(summarizing)
        print(f"| {label} | {value / 1e3:.2f} ms | {beside:.1f} µs | {value / beside:.0f}× |")

    print("\n| resume (median of 21) | 10 messages | 50,000 messages | 50,000 / 10 |")
    print("|---|---:|---:|---:|")
    for name, (small, large) in asyncio.run(resume_times()).items():
        print(f"| {name} | {small * 1e3:.2f} ms | {large * 1e3:.2f} ms | {large / small:.2f}× |")

    stored, held, traced = asyncio.run(live_memory(busy))
    print("\n| live session, SQLite, autosummary summarizing | after 10,000 turns |\n|---|---:|")
    print(f"| messages stored | {stored:,} |\n| messages held | {held:,} |")
    print(f"| traced memory (after a full collection) | {traced:.2f} MiB |", flush=True)

    if args.old is not None:
        count = min(args.turns, 2_000)
        for kind, (label, unit) in CHILD_RUNS.items():
            new_runs: list[float] = []
            old_runs: list[float] = []
            for _ in range(PAIRS):
                old_runs.append(child_figure(args.old, count, kind))
                new_runs.append(child_figure(None, count, kind))
            old_value, new_value = statistics.median(old_runs), statistics.median(new_runs)
            digits = 1 if unit == "µs" else 2
            print(f"\n{label}, {PAIRS} alternating child processes each:")
            print("| checkout | median | runs |\n|---|---:|---|")
            for name, value, values in (
                (args.old, old_value, old_runs),
                ("this one", new_value, new_runs),
            ):
                listed = ", ".join(f"{v:.{digits}f}" for v in values)
                print(f"| {name} | {value:.{digits}f} {unit} | {listed} |")
            print(f"new / old: {new_value / old_value:.2f}×", flush=True)


if __name__ == "__main__":
    main()
