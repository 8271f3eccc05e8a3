"""What is specific to PostgresStore: schema versions, pools, connections, write cost.

The store contract itself is tested for every engine in test_stores.py.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from agentcore.errors import ConfigError, CorruptDataError, StoreError
from agentcore.messages import Message
from agentcore.stores import MessageAppend, SessionState, StoreWrite

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool
else:
    psycopg = pytest.importorskip("psycopg")
    psycopg_pool = pytest.importorskip("psycopg_pool")

from agentcore.stores import PostgresStore
from agentcore.stores import _pg_schema as postgres_module


def msgs(n: int, prefix: str = "m") -> list[Message]:
    return [Message.user(f"{prefix}{i}") for i in range(n)]


@pytest.fixture
def raw(postgres_dsn: str) -> Iterator[Any]:
    """A plain psycopg connection on the test's schema, for looking under the store."""
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        yield conn


@pytest.fixture
async def store(postgres_dsn: str) -> AsyncIterator[PostgresStore]:
    async with PostgresStore(postgres_dsn) as made:
        yield made


# -- construction and bad input ----------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "names"),
    [
        (42, "not int"),
        (None, "not NoneType"),
        (b"postgresql://localhost/db", "not bytes"),
        ("", "empty string"),
        ("   ", "empty string"),
        ("host=localhost port", "cannot parse its DSN"),
        ("postgresql://user:secret@host/db?nosuchoption=1", "nosuchoption"),
        ("postgresql://user:secret@[host/db", "cannot parse its DSN"),
        ("host=h password=secret port", "cannot parse its DSN"),
        ("host=h password='sec ret' port", "cannot parse its DSN"),
    ],
)
def test_bad_dsn_is_a_config_error(given: Any, names: str) -> None:
    with pytest.raises(ConfigError) as info:
        PostgresStore(given)
    assert names in str(info.value)
    assert "secret" not in str(info.value)
    assert "sec ret" not in str(info.value)


def test_a_sync_pool_is_refused() -> None:
    pool = psycopg_pool.ConnectionPool("host=/nonexistent", open=False)
    with pytest.raises(ConfigError, match="AsyncConnectionPool"):
        PostgresStore(pool)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "options",
    [
        {"max_size": 0},
        {"max_size": True},
        {"max_size": 2.5},
        {"timeout": 0},
        {"timeout": -1},
        {"timeout": float("nan")},
        {"timeout": float("inf")},
        {"timeout": "5"},
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=next(iter(options))):
        PostgresStore("postgresql://localhost/db", **options)


async def test_unreachable_server_is_a_store_error_without_the_password(tmp_path: Any) -> None:
    dsn = f"postgresql://someone:s3cret-pw@/db?host={tmp_path}"
    store = PostgresStore(dsn, timeout=2)
    try:
        with pytest.raises(StoreError) as info:
            await store.list_sessions()
        message = str(info.value)
        assert "cannot connect" in message
        assert str(tmp_path) in message
        assert "s3cret-pw" not in message
        assert "s3cret-pw" not in repr(store)
        # The next call tries again rather than reporting a stale failure.
        with pytest.raises(StoreError, match="cannot connect"):
            await store.load_state("s")
    finally:
        await store.close()


async def test_closed_store_refuses_calls_before_first_use(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    await store.close()
    with pytest.raises(StoreError, match="store is closed"):
        await store.list_sessions()
    with pytest.raises(StoreError, match="store is closed"):
        await store.__aenter__()


# -- the schema and its version -----------------------------------------------------------


async def test_schema_is_created_on_first_use_with_its_version(
    store: PostgresStore, raw: Any
) -> None:
    def tables() -> set[str]:
        rows = raw.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
        return {name for (name,) in rows}

    assert tables() == set()
    assert await store.list_sessions() == []
    assert tables() == {
        "agentcore_schema_version",
        "agentcore_sessions",
        "agentcore_slots",
        "agentcore_messages",
        "agentcore_session_data",
        "agentcore_turns",
        "agentcore_leases",
    }
    version = raw.execute("SELECT version FROM agentcore_schema_version").fetchall()
    assert version == [(postgres_module.SCHEMA_VERSION,)]


async def test_a_store_that_may_not_create_refuses_a_database_without_tables(
    postgres_dsn: str, raw: Any
) -> None:
    async with PostgresStore(postgres_dsn, create=False) as reader:
        with pytest.raises(StoreError, match="holds no agentcore tables"):
            await reader.list_sessions()
    assert raw.execute(
        "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
    ).fetchone() == (0,)
    async with PostgresStore(postgres_dsn) as writer:
        await writer.write(StoreWrite("s", data={"k": 1}))
    async with PostgresStore(postgres_dsn, create=False) as reader:
        assert await reader.get_data("s", "k") == 1


async def test_many_stores_starting_at_once_create_the_schema_once(postgres_dsn: str) -> None:
    stores = [PostgresStore(postgres_dsn) for _ in range(6)]
    try:
        await asyncio.gather(
            *(
                made.write(StoreWrite(f"s{i}", appends={"main": MessageAppend(0, msgs(1))}))
                for i, made in enumerate(stores)
            )
        )
        assert await stores[0].list_sessions() == [f"s{i}" for i in range(6)]
    finally:
        for made in stores:
            await made.close()


async def test_a_newer_schema_is_refused(postgres_dsn: str, raw: Any) -> None:
    async with PostgresStore(postgres_dsn) as first:
        await first.write(StoreWrite("s", data={"k": 1}))
    raw.execute("UPDATE agentcore_schema_version SET version = version + 1")
    async with PostgresStore(postgres_dsn) as second:
        with pytest.raises(StoreError, match=r"newer.*upgrade agentcore"):
            await second.get_data("s", "k")


async def test_an_emptied_version_table_is_reported(postgres_dsn: str, raw: Any) -> None:
    async with PostgresStore(postgres_dsn) as first:
        await first.list_sessions()
    raw.execute("DELETE FROM agentcore_schema_version")
    async with PostgresStore(postgres_dsn) as second:
        with pytest.raises(StoreError, match="agentcore_schema_version table is empty"):
            await second.list_sessions()


async def test_an_older_schema_is_migrated_on_first_use(
    postgres_dsn: str, raw: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release that adds a migration step brings a stored database up to date, data kept."""
    async with PostgresStore(postgres_dsn) as old:
        await old.write(
            StoreWrite(
                "s",
                state=SessionState(3),
                appends={"main": MessageAppend(0, msgs(2))},
                data={"k": "v"},
            )
        )
    current = postgres_module.SCHEMA_VERSION
    step = ("ALTER TABLE agentcore_sessions ADD COLUMN note text DEFAULT 'migrated'",)
    monkeypatch.setattr(postgres_module, "_MIGRATIONS", (*postgres_module._MIGRATIONS, step))
    monkeypatch.setattr(postgres_module, "SCHEMA_VERSION", current + 1)
    async with PostgresStore(postgres_dsn) as new:
        assert await new.load_state("s") == SessionState(3)
        assert await new.load_messages("s", "main") == msgs(2)
        await new.write(StoreWrite("s", appends={"main": MessageAppend(2, msgs(1, "n"))}))
        assert await new.count_messages("s", "main") == 3
    assert raw.execute("SELECT version FROM agentcore_schema_version").fetchall() == [
        (current + 1,)
    ]
    assert raw.execute("SELECT note FROM agentcore_sessions").fetchall() == [("migrated",)]


async def test_a_failed_migration_changes_nothing(
    postgres_dsn: str, raw: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with PostgresStore(postgres_dsn) as old:
        await old.write(StoreWrite("s", data={"k": "v"}))
    current = postgres_module.SCHEMA_VERSION
    step = (
        "ALTER TABLE agentcore_sessions ADD COLUMN note text",
        "SELECT no_such_function()",
    )
    monkeypatch.setattr(postgres_module, "_MIGRATIONS", (*postgres_module._MIGRATIONS, step))
    monkeypatch.setattr(postgres_module, "SCHEMA_VERSION", current + 1)
    async with PostgresStore(postgres_dsn) as new:
        with pytest.raises(StoreError, match=r"cannot set up.*no_such_function"):
            await new.list_sessions()
    assert raw.execute("SELECT version FROM agentcore_schema_version").fetchall() == [(current,)]
    columns = raw.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = 'agentcore_sessions'"
    ).fetchall()
    assert {name for (name,) in columns} == {"session_id", "state"}


async def test_a_non_utf8_database_is_refused(postgres_server_dsn: str) -> None:
    from psycopg.conninfo import make_conninfo

    # A name of its own: test runs in parallel (tox run-parallel) share the server.
    name = f"agentcore_test_latin1_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server_dsn, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        try:
            admin.execute(
                f"CREATE DATABASE {name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' "
                "TEMPLATE template0"
            )
        except psycopg.errors.InsufficientPrivilege:
            pytest.skip("the test role may not create databases")
    try:
        async with PostgresStore(make_conninfo(postgres_server_dsn, dbname=name)) as store:
            with pytest.raises(StoreError, match=r"LATIN1.*needs a UTF8 database"):
                await store.list_sessions()
    finally:
        with psycopg.connect(postgres_server_dsn, autocommit=True) as admin:
            # FORCE: a pooler in front of the server may still hold a connection to it.
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


# -- pools and connections ------------------------------------------------------------------


async def test_a_given_pool_is_used_and_left_open(postgres_dsn: str) -> None:
    pool = psycopg_pool.AsyncConnectionPool(postgres_dsn, min_size=1, max_size=2, open=False)
    await pool.open()
    try:
        async with PostgresStore(pool) as store:
            assert store.pool is pool
            await store.write(StoreWrite("s", appends={"main": MessageAppend(0, msgs(2))}))
            assert await store.count_messages("s", "main") == 2
        assert not pool.closed
        async with pool.connection() as conn:
            cursor = await conn.execute("SELECT count(*) FROM agentcore_messages")
            assert await cursor.fetchone() == (2,)
    finally:
        await pool.close()


async def test_a_pool_not_in_autocommit_mode_works_too(postgres_dsn: str) -> None:
    pool = psycopg_pool.AsyncConnectionPool(postgres_dsn, min_size=1, max_size=1, open=False)
    try:
        async with PostgresStore(pool) as store:
            await store.write(StoreWrite("s", data={"k": 1}, state=SessionState(1)))
            assert await store.get_data("s", "k") == 1
            assert await store.load_state("s") == SessionState(1)
    finally:
        await pool.close()


@pytest.mark.direct_postgres("the backend it kills is the pooler's; the client connection lives on")
async def test_a_connection_killed_by_the_server_loses_nothing(postgres_dsn: str, raw: Any) -> None:
    """The server ends every connection of the store (as on a restart or failover)."""
    from psycopg.conninfo import make_conninfo

    # Only this store's connections: test runs in parallel share the server.
    name = f"agentcore-kill-{uuid.uuid4().hex[:12]}"
    store = PostgresStore(make_conninfo(postgres_dsn, application_name=name))
    await store.write(StoreWrite("s", appends={"main": MessageAppend(0, msgs(2))}))
    killed = raw.execute(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
        (name,),
    ).fetchone()
    assert killed[0] >= 1
    # The pool's connections are now broken: a call may fail once, never half-write.
    for attempt in range(3):
        try:
            await store.write(StoreWrite("s", appends={"main": MessageAppend(2, msgs(1, "n"))}))
            break
        except StoreError as exc:
            assert attempt < 2, exc
    assert await store.load_messages("s", "main") == msgs(2) + msgs(1, "n")
    await store.close()


# -- stored data the store cannot use ------------------------------------------------------


async def test_corrupt_rows_are_named(store: PostgresStore, raw: Any) -> None:
    await store.write(
        StoreWrite(
            "sess",
            state=SessionState(1),
            slot_configs={"aux": {"v": 1}},
            appends={"main": MessageAppend(0, msgs(6))},
            data={"notes": [1], "plan": "x"},
        )
    )
    raw.execute("UPDATE agentcore_session_data SET value = '{oops' WHERE key = 'notes'")
    raw.execute("UPDATE agentcore_messages SET body = '[1, 2]' WHERE idx = 3")
    raw.execute("UPDATE agentcore_slots SET config = '[1]' WHERE slot_id = 'aux'")
    with pytest.raises(CorruptDataError, match=r"data 'notes' of session 'sess'"):
        await store.get_data("sess", "notes")
    assert await store.get_data("sess", "plan") == "x"
    with pytest.raises(CorruptDataError, match="message 3 of slot 'main'"):
        await store.load_messages("sess", "main")
    assert await store.load_messages("sess", "main", start=4) == msgs(6)[4:]
    with pytest.raises(CorruptDataError, match="slot 'aux'"):
        await store.load_slot_configs("sess")
    raw.execute("DELETE FROM agentcore_messages WHERE idx = 2")
    with pytest.raises(CorruptDataError, match=r"message 2 of slot 'main'.*missing"):
        await store.load_messages("sess", "main")


# -- cost of a write -------------------------------------------------------------------------


class _TracingCursor(psycopg.AsyncCursor[Any]):
    """Records each statement the store runs."""

    trace: list[str] | None = None

    async def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        if self.trace is not None:
            self.trace.append(str(query))
        return await super().execute(query, params, **kwargs)

    async def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> None:
        if self.trace is not None:
            self.trace.append(str(query))
        await super().executemany(query, params_seq, **kwargs)


_ROWS_OF_LAST_WRITE = """
    SELECT (SELECT count(*) FROM agentcore_sessions WHERE xmin = w.x)
         + (SELECT count(*) FROM agentcore_slots WHERE xmin = w.x)
         + (SELECT count(*) FROM agentcore_messages WHERE xmin = w.x)
         + (SELECT count(*) FROM agentcore_session_data WHERE xmin = w.x)
    FROM (SELECT xmin AS x FROM agentcore_sessions WHERE session_id = %s) AS w
"""


async def test_write_cost_does_not_depend_on_history_length(postgres_dsn: str, raw: Any) -> None:
    """Appending to a long history runs the same statements and touches the same rows."""

    async def configure(conn: Any) -> None:
        conn.cursor_factory = _TracingCursor

    pool = psycopg_pool.AsyncConnectionPool(
        postgres_dsn, min_size=1, max_size=1, open=False, configure=configure
    )
    try:
        async with PostgresStore(pool) as store:
            for session_id, size in (("short", 10), ("long", 10_000)):
                await store.write(
                    StoreWrite(session_id, appends={"main": MessageAppend(0, msgs(size))})
                )

            async def measure(session_id: str, start: int) -> tuple[list[str], int]:
                trace: list[str] = []
                _TracingCursor.trace = trace
                try:
                    await store.write(
                        StoreWrite(
                            session_id,
                            state=SessionState(turn_index=start),
                            slot_configs={"main": {"kind": "window", "limit": 100}},
                            appends={"main": MessageAppend(start, msgs(2, "new"))},
                        )
                    )
                finally:
                    _TracingCursor.trace = None
                # Rows the write's transaction inserted or updated carry its id as xmin.
                rows = raw.execute(_ROWS_OF_LAST_WRITE, (session_id,)).fetchone()[0]
                return trace, rows

            short_statements, short_rows = await measure("short", 10)
            long_statements, long_rows = await measure("long", 10_000)
            assert await store.count_messages("long", "main") == 10_002
    finally:
        await pool.close()
    assert long_statements == short_statements
    # The session row, the slot row (count and config), two messages.
    assert long_rows == short_rows == 4
    assert not any("count(" in statement.lower() for statement in long_statements)
