"""``python -m bench.pg_turn DSN``: what one turn costs a PostgreSQL server.

Runs turns of one session (no plugins, an instant model, two new messages a turn) on a
:class:`~agentcore.stores.PostgresStore` and prints, per turn: the statements the server
ran (from ``pg_stat_statements`` with ``track = all``, so the foreign-key checks the server
runs itself are counted too), the rows they wrote, the WAL bytes (a
``pg_current_wal_lsn()`` difference, so background writers add a little), and the median
turn time. It also says whether the server is durable (``fsync``, ``synchronous_commit``,
``full_page_writes``), since a server with them off writes and waits far less.

The server needs ``shared_preload_libraries = pg_stat_statements`` and
``pg_stat_statements.track = all``; the script creates the extension and a schema of its
own, and drops the schema at the end. ``--prepare-threshold none`` runs the store without
prepared statements (as behind PgBouncer in transaction mode); ``--admin DSN`` reads the
statistics over another DSN (the server itself, when DSN is a pooler's). Nothing here is
part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from typing import Any

WARMUP = 50
TURNS = 400


def _settings(admin: Any) -> dict[str, str]:
    names = ("fsync", "synchronous_commit", "full_page_writes", "server_version")
    return {name: admin.execute(f"SHOW {name}").fetchone()[0] for name in names}


async def run(dsn: str, admin_dsn: str, turns: int, prepare: int | None) -> None:
    """Measure ``turns`` turns on ``dsn``; print the figures."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    from agentcore import Agent, AgentBuilder, AgentSession
    from agentcore.stores import PostgresStore
    from bench.turn_floor import SYSTEM_PROMPT, InstantModel, user_text

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = psycopg.connect(admin_dsn, autocommit=True, prepare_threshold=None)
    admin.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    admin.execute(f'CREATE SCHEMA "{schema}"')
    admin.execute(f"ALTER ROLE CURRENT_USER SET search_path = {schema}")  # reaches pooled ones
    try:
        # A pooler passes no options: the role's search_path reaches the schema instead.
        store = PostgresStore(make_conninfo(dsn), prepare_threshold=prepare)
        bundle = AgentBuilder().provider(InstantModel()).store(store).load_plugins(False).build()
        session = AgentSession(Agent("bench", system_prompt=SYSTEM_PROMPT), "s", bundle)
        for index in range(WARMUP):
            await session.submit_turn(user_text(index))
        admin.execute("SELECT pg_stat_statements_reset()")
        lsn = admin.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        times = []
        for index in range(WARMUP, WARMUP + turns):
            start = time.perf_counter()
            await session.submit_turn(user_text(index))
            times.append(time.perf_counter() - start)
        wal = admin.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", (lsn,)).fetchone()[
            0
        ]
        rows = admin.execute(
            "SELECT toplevel, calls, rows, query FROM pg_stat_statements "
            "WHERE query NOT ILIKE '%%pg_stat_statements%%' "
            "AND query NOT ILIKE '%%pg_current_wal_lsn%%' ORDER BY calls DESC"
        ).fetchall()
        await session.aclose()
        await store.close()
        settings = _settings(admin)
    finally:
        admin.execute("ALTER ROLE CURRENT_USER RESET search_path")
        admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        admin.close()

    durable = all(settings[name] == "on" for name in ("fsync", "synchronous_commit"))
    print(
        f"PostgreSQL {settings['server_version']}: fsync {settings['fsync']}, "
        f"synchronous_commit {settings['synchronous_commit']}, full_page_writes "
        f"{settings['full_page_writes']} ({'durable' if durable else 'NOT durable'}); "
        f"prepare_threshold {prepare}; {turns} turns"
    )
    print("\n| statement | per turn | rows per turn | run by |\n|---|---:|---:|---|")
    total = nested = written = 0.0
    for toplevel, calls, count, query in rows:
        per_turn = calls / turns
        if per_turn < 0.05:
            continue
        total += per_turn
        if not toplevel:
            nested += per_turn
        if query.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
            written += count / turns
        shown = " ".join(query.split())
        shown = shown if len(shown) <= 90 else shown[:87] + "..."
        print(
            f"| `{shown}` | {per_turn:.1f} | {count / turns:.1f} | "
            f"{'the store' if toplevel else 'the server (nested)'} |"
        )
    print(f"\nstatements per turn: {total:.1f} ({nested:.1f} of them run by the server itself)")
    print(f"rows written per turn: {written:.1f}")
    print(f"WAL per turn: {float(wal) / turns:,.0f} bytes")
    print(f"median turn: {statistics.median(times) * 1000:.2f} ms")


def main() -> None:
    """Parse the arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dsn", help="where the store connects (the server, or a pooler)")
    parser.add_argument("--admin", help="the server itself, for the statistics (default: dsn)")
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--prepare-threshold", default="5", help="an int, or none")
    args = parser.parse_args()
    prepare = None if args.prepare_threshold.lower() == "none" else int(args.prepare_threshold)
    asyncio.run(run(args.dsn, args.admin or args.dsn, args.turns, prepare))


if __name__ == "__main__":
    main()
