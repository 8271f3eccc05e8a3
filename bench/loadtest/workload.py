"""What every process of the load test agrees on: the database, the agent, the turns, the model.

Each turn's user message carries a marker ``[[s<session>:t<turn>]]`` and the fake model's reply
repeats it, so the checker can tell from the stored history alone whether a turn is missing,
stored twice or out of place. A summary lists the markers of the messages it was made from, so
the checker can tell whether a stored summary matches the history it claims to cover.
"""

from __future__ import annotations

import asyncio
import contextvars
import re
import time
from typing import Any

from agentcore import (
    Agent,
    AgentBuilder,
    AgentBundle,
    FocusedConfig,
    LlmRequest,
    LlmResponse,
    MemoryStore,
    Message,
    SqliteStore,
)
from agentcore.testing import MockProvider
from agentcore.usage import Usage

AGENT = Agent("loadtest", system_prompt="You are a terse assistant in a load test.")
SLOT = "default"
"""The slot every turn of the load test goes to."""

MODE = FocusedConfig()
"""The slot's mode: Focused, so that each summary replaces the messages it covers."""

SUMMARY_CONFIG: dict[str, Any] = {
    # Small window so that every session is summarized several times in 20 turns.
    "max_context_tokens": 600,
    "trigger_token_ratio": 0.5,
    "debounce_turns": 1,
    "mode": "background",
    "strategy": "incremental",
    "keep_recent_tokens": 120,
    "max_summary_tokens": 150,
}

_MARKER = re.compile(r"\[\[s(\d+):t(\d+)\]\]")

MODEL_SECONDS: contextvars.ContextVar[list[float]] = contextvars.ContextVar("model_seconds")
"""Per job: seconds spent inside turn calls of the fake model (excluded from the overhead)."""


def session_id(index: int) -> str:
    """The id of the load test's session number ``index``."""
    return f"load-{index:05d}"


def marker(session: int, turn: int) -> str:
    """The marker of one turn."""
    return f"[[s{session}:t{turn}]]"


def markers(text: str) -> list[tuple[int, int]]:
    """Every (session, turn) marker in ``text``, in order."""
    return [(int(s), int(t)) for s, t in _MARKER.findall(text)]


def user_text(session: int, turn: int) -> str:
    """The user message of turn ``turn`` of session ``session``, about 60 tokens long."""
    filler = " ".join(f"word{(session * 31 + turn * 7 + i) % 97}" for i in range(40))
    return f"{marker(session, turn)} question {turn}: {filler}"


def open_store(db: str) -> MemoryStore:
    """The store ``db`` names: a ``postgresql://`` DSN or an SQLite file path."""
    if db.startswith(("postgresql://", "postgres://")) or "=" in db:
        from agentcore.stores import PostgresStore

        return PostgresStore(db, max_size=4)
    return SqliteStore(db)


class FakeModel:
    """Answers turns with their marker and summaries with the markers they were given."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def respond(self, request: LlmRequest) -> LlmResponse:
        text = "\n".join(message.text for message in request.messages)
        # The usage a real model reports, roughly (4 characters a token), without the cost of
        # a tokenizer: autosummary's trigger reads it.
        usage = Usage(len(text) // 4 + 10, 10)
        if request.purpose == "summary":
            seen: list[str] = []
            for found in markers(text):
                tag = marker(*found)
                if tag not in seen:
                    seen.append(tag)
            return LlmResponse(Message.assistant("SUMMARY " + " ".join(seen)), usage)
        started = time.perf_counter()
        if self.delay:
            await asyncio.sleep(self.delay)
        spent = MODEL_SECONDS.get(None)
        if spent is not None:
            spent[0] += time.perf_counter() - started
        found = markers(request.messages[-1].text)
        tag = marker(*found[-1]) if found else "[[none]]"
        return LlmResponse(Message.assistant(f"reply {tag} ok"), usage)


def build_bundle(store: MemoryStore, model_delay: float, summaries: bool = True) -> AgentBundle:
    """A bundle on ``store`` with the fake model and (when ``summaries``) autosummary."""
    provider = MockProvider(responder=FakeModel(model_delay).respond)
    builder = AgentBuilder().provider(provider)
    builder.store(store).load_plugins(summaries)
    if summaries:
        builder.setting("summary_config", SUMMARY_CONFIG)
    return builder.build()
