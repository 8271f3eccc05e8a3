"""PostgreSQL under faults: backends killed under load, and a pool whose connections all died.

Every figure is printed (run with ``-s``); docs/scaling-out.md quotes them.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import uuid
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import attrs
import pytest

from agentcore.errors import DuplicateTurnError, StoreError
from agentcore.messages import Message
from agentcore.stores import MessageAppend, SessionState, StoreWrite

psycopg = pytest.importorskip("psycopg")

from agentcore.stores import PostgresStore  # noqa: E402

SESSIONS = 8
WRITES = 50
KILLS = 40
ATTEMPTS = 20
READ_ATTEMPTS = 200
"""Tries per write before the test gives up on the server (never reached when it is up)."""


@attrs.define
class Tally:
    """What the writers saw."""

    writes: int = 0
    errors: int = 0
    stored_errors: int = 0
    """Errors for writes that were in fact stored."""
    killed: int = 0
    resolved_stored: int = 0
    """Writes whose connection broke, found stored when read back (they returned normally)."""
    resolved_not_stored: int = 0


async def _app_store(postgres_dsn: str, **options: Any) -> tuple[PostgresStore, str]:
    from psycopg.conninfo import make_conninfo

    # Only this store's connections get killed: test runs in parallel share the server.
    name = f"agentcore-faults-{uuid.uuid4().hex[:12]}"
    return PostgresStore(make_conninfo(postgres_dsn, application_name=name), **options), name


async def _kill(admin: Any, name: str) -> int:
    cursor = await admin.execute(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
        (name,),
    )
    row = await cursor.fetchone()
    return int(row[0])


@pytest.fixture
async def admin(postgres_dsn: str) -> AsyncIterator[Any]:
    conn = await psycopg.AsyncConnection.connect(postgres_dsn, autocommit=True)
    try:
        yield conn
    finally:
        await conn.close()


async def _read(call: Any) -> Any:
    """A read retried while the killed connections are being replaced."""
    for attempt in range(READ_ATTEMPTS):
        try:
            return await call()
        except StoreError:
            if attempt == READ_ATTEMPTS - 1:
                raise
            await asyncio.sleep(0.05)


async def _writer(store: PostgresStore, session_id: str, tally: Tally, *, idempotent: bool) -> None:
    for k in range(WRITES):
        turn_id = f"{session_id}-{k}" if idempotent else None
        for _ in range(ATTEMPTS):
            count = await _read(partial(store.count_messages, session_id, "main"))
            body = [Message.user(f"{session_id} turn {k}"), Message.assistant(f"reply {k}")]
            tally.writes += 1
            try:
                await store.write(
                    StoreWrite(
                        session_id,
                        state=SessionState(turn_index=k + 1),
                        appends={"main": MessageAppend(count, body)},
                        turn_id=turn_id,
                    )
                )
                break
            except DuplicateTurnError:
                # An earlier try reported an error for a turn that was stored.
                tally.stored_errors += 1
                break
            except StoreError:
                tally.errors += 1
                if idempotent:
                    stored = await _read(partial(store.find_turn, session_id, turn_id or ""))
                else:
                    stored = await _read(partial(store.load_messages, session_id, "main", count))
                if stored:
                    tally.stored_errors += 1
                    break
        else:
            pytest.fail(f"write {k} of {session_id} failed {ATTEMPTS} times")


async def _run_with_kills(postgres_dsn: str, admin: Any, *, idempotent: bool) -> Tally:
    store, name = await _app_store(postgres_dsn, max_size=4)
    tally = Tally()
    prefix = "idempotent" if idempotent else "plain"
    rng = random.Random(21)
    try:
        await _read(store.list_sessions)
        writers = [
            asyncio.ensure_future(_writer(store, f"{prefix}{i}", tally, idempotent=idempotent))
            for i in range(SESSIONS)
        ]
        for _ in range(KILLS):
            if all(writer.done() for writer in writers):
                break
            await asyncio.sleep(rng.uniform(0.03, 0.12))
            tally.killed += await _kill(admin, name)
        await asyncio.wait_for(asyncio.gather(*writers), 120)
        for i in range(SESSIONS):
            history = await _read(partial(store.load_messages, f"{prefix}{i}", "main"))
            texts = [message.text for message in history[::2]]
            # Each turn once, in order: nothing was stored twice.
            assert texts == [f"{prefix}{i} turn {k}" for k in range(WRITES)], texts
    finally:
        await store.close()
    print(
        f"\n{'with' if idempotent else 'without'} turn ids: {tally.killed} backends killed, "
        f"{tally.writes} writes, {tally.errors} StoreErrors, "
        f"{tally.stored_errors} of them for writes that were stored"
    )
    return tally


@pytest.mark.direct_postgres("the backends it kills are the pooler's, not the clients'")
async def test_backend_kills_under_load_never_report_a_stored_turn_as_failed(
    postgres_dsn: str, admin: Any, caplog: pytest.LogCaptureFixture
) -> None:
    before = await _run_with_kills(postgres_dsn, admin, idempotent=False)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="agentcore.stores.postgres"):
        after = await _run_with_kills(postgres_dsn, admin, idempotent=True)
    read_back = [r.getMessage() for r in caplog.records if "read back:" in r.getMessage()]
    stored = sum(message.endswith(": stored") for message in read_back)
    retried = sum("trying again" in r.getMessage() for r in caplog.records)
    print(
        f"{retried} tries again after a broken connection; read back: {stored} stored, "
        f"{len(read_back) - stored} not stored"
    )
    assert after.stored_errors == 0
    assert before.killed > 0 and after.killed > 0


# -- a pool whose connections died ------------------------------------------------------------

RESTART_ENV = "AGENTCORE_TEST_POSTGRES_RESTART"
"""A shell command that restarts the test server (for example ``pg_ctl restart`` of its
cluster); the restart test runs only where it is set, since the server may be shared."""


async def _writes_after(
    postgres_dsn: str, fault: Any, *, check_connections: bool, writes: int = 12
) -> int:
    """How many of ``writes`` plain writes fail right after ``fault`` hit a full pool of 4."""
    store, name = await _app_store(postgres_dsn, max_size=4, check_connections=check_connections)
    try:
        await store.write(StoreWrite("s", data={"k": 0}))

        async def hold() -> None:
            async with store.pool.connection():
                await asyncio.sleep(0.2)

        await asyncio.gather(*(hold() for _ in range(4)))  # the pool now holds 4 connections
        await fault(name)
        failures = 0
        for k in range(writes):
            try:
                await store.write(StoreWrite("s", data={"k": k + 1}))  # no turn id: no retry
            except StoreError:
                failures += 1
        return failures
    finally:
        await store.close()


@pytest.mark.direct_postgres("the backends it kills are the pooler's, not the clients'")
async def test_a_checked_pool_serves_every_write_after_its_backends_died(
    postgres_dsn: str, admin: Any
) -> None:
    async def kill_all(name: str) -> None:
        # The pool's 4, and the store's change listener once it has connected.
        assert await _kill(admin, name) in (4, 5)

    unchecked = await _writes_after(postgres_dsn, kill_all, check_connections=False)
    checked = await _writes_after(postgres_dsn, kill_all, check_connections=True)
    print(
        f"\nafter every backend was killed: {unchecked} of 12 writes failed unchecked, "
        f"{checked} of 12 checked"
    )
    assert checked == 0
    assert unchecked > 0  # what the check is for


async def test_a_checked_pool_serves_every_write_after_a_server_restart(postgres_dsn: str) -> None:
    import os
    import subprocess

    command = os.environ.get(RESTART_ENV, "")
    if not command:
        pytest.skip(f"{RESTART_ENV} is not set")

    async def restart(name: str) -> None:
        await asyncio.to_thread(subprocess.run, command, shell=True, check=True, timeout=120)

    unchecked = await _writes_after(postgres_dsn, restart, check_connections=False)
    checked = await _writes_after(postgres_dsn, restart, check_connections=True)
    print(
        f"\nafter a server restart: {unchecked} of 12 writes failed unchecked, "
        f"{checked} of 12 checked"
    )
    assert checked == 0


@pytest.mark.parametrize(
    ("threshold", "prepares"),
    [
        (None, False),
        pytest.param(
            1,
            True,
            marks=pytest.mark.direct_postgres(
                "in transaction mode a statement prepared on one server connection is missing "
                "from the next one the pooler lends (what prepare_threshold=None is for)"
            ),
        ),
    ],
)
async def test_prepared_statements_can_be_turned_off(
    postgres_dsn: str, threshold: int | None, prepares: bool
) -> None:
    async with PostgresStore(postgres_dsn, max_size=1, prepare_threshold=threshold) as store:
        for k in range(8):
            await store.write(
                StoreWrite("s", appends={"main": MessageAppend(k, [Message.user("x")])})
            )
            assert await store.count_messages("s", "main") == k + 1
        async with store.pool.connection() as conn:
            cursor = await conn.execute("SELECT count(*) FROM pg_prepared_statements")
            row = await cursor.fetchone()
    assert row is not None
    assert (row[0] > 0) is prepares


def test_prepare_threshold_is_checked() -> None:
    for bad in (-1, 1.5, "5", True):
        with pytest.raises(Exception, match="prepare_threshold"):
            PostgresStore("postgresql://localhost/db", prepare_threshold=bad)  # type: ignore[arg-type]


# -- a write whose outcome cannot be read back -------------------------------------------------


class _FailingCursor(psycopg.AsyncCursor):  # type: ignore[misc,name-defined]
    """Fails like a lost connection (an error without SQLSTATE) at the statement storing a turn id.

    ``mode`` "once" fails that statement once; "down" fails it and every later statement,
    as a server that stays unreachable, until ``mode`` is cleared.
    """

    mode: str | None = None
    down = False

    async def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        if _FailingCursor.mode and "INSERT INTO agentcore_turns" in str(query):
            _FailingCursor.down = _FailingCursor.mode == "down"
            _FailingCursor.mode = None
            raise psycopg.OperationalError("no connection to the server (simulated)")
        if _FailingCursor.down:
            raise psycopg.OperationalError("no connection to the server (simulated)")
        return await super().execute(query, params, **kwargs)


async def _failing_pool(postgres_dsn: str) -> Any:
    from psycopg_pool import AsyncConnectionPool

    async def configure(conn: Any) -> None:
        conn.cursor_factory = _FailingCursor

    return AsyncConnectionPool(
        postgres_dsn, min_size=1, max_size=2, open=False, configure=configure
    )


async def test_a_write_whose_outcome_cannot_be_read_back_says_so(postgres_dsn: str) -> None:
    from agentcore.errors import WriteOutcomeUnknownError
    from agentcore.stores import StoredTurn

    pool = await _failing_pool(postgres_dsn)
    body = [Message.user("q"), Message.assistant("a")]
    try:
        async with PostgresStore(pool) as store:
            await store.list_sessions()
            _FailingCursor.mode = "down"
            started = time.monotonic()
            try:
                with pytest.raises(WriteOutcomeUnknownError, match=r"could not be read back"):
                    await store.write(
                        StoreWrite(
                            "s", appends={"main": MessageAppend(0, body)}, turn_id="t1", timeout=1
                        )
                    )
            finally:
                _FailingCursor.mode, _FailingCursor.down = None, False
            # The read-back was given RESOLVE_SECONDS (2 s), not more.
            assert time.monotonic() - started < 1 + 2 + 10
            # The server is back: the turn is not stored, and the same write stores it once.
            assert await store.find_turn("s", "t1") is None
            await store.write(
                StoreWrite("s", appends={"main": MessageAppend(0, body)}, turn_id="t1")
            )
            assert await store.find_turn("s", "t1") == StoredTurn("main", 0, 2, None)
    finally:
        await pool.close()


async def test_a_write_whose_connection_broke_is_tried_again_and_stored_once(
    postgres_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    pool = await _failing_pool(postgres_dsn)
    body = [Message.user("q"), Message.assistant("a")]
    try:
        async with PostgresStore(pool) as store:
            await store.list_sessions()
            _FailingCursor.mode = "once"
            try:
                with caplog.at_level(logging.WARNING, logger="agentcore.stores.postgres"):
                    await store.write(
                        StoreWrite("s", appends={"main": MessageAppend(0, body)}, turn_id="t1")
                    )
            finally:
                _FailingCursor.mode, _FailingCursor.down = None, False
            assert "trying again (1 of 2)" in caplog.text
            assert await store.load_messages("s", "main") == body
    finally:
        await pool.close()
