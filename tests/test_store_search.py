"""Searching a session's stored messages: the same results on memory, SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentcore import Message
from agentcore.errors import StoreError
from agentcore.messages import ToolUseBlock
from agentcore.stores import InMemoryStore, MemoryStore, SqliteStore
from agentcore.stores.base import MessageAppend, SessionState, StoreWrite
from agentcore.stores.search import SearchableStore

if TYPE_CHECKING:
    from conftest import StoreEngine

SERVICES = ["auth", "billing", "search", "mailer", "ledger", "gateway", "cache", "queue"]


@pytest.fixture
async def store(store_engine: StoreEngine) -> AsyncIterator[MemoryStore]:
    """A store of each engine (memory, SQLite, PostgreSQL) on a fresh database."""
    opened = store_engine.open()
    try:
        yield opened
    finally:
        await opened.close()


def same_pattern_history() -> list[Message]:
    """Eight services with eight ports, then chatter: facts of one pattern, different subjects."""
    history = []
    for number, service in enumerate(SERVICES):
        history.append(Message.user(f"The {service} service listens on port {8440 + number}."))
        history.append(Message.assistant(f"Noted: {service} is on port {8440 + number}."))
    history.append(Message.user("Let us move on to the deployment checklist."))
    return history


async def write(
    store: MemoryStore, session_id: str, messages: list[Message], start: int = 0
) -> None:
    await store.write(StoreWrite(session_id, appends={"main": MessageAppend(start, messages)}))


def searchable(store: MemoryStore) -> SearchableStore:
    assert isinstance(store, SearchableStore)
    return store


async def test_every_store_engine_is_searchable(store: MemoryStore) -> None:
    assert isinstance(store, SearchableStore)


async def test_a_fact_is_found_first_among_facts_of_the_same_pattern(store: MemoryStore) -> None:
    await write(store, "s", same_pattern_history())
    hits = await searchable(store).search_messages("s", "Which port does the ledger service use?")
    assert hits, "nothing found"
    assert "ledger" in hits[0].message.text
    assert (hits[0].slot_id, hits[0].message) == ("main", same_pattern_history()[hits[0].index])
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


async def test_a_hit_names_the_turn_that_wrote_it(store: MemoryStore) -> None:
    await write(store, "s", [Message.user("imported: the ledger is on port 8444")])
    for turn in range(3):
        pair = [Message.user(f"turn {turn}: ledger note {turn}"), Message.assistant("ok")]
        await store.write(
            StoreWrite(
                "s",
                state=SessionState(turn_index=turn + 1),
                appends={"main": MessageAppend(1 + 2 * turn, pair)},
                turn_id=f"t{turn}",
            )
        )
    hits = await searchable(store).search_messages("s", "ledger", limit=10)
    assert {hit.index: hit.turn_index for hit in hits} == {0: None, 1: 0, 3: 1, 5: 2}


async def test_chinese_is_found_by_its_characters(store: MemoryStore) -> None:
    await write(
        store,
        "s",
        [
            Message.user("数据库用 PostgreSQL。"),
            Message.user("预算现在是15万元。"),
            Message.assistant("好的，我记下了。"),
        ],
    )
    hits = await searchable(store).search_messages("s", "预算是多少？")
    assert [hit.index for hit in hits] == [1]


async def test_case_and_accents_do_not_matter(store: MemoryStore) -> None:
    await write(
        store, "s", [Message.user("Le déploiement de l'État est prévu."), Message.user("x")]
    )
    hits = await searchable(store).search_messages("s", "DEPLOIEMENT etat")
    assert [hit.index for hit in hits] == [0]


async def test_tool_results_and_tool_names_are_searchable(store: MemoryStore) -> None:
    call = Message(
        "assistant",
        [ToolUseBlock("call-1", "read_config", {"path": "/etc/harbor/registry.yml", "lines": 40})],
    )
    result = Message.tool_result("call-1", "registry_port: 5043\nstorage: s3://harbor-blobs")
    await write(store, "s", [Message.user("check the registry"), call, result])
    found = searchable(store)
    assert (await found.search_messages("s", "harbor-blobs"))[0].index == 2
    assert [hit.index for hit in await found.search_messages("s", "read_config")] == [1]
    # A call's arguments are not indexed: its result holds what it found.
    assert 1 not in [hit.index for hit in await found.search_messages("s", "etc yml")]


async def test_another_sessions_messages_are_never_returned(store: MemoryStore) -> None:
    await write(store, "mine", [Message.user("the billing service is on port 8443")])
    await write(store, "theirs", [Message.user("billing billing billing port 9999")] * 5)
    hits = await searchable(store).search_messages("mine", "billing port", limit=10)
    assert [hit.message.text for hit in hits] == ["the billing service is on port 8443"]
    assert await searchable(store).search_messages("nobody", "billing port") == []


async def test_a_search_keeps_to_a_slot_and_below_an_index(store: MemoryStore) -> None:
    await write(store, "s", [Message.user(f"release note {n}: gateway timeout") for n in range(6)])
    await store.write(
        StoreWrite("s", appends={"other": MessageAppend(0, [Message.user("gateway timeout")])})
    )
    found = searchable(store)
    everywhere = await found.search_messages("s", "gateway timeout", limit=10)
    assert {hit.slot_id for hit in everywhere} == {"main", "other"}
    below = await found.search_messages("s", "gateway timeout", slot_id="main", before=3, limit=10)
    assert sorted(hit.index for hit in below) == [0, 1, 2]
    assert {hit.slot_id for hit in below} == {"main"}
    newest_first = await found.search_messages("s", "gateway", slot_id="main", limit=2)
    assert [hit.index for hit in newest_first] == [5, 4]  # equal scores: the newest first


async def test_a_query_without_content_words_finds_nothing(store: MemoryStore) -> None:
    await write(store, "s", same_pattern_history())
    assert await searchable(store).search_messages("s", "what is it? and the") == []
    assert await searchable(store).search_messages("s", "") == []


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"query": 3}, "query string"),
        ({"before": 2}, "before= needs a slot_id"),
        ({"slot_id": "main", "before": -1}, "before >= 0"),
        ({"limit": 0}, "limit from 1 to 100"),
        ({"limit": 101}, "limit from 1 to 100"),
    ],
)
async def test_bad_search_arguments_are_named(
    store: MemoryStore, arguments: dict[str, object], named: str
) -> None:
    arguments = dict(arguments)  # the parameter is shared by every engine's run
    query = arguments.pop("query", "billing")
    with pytest.raises(StoreError, match=named):
        await searchable(store).search_messages("s", query, **arguments)  # type: ignore[arg-type]


async def test_a_deleted_session_is_found_no_more(store_engine: StoreEngine) -> None:
    store = store_engine.open()
    try:
        await write(store, "s", same_pattern_history())
        await write(store, "kept", same_pattern_history())
        assert await store.delete_session("s")
        assert await searchable(store).search_messages("s", "ledger") == []
        assert len(await searchable(store).search_messages("kept", "ledger")) == 2
    finally:
        await store.close()


async def test_a_reopened_store_still_finds_what_was_written(store_engine: StoreEngine) -> None:
    if not store_engine.persistent:
        pytest.skip("the in-memory store keeps nothing across instances")
    first = store_engine.open()
    try:
        await write(first, "s", same_pattern_history())
    finally:
        await first.close()
    second = store_engine.open()
    try:
        hits = await searchable(second).search_messages("s", "mailer port")
        assert "mailer" in hits[0].message.text
    finally:
        await second.close()


_WORDS = st.sampled_from(
    ["port", "ports", "billing", "auth", "8443", "v2", "预算", "万元", "deploy", "deployment"]
)
_TEXTS = st.lists(st.lists(_WORDS, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=8)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=_TEXTS, query=st.lists(_WORDS, min_size=1, max_size=3).map(" ".join))
async def test_every_engine_finds_the_same_messages(
    tmp_path: Path, texts: list[str], query: str
) -> None:
    # The in-memory search is the reference: SQLite's FTS5 finds exactly the same messages.
    memory, path = InMemoryStore(), tmp_path / f"{abs(hash((tuple(texts), query)))}.db"
    messages = [Message.user(text) for text in texts]
    async with SqliteStore(path) as sqlite:
        for store in (memory, sqlite):
            await write(store, "s", messages)
        expected = {hit.index for hit in await memory.search_messages("s", query, limit=100)}
        found = {hit.index for hit in await sqlite.search_messages("s", query, limit=100)}
    assert found == expected


async def test_postgres_finds_what_the_in_memory_search_finds(postgres_dsn: str) -> None:
    pytest.importorskip("psycopg")
    from agentcore.stores import PostgresStore

    texts = ["port 8443 billing", "ports of auth", "预算 万元", "deployment v2", "deploy now", "x"]
    messages = [Message.user(text) for text in texts]
    memory = InMemoryStore()
    await write(memory, "s", messages)
    async with PostgresStore(postgres_dsn) as postgres:
        await write(postgres, "s", messages)
        for query in ["port", "deploy", "预算", "v2 auth", "billing 万元 ports"]:
            expected = {hit.index for hit in await memory.search_messages("s", query, limit=100)}
            found = {hit.index for hit in await postgres.search_messages("s", query, limit=100)}
            assert found == expected, query


# -- an older file is indexed once, in batches, and resumes where it stopped ---------------


def _version_4_file(path: Path, bodies: list[str]) -> None:
    from agentcore.stores import _sqlite_schema

    with sqlite3.connect(path) as raw:
        for step in _sqlite_schema.MIGRATIONS[:4]:
            for statement in step:
                raw.execute(statement)
        raw.execute("INSERT INTO schema_version VALUES (4)")
        raw.execute("PRAGMA user_version = 4")
        raw.execute("INSERT INTO sessions VALUES ('s', NULL)")
        raw.executemany("INSERT INTO messages VALUES ('s', 'main', ?, ?)", list(enumerate(bodies)))
    raw.close()


def _body(text: str) -> str:
    return json.dumps({"role": "user", "content": [{"text": text, "type": "text"}]})


async def test_an_older_sqlite_file_is_indexed_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "v4.db"
    _version_4_file(path, [_body(f"note {n} about topic{n}") for n in range(50)])
    async with SqliteStore(path) as store:
        hits = await store.search_messages("s", "topic37")
        assert [hit.index for hit in hits] == [37]
        await write(store, "s", [Message.user("topic37 again")], start=50)
        assert {hit.index for hit in await store.search_messages("s", "topic37")} == {37, 50}


async def test_an_interrupted_catch_up_goes_on_at_the_next_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcore.stores import _search_text, _sqlite_search

    path = tmp_path / "v4.db"
    _version_4_file(path, [_body(f"topic{n} words") for n in range(25)])
    monkeypatch.setattr(_sqlite_search, "CATCH_UP_BATCH", 10)
    calls = 0
    real = _search_text.search_document

    def fail_in_the_third_batch(message: Message) -> str:
        nonlocal calls
        calls += 1
        if calls > 20:
            raise KeyboardInterrupt  # the process stopped
        return real(message)

    monkeypatch.setattr(_sqlite_search, "search_document", fail_in_the_third_batch)
    with pytest.raises(KeyboardInterrupt):
        SqliteStore(path)
    with sqlite3.connect(path) as raw:  # two batches kept, nothing half-written
        assert raw.execute("SELECT count(*) FROM message_search").fetchone() == (20,)
        assert raw.execute("SELECT indexed FROM search_mark").fetchone() == (20,)
    raw.close()
    monkeypatch.setattr(_sqlite_search, "search_document", real)
    async with SqliteStore(path) as store:
        for n in (3, 15, 24):
            assert [hit.index for hit in await store.search_messages("s", f"topic{n}")] == [n]
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM message_search").fetchone() == (25,)
        assert raw.execute("SELECT indexed FROM search_mark").fetchone() == (25,)
    raw.close()


async def test_an_older_postgres_schema_is_indexed_when_set_up(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    psycopg = pytest.importorskip("psycopg")
    from agentcore.stores import PostgresStore, _pg_pool, _pg_schema, _pg_search

    full = (_pg_schema._MIGRATIONS, _pg_schema.SCHEMA_VERSION)
    monkeypatch.setattr(_pg_schema, "_MIGRATIONS", full[0][:5])
    monkeypatch.setattr(_pg_schema, "SCHEMA_VERSION", 5)
    monkeypatch.setattr(_pg_pool, "backfill", lambda conn, where: asyncio.sleep(0))
    async with PostgresStore(postgres_dsn) as old:
        await old.check_session("s")  # sets up the version 5 tables
    async with await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True) as raw:
        await raw.execute("INSERT INTO agentcore_sessions VALUES ('s', NULL)")
        await raw.execute("INSERT INTO agentcore_slots (session_id, slot_id) VALUES ('s', 'main')")
        for n in range(7):
            await raw.execute(
                "INSERT INTO agentcore_messages VALUES ('s', 'main', %s, %s)",
                (n, _body(f"topic{n} words")),
            )
        await raw.execute("UPDATE agentcore_slots SET message_count = 7")
    monkeypatch.setattr(_pg_schema, "_MIGRATIONS", full[0])
    monkeypatch.setattr(_pg_schema, "SCHEMA_VERSION", full[1])
    monkeypatch.setattr(_pg_pool, "backfill", _pg_search.backfill)
    monkeypatch.setattr(_pg_search, "BACKFILL_BATCH", 3)
    async with PostgresStore(postgres_dsn) as new:
        assert [hit.index for hit in await new.search_messages("s", "topic5")] == [5]
        assert len(await new.search_messages("s", "words", limit=20)) == 7
