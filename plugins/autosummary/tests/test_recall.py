"""Recall: a fact a summary left out is found again, by the tool and by automatic recall."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from summary_helpers import TINY_WINDOW, StrictServer

from agentcore import (
    AgentSession,
    FocusedConfig,
    InMemoryStore,
    LlmRequest,
    LlmResponse,
    MemoryStore,
    Message,
    SqliteStore,
    ToolUseBlock,
    TurnContext,
    hookimpl,
)
from agentcore.testing import MockProvider
from agentcore_autosummary import RecallInfo, SummaryConfig
from agentcore_autosummary.recalling import history
from agentcore_autosummary.recalling.automatic import NEW_MESSAGE_LABEL, RECALL_LABEL
from agentcore_autosummary.recalling.tool import RECALL_TOOL_NAME

SERVICES = ["auth", "billing", "search", "mailer", "ledger", "gateway"]
"""Facts of one pattern: a port each. The summaries (``summary #N``) keep none of them."""

MakeSession = Callable[..., AgentSession]


def config(recall: str, **overrides: object) -> SummaryConfig:
    fields: dict[str, object] = {
        **TINY_WINDOW,
        "trigger_token_ratio": 0.08,
        "keep_recent_tokens": 40,
        "debounce_turns": 1,
        "recall": recall,
        "retention_check": "off",  # the quotes would keep the ports: a summary that loses them
    }
    return SummaryConfig(**{**fields, **overrides})  # type: ignore[arg-type]


class Model:
    """Summaries that lose every fact; a turn that calls ``recall_history`` when asked to."""

    def __init__(self, query: str | None = None, turns: str | None = None) -> None:
        self.query = query
        self.turns_asked = turns
        self.turns: list[LlmRequest] = []
        self.summaries = 0

    def __call__(self, request: LlmRequest) -> str | LlmResponse:
        if request.purpose == "summary":
            self.summaries += 1
            return f"summary #{self.summaries}: they talked about services."
        self.turns.append(request)
        last = request.messages[-1]
        offered = [spec.name for spec in request.tools]
        asked = last.role == "user" and "Which port" in last.text
        if self.query and asked and RECALL_TOOL_NAME in offered:
            arguments: dict[str, object] = {"query": self.query, "limit": 2}
            if self.turns_asked is not None:
                arguments["turns"] = self.turns_asked
            call = ToolUseBlock("r1", RECALL_TOOL_NAME, arguments)
            return LlmResponse(Message.assistant("", [call]), stop_reason="tool_use")
        if last.role == "tool":
            return f"Found it: {last.text}"
        return "Noted."


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MemoryStore]:
    """Each searchable store: memory, SQLite, and PostgreSQL when a server is given."""
    if request.param == "memory":
        yield InMemoryStore()
        return
    if request.param == "sqlite":
        async with SqliteStore(tmp_path / "recall.db") as sqlite:
            yield sqlite
        return
    dsn = os.environ.get("AGENTCORE_TEST_POSTGRES_DSN")
    if not dsn:
        pytest.skip("AGENTCORE_TEST_POSTGRES_DSN is not set")
    from agentcore.stores import PostgresStore

    async with PostgresStore(dsn) as postgres:
        yield postgres


def on_store(
    make_session: MakeSession,
    store: MemoryStore,
    responder: Callable[[LlmRequest], str | LlmResponse],
    summary: SummaryConfig,
    name: str,
) -> AgentSession:
    """A session of its own id on ``store`` (a PostgreSQL server outlives a test's sessions)."""
    return make_session(
        MockProvider(responder=responder),
        summary=summary,
        mode=FocusedConfig(),
        store=store,
        session_id=f"{name}-{uuid.uuid4().hex}",
    )


async def tell_the_ports(session: AgentSession) -> None:
    for number, service in enumerate(SERVICES):
        await session.submit_turn(f"Note: the {service} service listens on port {8440 + number}.")
    for filler in range(6):
        await session.submit_turn(f"Moving on to checklist item {filler} of the rollout plan.")


def recalled_blocks(request: LlmRequest) -> list[str]:
    return [m.text for m in request.messages if m.text.startswith(RECALL_LABEL)]


async def assert_summarized_away(session: AgentSession) -> None:
    """The ledger's fact is out of the context: the summary covers it."""
    slot = await session.get_slot()
    context = "\n".join(m.text for m in slot.load_messages())
    assert "8444" not in context, "the ledger fact is still in the context"


async def test_the_tool_finds_a_fact_the_summary_left_out(
    make_session: MakeSession, store: MemoryStore
) -> None:
    model = Model(query="ledger port")
    session = on_store(make_session, store, model, config("tool"), "tool")
    await tell_the_ports(session)
    assert model.summaries > 0
    reply = await session.submit_turn("Which port does the ledger service use?")
    assert "ledger service listens on port 8444" in reply.text
    result = reply.text.removeprefix("Found it: ")
    sent = model.turns[-1]
    in_request = {m.text for m in sent.messages if m.role != "tool"}
    assert "[turn 4, user] Note: the ledger service listens on port 8444." in result
    for line in result.splitlines():
        assert line.startswith("[turn "), line
        assert line.split("] ", 1)[1] not in in_request  # never what the request holds


CHANGED_DECISIONS = [
    "Decision for the portal: the database is PostgreSQL 15.",
    "We will keep the session cache in Redis.",
    "Update from the review: the database is now MariaDB 11 instead.",
    "We are not using Redis after all: the session cache stays in process memory.",
]
"""Two values the conversation changed: one replaced, one withdrawn."""


@pytest.mark.parametrize("recall", ["auto", "tool"])
async def test_recall_never_brings_back_a_value_a_later_message_changed(
    make_session: MakeSession, store: MemoryStore, recall: str
) -> None:
    # The summary kept nothing; the old statements match the question as well as the
    # new ones. Recalled beside them, the old values would be read as current.
    questions = {
        "Which database do we use?": ("database", "MariaDB 11", "PostgreSQL"),
        "Where does the session cache live?": ("session cache", "process memory", "Redis."),
    }
    answers: list[str] = []
    model = Model()

    def respond(request: LlmRequest) -> str | LlmResponse:
        last = request.messages[-1]
        asked = questions.get(last.text) if request.purpose != "summary" else None
        if asked is not None and recall == "tool":
            call = ToolUseBlock("r1", RECALL_TOOL_NAME, {"query": asked[0]})
            return LlmResponse(Message.assistant("", [call]), stop_reason="tool_use")
        if request.purpose != "summary" and last.role == "tool":
            answers.append(last.text)
        return model(request)

    session = on_store(make_session, store, respond, config(recall), f"changed-{recall}")
    for decision in CHANGED_DECISIONS:
        await session.submit_turn(decision)
    await tell_the_ports(session)
    context = "\n".join(m.text for m in (await session.get_slot()).load_messages())
    assert "MariaDB" not in context and "Redis" not in context, "the decisions are in the context"
    for question, (_, current, old) in questions.items():
        await session.submit_turn(question)
        if recall == "auto":
            (recalled,) = recalled_blocks(model.turns[-1])
        else:
            recalled = answers[-1]
        assert current in recalled, recalled
        assert old not in recalled, recalled


@pytest.mark.parametrize("question", ["预算是多少？", "What is the budget now?"])
async def test_a_question_is_not_read_as_changing_the_value_it_asks_for(
    make_session: MakeSession, question: str
) -> None:
    # "预算是多少？" names the budget and gives it no value: its question word is not a
    # new budget, so the recalled statement keeps it.
    model = Model()
    session = make_session(
        MockProvider(responder=model), summary=config("auto"), mode=FocusedConfig()
    )
    await session.submit_turn("已更新：预算是39万元 (the budget is 390,000 yuan).")
    await tell_the_ports(session)
    await session.submit_turn(question)
    (recalled,) = recalled_blocks(model.turns[-1])
    assert "预算是39万元" in recalled


async def test_recall_reads_what_came_after_from_the_store_a_few_messages_at_a_time(
    make_session: MakeSession, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The update lies many reads back from the messages the slot holds.
    monkeypatch.setattr(history, "_CHUNK_MESSAGES", 3)
    model = Model()
    session = on_store(make_session, store, model, config("auto"), "chunks")
    for decision in CHANGED_DECISIONS:
        await session.submit_turn(decision)
    for _ in range(3):
        await tell_the_ports(session)
    assert (await session.get_slot()).offset > 20, "the slot holds the whole history"
    await session.submit_turn("Which database do we use?")
    (recalled,) = recalled_blocks(model.turns[-1])
    assert "MariaDB 11" in recalled
    assert "PostgreSQL" not in recalled


class _UnreadableHistory(InMemoryStore):
    """A store whose stored history cannot be read back once ``broken`` is set."""

    broken = False

    async def load_messages(
        self, session_id: str, slot_id: str, start: int = 0, stop: int | None = None
    ) -> list[Message]:
        if self.broken:
            raise OSError("the history cannot be read")
        return await super().load_messages(session_id, slot_id, start, stop)


async def test_recall_goes_out_when_what_came_after_cannot_be_read(
    make_session: MakeSession,
) -> None:
    store = _UnreadableHistory()
    model = Model()
    session = make_session(
        MockProvider(responder=model), summary=config("auto"), mode=FocusedConfig(), store=store
    )
    for decision in CHANGED_DECISIONS:
        await session.submit_turn(decision)
    await tell_the_ports(session)
    store.broken = True
    reply = await session.submit_turn("Which database do we use?")
    assert reply.text == "Noted."
    (recalled,) = recalled_blocks(model.turns[-1])
    assert "MariaDB 11" in recalled  # unpruned, but recalled


@pytest.mark.parametrize(
    ("turns", "found"),
    [
        ("0-2", ["auth", "billing", "search"]),
        ("4", ["ledger"]),
        ("7-9", []),
        ("the start", None),
    ],
)
async def test_the_tool_narrows_a_search_to_the_turns_it_is_given(
    make_session: MakeSession, turns: str, found: list[str] | None
) -> None:
    model = Model(query="service listens port", turns=turns)
    session = make_session(
        MockProvider(responder=model), summary=config("tool"), mode=FocusedConfig()
    )
    await tell_the_ports(session)
    reply = await session.submit_turn("Which port does the ledger service use?")
    result = reply.text.removeprefix("Found it: ")
    if found is None:
        assert result.startswith("turns must be a turn or a range of turns")
        return
    if not found:
        assert result.startswith(f"No earlier message of turns {turns} matches")
        return
    lines = result.splitlines()
    assert all(line.startswith("[turn ") for line in lines), lines
    named = {
        service for service in SERVICES if any(f"the {service} service" in line for line in lines)
    }
    assert named and named <= set(found)


async def test_no_tool_is_offered_before_anything_is_summarized(make_session: MakeSession) -> None:
    model = Model(query="ledger port")
    session = make_session(
        MockProvider(responder=model),
        summary=config("tool"),
        mode=FocusedConfig(),
    )
    await session.submit_turn("The ledger service listens on port 8444.")
    assert model.summaries == 0
    assert all(RECALL_TOOL_NAME not in [s.name for s in r.tools] for r in model.turns)


async def test_automatic_recall_adds_the_matching_messages_to_the_request(
    make_session: MakeSession, store: MemoryStore
) -> None:
    model = Model()
    session = on_store(make_session, store, model, config("auto"), "auto")
    await tell_the_ports(session)
    await assert_summarized_away(session)
    await session.submit_turn("Which port does the ledger service use?")
    blocks = recalled_blocks(model.turns[-1])
    assert len(blocks) == 1
    assert "ledger service listens on port 8444" in blocks[0]
    assert "billing" not in blocks[0]  # holds one word of the question only
    # The block opens the user's own message, in this request only: no message is added.
    sent = model.turns[-1].messages
    assert sent[-1].role == "user"
    assert sent[-1].text == blocks[0]
    assert not [m for m in sent[:-1] if RECALL_LABEL in m.text]
    question = "Which port does the ledger service use?"
    assert sent[-1].text.endswith(f"\n\n{NEW_MESSAGE_LABEL}\n{question}")
    stored = [m.text for m in (await session.get_slot()).load_messages() if m.role == "user"]
    assert stored[-1] == question
    # A message about nothing summarized gets no block.
    await session.submit_turn("Thanks, that is all for today.")
    assert recalled_blocks(model.turns[-1]) == []


async def test_a_later_owner_of_another_module_leaves_a_recalled_owner_alone(
    make_session: MakeSession,
) -> None:
    # The advice names the checkout page at every turn, so "checkout" is a common word of
    # this conversation; among the clauses about who owns a module, it is the one word
    # that tells the checkout module's owner apart.
    model = Model()
    session = make_session(
        MockProvider(responder=model), summary=config("auto"), mode=FocusedConfig()
    )
    await session.submit_turn(
        "Ownership for the sprint. The localization module is owned by Caleb Haddad. "
        "The checkout module is owned by Priya Brandt. The search module is owned by Greta Okafor."
    )
    for step in range(8):
        await session.submit_turn(
            f"Tip {step}: the end-to-end tests should cover sign-in, search and checkout first."
        )
    await session.submit_turn(
        "Caleb Haddad moves on: the localization module is now owned by Silas Fischer."
    )
    for step in range(4):
        await session.submit_turn(f"Moving on to checklist item {step} of the rollout plan.")
    await session.submit_turn("Who owns the checkout module?")
    blocks = recalled_blocks(model.turns[-1])
    assert blocks and "The checkout module is owned by Priya Brandt" in blocks[0]
    await session.submit_turn("Who owns the localization module?")
    blocks = recalled_blocks(model.turns[-1])
    assert not blocks or "Caleb Haddad." not in blocks[0]


async def test_a_recalled_turn_and_the_summaries_ask_for_no_cache_entry_at_their_end(
    make_session: MakeSession,
) -> None:
    # Anthropic bills a cache entry above the input price: one at the end of a request no
    # later one starts with (the recalled copy of the user's message, a summary request)
    # would be paid for and never read.
    summaries: list[LlmRequest] = []
    model = Model()

    def respond(request: LlmRequest) -> str | LlmResponse:
        if request.purpose == "summary":
            summaries.append(request)
        return model(request)

    session = make_session(
        MockProvider(responder=respond), summary=config("auto"), mode=FocusedConfig()
    )
    await tell_the_ports(session)
    assert summaries and not [request for request in summaries if request.cache_newest]
    assert model.turns[-1].cache_newest
    await session.submit_turn("Which port does the ledger service use?")
    assert recalled_blocks(model.turns[-1])
    assert not model.turns[-1].cache_newest
    await session.submit_turn("Thanks, that is all for today.")
    assert model.turns[-1].cache_newest


async def test_automatic_recall_brings_the_sentence_that_answers_not_its_neighbours(
    make_session: MakeSession,
) -> None:
    model = Model()
    session = make_session(
        MockProvider(responder=model), summary=config("auto"), mode=FocusedConfig()
    )
    await session.submit_turn(
        "Owners for the sprint: the help center module is owned by Chloe Holm. The "
        "dashboards module is owned by Aiko Keller. The onboarding module is owned by "
        "Dana Ferreira."
    )
    await tell_the_ports(session)
    context = "\n".join(m.text for m in (await session.get_slot()).load_messages())
    assert "Aiko Keller" not in context, "the owners are still in the context"
    await session.submit_turn("Who owns the dashboards module?")
    (block,) = recalled_blocks(model.turns[-1])
    assert "The dashboards module is owned by Aiko Keller." in block
    assert "Chloe Holm" not in block and "Dana Ferreira" not in block


async def test_recall_never_brings_back_a_theory_a_later_message_withdrew(
    make_session: MakeSession,
) -> None:
    model = Model()
    session = make_session(
        MockProvider(responder=model), summary=config("auto"), mode=FocusedConfig()
    )
    await session.submit_turn("My guess: the root cause is a slow upstream cache.")
    await session.submit_turn(
        "The graphs rule it out: it is not a slow upstream cache after all. The root cause "
        "is a noisy neighbour on the node."
    )
    await tell_the_ports(session)
    context = "\n".join(m.text for m in (await session.get_slot()).load_messages())
    assert "noisy neighbour" not in context, "the root cause is still in the context"
    await session.submit_turn("What is the root cause of the incident?")
    (block,) = recalled_blocks(model.turns[-1])
    assert "The root cause is a noisy neighbour on the node." in block
    assert "slow upstream cache" not in block, block


async def test_a_question_asked_again_recalls_what_answered_it_not_the_question(
    make_session: MakeSession,
) -> None:
    model = Model()
    session = make_session(
        MockProvider(responder=model), summary=config("auto"), mode=FocusedConfig()
    )
    question = "Which port does the ledger service use for health checks?"
    await session.submit_turn(question)
    await session.submit_turn(question)
    await session.submit_turn("The ledger service uses port 9444 for health checks.")
    await tell_the_ports(session)
    context = "\n".join(m.text for m in (await session.get_slot()).load_messages())
    assert "9444" not in context, "the answer is still in the context"
    await session.submit_turn(question)
    (block,) = recalled_blocks(model.turns[-1])
    assert "port 9444 for health checks" in block
    assert block.count(question) == 1  # the user's own, after the recalled part


async def test_advice_given_several_times_is_recalled_once(make_session: MakeSession) -> None:
    model = Model()
    session = make_session(
        MockProvider(responder=model), summary=config("auto"), mode=FocusedConfig()
    )
    advice = "Blameless wording in the postmortem makes people share what they did."
    for opening in ("Good point.", "Agreed, and one more thing.", "As before."):
        await session.submit_turn(f"{opening} {advice} Let us move on to the rollout.")
    await tell_the_ports(session)
    await session.submit_turn("How should we word the postmortem so people share what they did?")
    (block,) = recalled_blocks(model.turns[-1])
    assert block.count(advice) == 1


async def test_the_tool_answers_with_the_sentence_that_matches_not_its_neighbours(
    make_session: MakeSession,
) -> None:
    # Each hit shares the tool's room; a whole message cut to its share could lose the
    # very sentence asked for.
    model = Model()
    answers: list[str] = []

    def respond(request: LlmRequest) -> str | LlmResponse:
        last = request.messages[-1]
        if request.purpose != "summary" and last.role == "user" and "Who owns" in last.text:
            call = ToolUseBlock("r1", RECALL_TOOL_NAME, {"query": "dashboards module"})
            return LlmResponse(Message.assistant("", [call]), stop_reason="tool_use")
        if request.purpose != "summary" and last.role == "tool":
            answers.append(last.text)
        return model(request)

    session = make_session(
        MockProvider(responder=respond), summary=config("tool"), mode=FocusedConfig()
    )
    await session.submit_turn(
        "Owners for the sprint: the help center module is owned by Chloe Holm. The "
        "dashboards module is owned by Aiko Keller. The onboarding module is owned by "
        "Dana Ferreira. " + "The rest of the sprint notes are routine. " * 30
    )
    await tell_the_ports(session)
    context = "\n".join(m.text for m in (await session.get_slot()).load_messages())
    assert "Aiko Keller" not in context, "the owners are still in the context"
    await session.submit_turn("Who owns the dashboards module?")
    (answer,) = answers
    assert "The dashboards module is owned by Aiko Keller." in answer
    assert "Chloe Holm" not in answer and "routine" not in answer


async def test_a_system_summary_still_recalls_into_the_users_message(
    make_session: MakeSession,
) -> None:
    model = Model()
    session = make_session(
        MockProvider(responder=model),
        summary=config("auto"),
        mode=FocusedConfig(summary_role="system"),
    )
    await tell_the_ports(session)
    await session.submit_turn("Which port does the ledger service use?")
    sent = model.turns[-1].messages
    assert sent[-1].role == "user" and sent[-1].text.startswith(RECALL_LABEL)
    assert "ledger service listens on port 8444" in sent[-1].text
    assert not [m for m in sent[:-1] if RECALL_LABEL in m.text]


async def test_a_resumed_session_recalls_from_its_stored_history(
    tmp_path: Path, make_session: MakeSession
) -> None:
    path = tmp_path / "resumed.db"
    async with SqliteStore(path) as first_store:
        first = make_session(
            MockProvider(responder=Model()),
            summary=config("auto"),
            store=first_store,
            mode=FocusedConfig(),
        )
        await tell_the_ports(first)
    model = Model()
    async with SqliteStore(path) as second_store:
        second = make_session(
            MockProvider(responder=model),
            summary=config("auto"),
            store=second_store,
            mode=FocusedConfig(),
        )
        await second.submit_turn("Which port does the mailer service use?")
    assert "mailer service listens on port 8443" in recalled_blocks(model.turns[-1])[0]


async def test_recall_never_returns_another_sessions_messages(make_session: MakeSession) -> None:
    store = InMemoryStore()
    other = make_session(
        MockProvider(responder=Model()),
        summary=config("auto"),
        store=store,
        session_id="other",
        mode=FocusedConfig(),
    )
    await tell_the_ports(other)
    model = Model()
    mine = make_session(
        MockProvider(responder=model),
        summary=config("auto"),
        store=store,
        session_id="mine",
        mode=FocusedConfig(),
    )
    for filler in range(12):
        await mine.submit_turn(f"Rollout checklist item {filler} is done.")
    await mine.submit_turn("Which port does the ledger service use?")
    assert all("8444" not in block for block in recalled_blocks(model.turns[-1]))


async def test_a_recalled_block_never_pushes_a_request_over_the_window(
    make_session: MakeSession,
) -> None:
    server = StrictServer(2000, ratio=1.0)
    session = make_session(
        server.provider,
        summary=config("auto", recall_tokens=1900, recall_limit=10),
        mode=FocusedConfig(),
    )
    for number, service in enumerate(SERVICES):
        long = " ".join(f"{service} detail {n} port {8440 + number}." for n in range(40))
        await session.submit_turn(f"Note: {long}")
    for filler in range(4):
        await session.submit_turn(f"Moving on to checklist item {filler}.")
    await session.submit_turn("Which port and detail does the ledger service use?")
    last = [call for call in server.provider.calls if call.purpose != "summary"][-1]
    assert "ledger detail" in recalled_blocks(last)[0]  # a block, sized to the room left
    assert server.over_budget == []


async def test_hook_after_recall(make_session: MakeSession) -> None:
    """Every recall is seen by the after_recall hook: the automatic ones, the tool's."""
    seen: list[RecallInfo] = []

    class Watcher:
        @hookimpl(optionalhook=True)
        def after_recall(self, ctx: TurnContext, recall: RecallInfo) -> None:
            seen.append(recall)

    model = Model(query="ledger port")
    session = make_session(
        MockProvider(responder=model), summary=config("both"), mode=FocusedConfig()
    )
    session.bundle.plugin_manager.register(Watcher())
    await tell_the_ports(session)
    assert seen and {recall.way for recall in seen} == {"auto"}  # a search every turn
    assert all(recall.turn_index > 0 for recall in seen)  # none before the first summary
    await session.submit_turn("Which port does the ledger service use?")
    ways = {recall.way: recall for recall in seen if recall.turn_index == 12}
    assert ways["auto"].query == "Which port does the ledger service use?"
    assert ways["tool"].query == "ledger port"
    for recall in ways.values():
        assert recall.found and recall.tokens > 0 and recall.slot_id == "default"


async def test_recall_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="recall"):
        SummaryConfig(recall="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="recall_tokens"):
        SummaryConfig(recall_tokens=0)
    assert SummaryConfig(max_context_tokens=32_000).recall_room == 2_000
    assert json.loads(json.dumps(SummaryConfig(recall="both").recall)) == "both"
